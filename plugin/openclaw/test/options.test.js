import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { resolveOptions } from '../src/options.js';

const where = { pluginRoot: '/opt/plugin', openclawStateDir: '/home/u/.openclaw' };

test('defaults: the shipped config, state, experts and workspace under OpenClaw\'s state dir', () => {
  assert.deepEqual(resolveOptions(undefined, where), {
    configDir: '/opt/plugin/config', overlayDir: undefined, stateDir: '/home/u/.openclaw/graphiti-openclaw',
    expertsDir: '/home/u/.openclaw/experts', workspaceDir: '/home/u/.openclaw/workspace',
    instances: 2, tickIntervalMs: 5000, allowOrigins: undefined, falkordbPassword: undefined,
    hostSettings: JSON.stringify({ experts: { workspace_dir: '/home/u/.openclaw/workspace' } }),
    expertsEnabled: true, webhookMaxBytes: 262144,
  });
});

test('the webhook body cap and whether expert runs are on come from the experts section', () => {
  const options = resolveOptions({ experts: { webhook_max_bytes: 1000, enabled: false, webhook_token: 't' } }, where);
  assert.equal(options.webhookMaxBytes, 1000);
  assert.equal(options.expertsEnabled, false);
  assert.equal(JSON.parse(options.hostSettings).experts.webhook_token, 't', 'the component gets the section as it is');
});

test('the component learns where the agents\' workspace is and which MCP servers exist', () => {
  const options = resolveOptions({ experts: { scratch_retention_days: 3 } }, { ...where, workspaceDir: '/w', mcpServers: ['zeta', 'alpha'] });
  assert.equal(options.workspaceDir, '/w');
  assert.deepEqual(JSON.parse(options.hostSettings).experts, { workspace_dir: '/w', known_servers: ['alpha', 'zeta'], scratch_retention_days: 3 });
});

test('settings sections go to the component as JSON; paths expand', () => {
  const options = resolveOptions({
    configDir: '~/my-config', privateDir: 'private', instances: 3,
    graphiti: { url: 'http://g:8000/mcp' }, recall: { timeout_ms: 500 },
  }, where);
  assert.equal(options.configDir, path.join(os.homedir(), 'my-config'));
  assert.equal(options.overlayDir, '/home/u/.openclaw/private');
  assert.equal(options.instances, 3);
  const { graphiti, recall } = JSON.parse(options.hostSettings);
  assert.deepEqual({ graphiti, recall }, { graphiti: { url: 'http://g:8000/mcp' }, recall: { timeout_ms: 500 } });
});

test('bad keys and values name the key', () => {
  assert.throws(() => resolveOptions({ graphitiUrl: 'x' }, where), /unknown config key "graphitiUrl"/);
  assert.throws(() => resolveOptions({ instances: 0 }, where), /"instances" must be between 1 and 16/);
  assert.throws(() => resolveOptions({ instances: 'two' }, where), /"instances" must be integer/);
  assert.throws(() => resolveOptions({ recall: 5 }, where), /"recall" must be an object/);
  assert.throws(() => resolveOptions({ allowOrigins: 'http://x' }, where), /"allowOrigins" must be string\[\]/);
});

test('the memory tools OpenClaw has go to the component as recall.fallback_tools; the plugin config may name others', () => {
  const told = (config, fallbackTools) => JSON.parse(resolveOptions(config, { ...where, fallbackTools }).hostSettings).recall;
  assert.deepEqual(told(undefined, ['memory_search', 'memory_get']), { fallback_tools: ['memory_search', 'memory_get'] });
  assert.deepEqual(told({ recall: { timeout_ms: 500 } }, []), { fallback_tools: [], timeout_ms: 500 });
  assert.deepEqual(told({ recall: { fallback_tools: ['memory_recall'] } }, []), { fallback_tools: ['memory_recall'] });
  assert.equal(told(undefined, undefined), undefined, 'outside OpenClaw the settings file (or the default) decides');
});

test('the FalkorDB password is the adapter\'s: never in the settings handed to the component', () => {
  const options = resolveOptions({ falkordbPassword: 's3cret-pw', graphiti: { falkordb: { url: 'redis://db:6379' } } }, where);
  assert.equal(options.falkordbPassword, 's3cret-pw');
  assert.ok(!options.hostSettings.includes('s3cret-pw'), options.hostSettings);
  assert.equal(JSON.parse(options.hostSettings).graphiti.falkordb.url, 'redis://db:6379');
});
