// `host.redis-command` for the component: one command to the FalkorDB behind Graphiti, only at the
// allowed database and only FalkorDB's graph commands and PING, every other command refused unsent
// (one connection could otherwise flush or reconfigure the whole database). The password is the
// host's: it authenticates the connection and never reaches the component. The same rules and
// error cases as the wasmtime host shim (host-shim/src/database.rs); the Redis protocol's replies
// are read here (docs/decisions/falkordb-connection.md says why by hand).

import net from 'node:net';

export const CARRIED_COMMANDS = Object.freeze(['GRAPH.QUERY', 'GRAPH.RO_QUERY', 'GRAPH.DELETE', 'GRAPH.LIST', 'PING']);

/** The most values one reply may flatten to, as in the shim. */
const MAX_REPLY_VALUES = 1 << 20;
/** The most bytes of one reply kept. */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/**
 * `redis://[user@]host:port[/db]`, normalised as the shim does (host lower case, port 6379 when
 * none, database 0 left out). A URL holding a password is refused: it would be shown wherever the
 * URL is.
 * @param {string} url
 */
export function databaseOrigin(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'redis:') {
    throw new Error(`${JSON.stringify(url)}: scheme ${JSON.stringify(parsed.protocol.replace(/:$/, ''))} is not redis (TLS to the database is not carried yet)`);
  }
  if (parsed.password) {
    throw new Error(`${JSON.stringify(url.replace(/:[^:@/]*@/, ':***@'))} holds a password: give it as the database password instead, so that it is never shown with the URL`);
  }
  if (!parsed.hostname) throw new Error(`${JSON.stringify(url)} names no host`);
  const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : '';
  const db = parsed.pathname.replace(/^\/+|\/+$/g, '');
  return `redis://${user}${parsed.hostname.toLowerCase()}:${parsed.port || 6379}${db && db !== '0' ? `/${db}` : ''}`;
}

/** A command in the Redis protocol's request form. */
function encode(args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(arg);
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/**
 * One reply read from `buffer` at `at`, flattened in pre-order into `out` (WIT has no recursive
 * types); the offset after it, or -1 while the reply is incomplete.
 * @param {Buffer} buffer
 * @param {number} at
 * @param {Array<object>} out
 */
export function readReply(buffer, at, out) {
  const end = buffer.indexOf('\r\n', at);
  if (end < 0) return -1;
  const kind = String.fromCharCode(buffer[at]);
  const line = buffer.toString('utf8', at + 1, end);
  if (out.length >= MAX_REPLY_VALUES) throw { tag: 'transport', val: `the reply holds more than ${MAX_REPLY_VALUES} values` };
  switch (kind) {
    case '+':
      out.push({ tag: 'bytes', val: new Uint8Array(Buffer.from(line)) });
      return end + 2;
    case '-':
      out.push({ tag: 'error', val: line });
      return end + 2;
    case ':':
      out.push({ tag: 'integer', val: BigInt(line) });
      return end + 2;
    case '$': {
      const length = Number(line);
      if (length < 0) {
        out.push({ tag: 'nil' });
        return end + 2;
      }
      if (buffer.length < end + 2 + length + 2) return -1;
      out.push({ tag: 'bytes', val: new Uint8Array(buffer.subarray(end + 2, end + 2 + length)) });
      return end + 2 + length + 2;
    }
    case '*': {
      const count = Number(line);
      if (count < 0) {
        out.push({ tag: 'nil' });
        return end + 2;
      }
      out.push({ tag: 'array', val: count });
      let next = end + 2;
      for (let i = 0; i < count; i += 1) {
        next = readReply(buffer, next, out);
        if (next < 0) return -1;
      }
      return next;
    }
    default:
      throw { tag: 'transport', val: `an unreadable reply (it starts with ${JSON.stringify(kind)})` };
  }
}

/**
 * Sends `commands` one after the other on one new connection, each once the previous one's reply
 * is in, and resolves with each reply (flattened); an error reply ends the exchange there (a
 * refused AUTH: the command is never sent). The connection is closed afterwards. Rejects with a
 * WIT `redis-error`.
 */
function exchange(origin, commands, timeoutMs, connect) {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) || 6379 });
    let connected = false;
    let buffer = Buffer.alloc(0);
    const replies = [];
    const fail = (error) => {
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(connected ? { tag: 'timeout' } : { tag: 'connect', val: 'timed out while connecting' }), Math.max(1, timeoutMs));
    socket.once('connect', () => {
      connected = true;
      socket.write(encode(commands[0]));
    });
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (buffer.length > MAX_REPLY_BYTES) return fail({ tag: 'transport', val: `the reply is larger than ${MAX_REPLY_BYTES} bytes` });
      try {
        for (;;) {
          const out = [];
          const next = readReply(buffer, 0, out);
          if (next < 0) return;
          replies.push(out);
          buffer = buffer.subarray(next);
          if (replies.length === commands.length || out[0]?.tag === 'error') {
            clearTimeout(timer);
            socket.end();
            return resolve(replies);
          }
          socket.write(encode(commands[replies.length]));
        }
      } catch (error) {
        clearTimeout(timer);
        return fail(error);
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      fail({ tag: connected ? 'transport' : 'connect', val: `${origin}: ${error.code ?? ''} ${error.message}`.trim() });
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (replies.length < commands.length && replies.at(-1)?.[0]?.tag !== 'error') reject({ tag: connected ? 'transport' : 'connect', val: `${origin}: the connection closed before the reply` });
    });
  });
}

/**
 * @param {{ allowedDatabases: () => Iterable<string>, password: () => string | undefined,
 *   connect?: typeof net.connect }} options  both read on every command, so they follow a reload
 * @returns {(origin: string, command: Uint8Array[], timeoutMs: number) => Promise<object[]>}
 */
export function createRedisCommand({ allowedDatabases, password, connect = net.connect }) {
  return async function redisCommand(origin, command, timeoutMs) {
    let normalised;
    try {
      normalised = databaseOrigin(origin);
    } catch (error) {
      throw { tag: 'invalid-request', val: String(error.message ?? error) };
    }
    if (![...allowedDatabases()].includes(normalised)) {
      throw { tag: 'refused', val: `${normalised} is not the database this host was allowed to reach` };
    }
    if (command.length === 0) throw { tag: 'invalid-request', val: 'the command has no name' };
    const name = Buffer.from(command[0]).toString('utf8').toUpperCase();
    if (!CARRIED_COMMANDS.includes(name)) {
      throw { tag: 'refused', val: `${name} is not a command this host carries (only ${CARRIED_COMMANDS.join(', ')})` };
    }
    const secret = password();
    const user = new URL(normalised).username;
    const auth = secret ? [user ? ['AUTH', decodeURIComponent(user), secret] : ['AUTH', secret]] : [];
    const replies = await exchange(normalised, [...auth, [name, ...command.slice(1)]], timeoutMs, connect);
    if (auth.length > 0 && replies.length === 1) {
      throw { tag: 'connect', val: `${normalised} refused the credentials this host was given: ${replies[0][0].val}` };
    }
    return replies[replies.length - 1];
  };
}
