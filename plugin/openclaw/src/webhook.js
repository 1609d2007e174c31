// Expert webhook triggers on the Gateway's HTTP server: `POST /graphiti-openclaw/experts/<expert>/<trigger>`.
// The component decides every answer (bearer token, size, JSON, mapping, dedupe) and queues the
// invocation durably before a 202; this handler only reads the request within a bound and writes
// the answer back.

/** The route's prefix (`match: 'prefix'`). */
export const WEBHOOK_PREFIX = '/graphiti-openclaw/experts';

/** The component's default `experts.webhook_max_bytes`. */
export const DEFAULT_WEBHOOK_MAX_BYTES = 256 * 1024;

/**
 * Reads the request body until its end or until `limit` bytes are in; then reading stops (the rest
 * is never buffered) and `stopped` says so: the caller answers and closes the connection.
 * @param {import('node:http').IncomingMessage} req
 * @param {number} limit
 * @returns {Promise<{ body: Buffer, stopped: boolean }>}
 */
export function readBodyUpTo(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk) => {
      const kept = chunk.subarray(0, limit - size);
      chunks.push(kept);
      size += kept.length;
      if (size >= limit) {
        req.pause();
        done();
        resolve({ body: Buffer.concat(chunks, size), stopped: true });
      }
    };
    const onEnd = () => {
      done();
      resolve({ body: Buffer.concat(chunks, size), stopped: false });
    };
    const onError = (error) => {
      done();
      reject(error);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** The request's headers as (lower-case name, value) pairs, repeated headers kept. */
export function headerPairs(req) {
  const raw = req.rawHeaders ?? [];
  const pairs = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([String(raw[i]).toLowerCase(), String(raw[i + 1])]);
  return pairs;
}

/** The path below the prefix (`<expert>/<trigger>`), without the query. */
export function pathBelow(url, prefix = WEBHOOK_PREFIX) {
  const pathname = String(url ?? '').split('?')[0].split('#')[0];
  const rest = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : pathname;
  // Each segment decoded apart (an expert name may be any script: `B%C3%BCro-Ops`); an encoded `/`
  // stays inside its segment, so the component still sees it and refuses the path.
  return rest.replace(/^\/+/, '').split('/').map(decodeSegment).join('/');
}

function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment).replaceAll('/', '%2F');
  } catch {
    return segment; // malformed escapes reach the component as written, which names no expert
  }
}

function answer(res, status, body, { close = false, headers = {} } = {}) {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  // A body not read to its end: the connection cannot be reused.
  if (close) res.setHeader('connection', 'close');
  res.end(body.endsWith('\n') ? body : `${body}\n`);
}

/**
 * The route's handler.
 * @param {{ maxBytes: number, webhook: (request: { path: string, headers: Array<[string, string]>, body: Uint8Array }) => Promise<{ status: number, body: string, work: any }>,
 *   afterAccept?: (work: any) => void, logger: any }} options
 *   `webhook`: the component's `expert-webhook` with the time; `afterAccept`: given the answer's work
 *   once the answer is written (the runner logs its notes and ticks soon)
 */
export function webhookHandler({ maxBytes, webhook, afterAccept = () => {}, logger }) {
  return async (req, res) => {
    if (req.method !== 'POST') {
      answer(res, 405, JSON.stringify({ error: `${req.method} is not allowed: POST the event as JSON to ${WEBHOOK_PREFIX}/<expert>/<trigger>` }), { headers: { allow: 'POST' } });
      return true;
    }
    let read;
    try {
      // One byte over the limit is enough for the component to say 413; more is never read.
      read = await readBodyUpTo(req, maxBytes + 1);
    } catch (error) {
      answer(res, 400, JSON.stringify({ error: `the request body could not be read: ${error?.message ?? error}` }), { close: true });
      return true;
    }
    let result;
    try {
      result = await webhook({ path: pathBelow(req.url), headers: headerPairs(req), body: new Uint8Array(read.body) });
    } catch (error) {
      logger.error(`graphiti-openclaw: experts: a webhook could not be handled: ${error?.message ?? error}`);
      answer(res, 503, JSON.stringify({ error: 'the expert runtime could not take the event; try again' }), { close: read.stopped });
      return true;
    }
    // The rest of an oversized body is never read: once the answer is out, the connection goes.
    if (read.stopped) res.once('finish', () => req.destroy?.());
    answer(res, result.status, result.body, { close: read.stopped });
    try {
      afterAccept(result.work);
    } catch (error) {
      logger.error(`graphiti-openclaw: experts: after a webhook: ${error?.message ?? error}`);
    }
    return true;
  };
}
