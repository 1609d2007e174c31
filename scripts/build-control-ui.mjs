// Bundles the Control UI (plugin/openclaw/control-ui/) with esbuild into <package>/dist/control-ui/
// <content hash>/ and names exactly those assets in <package>/openclaw.plugin.json's `controlUi`.
// Run by scripts/package-openclaw.sh with tools/node on PATH; `openclaw/plugin-sdk/*` resolves from
// tools/node/node_modules (the OpenClaw the package is tested with).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { build } = createRequire(path.join(repo, 'tools/node/package.json'))('esbuild');
const packageDir = path.resolve(process.argv[2] ?? path.join(repo, 'dist/graphiti-openclaw'));
const result = await build({
  entryPoints: [path.join(repo, 'plugin/openclaw/control-ui/index.js')],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  minify: true,
  write: false,
  outdir: 'out',
  entryNames: 'index',
  nodePaths: [path.join(repo, 'tools/node/node_modules')],
  logLevel: 'warning',
});
const assets = result.outputFiles.map((file) => ({ name: path.basename(file.path), bytes: file.contents }));
const digest = crypto.createHash('sha256');
for (const asset of assets.toSorted((a, b) => a.name.localeCompare(b.name))) digest.update(asset.name).update(asset.bytes);
const hash = digest.digest('hex').slice(0, 16);
const root = path.join(packageDir, 'dist/control-ui');
fs.rmSync(root, { recursive: true, force: true });
fs.mkdirSync(path.join(root, hash), { recursive: true });
for (const asset of assets) fs.writeFileSync(path.join(root, hash, asset.name), asset.bytes);
const relative = (name) => `dist/control-ui/${hash}/${name}`;
const manifestPath = path.join(packageDir, 'openclaw.plugin.json');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
manifest.controlUi = {
  entry: relative('index.js'),
  styles: assets.filter((a) => a.name.endsWith('.css')).map((a) => relative(a.name)),
};
fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
const sizes = assets.map((a) => `${a.name} ${a.bytes.length} bytes`).join(', ');
console.log(`package: Control UI in dist/control-ui/${hash}/ (${sizes})`);
