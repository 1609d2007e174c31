// What the adapter tells the component about the process it runs in: its pid and host name, as
// lock files name their holders, so a lock held by another instance of this Gateway is not called
// "another process" (the component cannot see its own pid).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { ComponentPool } from '../src/component.js';
import { StateLocks } from '../src/lock.js';

test('the component is told this process as lock records name it', () => {
  const pool = new ComponentPool('/nowhere', { configDir: '/nowhere/config', stateDir: '/nowhere/state' }, console);
  const imports = pool.hostImports(new StateLocks({}));
  const environment = imports['wasi:cli/environment'].getEnvironment();
  assert.deepEqual(environment, [
    ['GRAPHITI_OPENCLAW_PID', String(process.pid)],
    ['GRAPHITI_OPENCLAW_HOSTNAME', os.hostname()],
  ]);
});
