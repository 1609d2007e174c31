// Configuration trouble in the adapter with the real component: a configDir that does not exist (the
// README's own example before anyone creates it) is reported once, naming it, and recall and capture
// go on with the settings OpenClaw gives; routing alone is off.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentEnd, beforePromptBuild, createRuntime } from '../src/index.js';
import { startStandIn } from '../../../tests/openclaw/openclaw.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const componentDir = path.join(repo, 'dist/graphiti-openclaw/dist/component');

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

function recordingLogger() {
  const lines = [];
  const log = (level) => (message) => lines.push(`${level}: ${message}`);
  return { lines, info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
}

test('a configDir that does not exist is reported once; recall and capture still work', async () => {
  const standIn = await startStandIn();
  try {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'adapter-config-'));
    made.push(home);
    const configDir = path.join(home, 'graphiti-openclaw', 'config');
    const logger = recordingLogger();
    const rt = createRuntime({
      logger,
      pluginConfig: {
        configDir,
        stateDir: path.join(home, 'state'),
        expertsDir: path.join(home, 'experts'),
        workspaceDir: path.join(home, 'workspace'),
        instances: 2,
        // The stand-in's seeded memories are in the group "demo".
        graphiti: { url: `${standIn.url}/mcp`, group_id: { direct: 'demo' } },
      },
    }, { componentDir });
    const pool = await rt.pool();
    await pool.growing;
    assert.equal(pool.instances.length, 2, 'the pool grows despite the configuration error');

    const ctx = { sessionKey: 'agent:main:telegram:direct:u1', agentId: 'main', senderId: 'u1', trigger: 'user' };
    const result = await beforePromptBuild(rt, { prompt: 'Book lunch with the Acme Robotics founder', messages: [] }, ctx);
    assert.match(result?.prependContext ?? '', /^<graphiti-context group="demo">/, 'recall ran against the configured Graphiti');
    assert.doesNotMatch(result.prependContext, /<pack-context/);

    const outcome = await agentEnd(rt, {
      success: true,
      messages: [{ role: 'user', content: 'Book lunch at Saffron Lantern on Thursday' }, { role: 'assistant', content: 'Booked.' }],
    }, ctx);
    assert.equal(outcome?.tag, 'spooled');
    const report = await rt.tick();
    assert.equal(report.error, undefined);
    assert.ok((await standIn.episodes('demo')).some((e) => e.content?.includes('Book lunch at Saffron Lantern')), 'the turn reached Graphiti');

    const status = await rt.command({ tag: 'status' });
    assert.match(status.stdout, new RegExp(`^config:   ROUTING OFF: no routing configuration has loaded yet: ${configDir}: the configuration directory does not exist$`, 'm'));

    const errors = logger.lines.filter((l) => l.startsWith('error: '));
    assert.deepEqual(errors, [
      `error: graphiti-openclaw: configuration has 1 error(s):\n  ${configDir}: the configuration directory does not exist\n`
      + 'routing: no routing configuration has loaded yet: no workflow pack is injected until one does; recall and capture go on',
    ]);
  } finally {
    standIn.stop();
  }
});

test('a privateDir that does not exist is a warning at every load, naming it', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'adapter-overlay-'));
  made.push(home);
  const privateDir = path.join(home, 'private');
  const logger = recordingLogger();
  const rt = createRuntime({
    logger,
    pluginConfig: { configDir: path.join(repo, 'config'), privateDir, stateDir: path.join(home, 'state'), instances: 1, recall: { enabled: false } },
  }, { componentDir });
  const output = await rt.command({ tag: 'check-config' });
  assert.equal(output.exitCode, 0, output.stderr);
  assert.match(output.stdout, new RegExp(`^  warning: the overlay directory ${privateDir} does not exist: only ${path.join(repo, 'config')} is read$`, 'm'));
});
