// OpenClaw's settings form for the plugin, as the manifest describes it: every configuration field
// has a label and help and sits in a group, the webhook token is a secret, and the OpenClaw version
// the README names is the one the package declares.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repo } from './registered.js';

const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'plugin/openclaw/openclaw.plugin.json'), 'utf8'));
const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'plugin/openclaw/package.json'), 'utf8'));

/** Every field of the configuration schema, nested ones by their dotted path. */
function fields(schema, prefix = '') {
  return Object.entries(schema.properties ?? {}).flatMap(([key, value]) => [
    `${prefix}${key}`,
    ...(value.type === 'object' && value.properties ? fields(value, `${prefix}${key}.`) : []),
  ]);
}

test('every configuration field has a label and help, and no hint names a field that does not exist', () => {
  const all = fields(manifest.configSchema);
  assert.ok(all.length > 60, `${all.length} fields`);
  const unlabelled = all.filter((f) => !manifest.uiHints[f]?.label?.trim() || !manifest.uiHints[f]?.help?.trim());
  assert.deepEqual(unlabelled, [], 'fields without a label and help');
  const stray = Object.keys(manifest.uiHints).filter((hint) => !all.includes(hint));
  assert.deepEqual(stray, [], 'hints for fields the schema does not have');
});

test('every top-level field is in exactly one settings group', () => {
  const grouped = manifest.configGroups.flatMap((g) => g.properties);
  assert.deepEqual([...grouped].sort(), Object.keys(manifest.configSchema.properties).sort());
  assert.equal(new Set(grouped).size, grouped.length, 'a field in two groups');
  assert.equal(new Set(manifest.configGroups.map((g) => g.id)).size, manifest.configGroups.length);
});

test('the webhook token and the FalkorDB password are secret inputs, shown masked', () => {
  assert.equal(manifest.uiHints['experts.webhook_token'].sensitive, true);
  const secrets = ['experts.webhook_token', 'falkordbPassword'];
  assert.deepEqual(manifest.configContracts.secretInputs.paths.map((p) => p.path), secrets);
  const sensitive = Object.entries(manifest.uiHints).filter(([, h]) => h.sensitive).map(([f]) => f);
  assert.deepEqual(sensitive.sort(), secrets);
});

test('the catalog category is memory, and the README names the OpenClaw version the package requires', () => {
  assert.deepEqual(manifest.categories, ['memory']);
  const floor = /^>=(\d{4}\.\d+\.\d+)$/.exec(pkg.openclaw.compat.pluginApi)?.[1];
  assert.ok(floor, pkg.openclaw.compat.pluginApi);
  const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');
  assert.match(readme, new RegExp(`\\*\\*OpenClaw ≥ ${floor.replaceAll('.', '\\.')}\\*\\*`), 'README requirements');
  assert.equal(pkg.license, 'MIT');
  assert.ok(fs.existsSync(path.join(repo, 'LICENSE')));
});

test('the packaged manifest names exactly the Control UI assets the package build wrote', () => {
  const packaged = path.join(repo, 'dist/graphiti-openclaw');
  const built = JSON.parse(fs.readFileSync(path.join(packaged, 'openclaw.plugin.json'), 'utf8'));
  const assets = fs.readdirSync(path.join(packaged, 'dist/control-ui'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(packaged, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
  assert.deepEqual([built.controlUi.entry, ...built.controlUi.styles].sort(), assets);
  assert.match(built.controlUi.entry, /^dist\/control-ui\/[0-9a-f]{16}\/index\.js$/);
  assert.equal(manifest.controlUi, undefined, 'the source manifest names no build output');
  const bundle = fs.readFileSync(path.join(packaged, built.controlUi.entry), 'utf8');
  assert.ok(!/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(bundle), 'the page sets text, never HTML');
});
