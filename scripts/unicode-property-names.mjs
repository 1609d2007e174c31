#!/usr/bin/env node
// Writes plugin/unicode/property-names.txt: every name `\p{…}` accepts, as the regex-syntax the
// workspace locks reads them (its property and value aliases, normalized). plugin/build.rs resolves
// each name through that regex-syntax and packs the classes into the component, so the component
// does not link regex-syntax's own Unicode tables. Run it after regex-syntax changes in Cargo.lock.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const metadata = JSON.parse(
  execFileSync('cargo', ['metadata', '--format-version', '1', '--locked'], { cwd: root, maxBuffer: 1 << 28 }),
);
const syntax = metadata.packages.filter((p) => p.name === 'regex-syntax');
if (syntax.length !== 1) {
  console.error(`unicode-property-names: expected one regex-syntax in Cargo.lock, found ${syntax.length}`);
  process.exit(1);
}
const [{ version, manifest_path: manifest }] = syntax;
const tables = join(dirname(manifest), 'src', 'unicode_tables');
const pairs = (text) => [...text.matchAll(/\("([^"]*)", "([^"]*)"\)/g)].map((m) => [m[1], m[2]]);

/** canonical -> aliases, in the order the table lists them. */
function grouped(list) {
  const map = new Map();
  for (const [alias, canonical] of list) map.set(canonical, [...(map.get(canonical) ?? []), alias]);
  return map;
}

const names = readFileSync(join(tables, 'property_names.rs'), 'utf8');
const values = readFileSync(join(tables, 'property_values.rs'), 'utf8');
const unicode = /Unicode version: (\d+(?:\.\d+)*)/.exec(values)?.[1];
const lines = [
  `# The names \\p{…} accepts, as regex-syntax ${version} (Unicode ${unicode}) reads them: each line is a`,
  '# property or a property value, its canonical name, then its aliases normalized (UAX44-LM3).',
  '# Written by scripts/unicode-property-names.mjs from regex-syntax\'s tables; read by plugin/build.rs.',
  `regex-syntax ${version}`,
];
for (const [canonical, aliases] of grouped(pairs(names))) lines.push(`property ${canonical} ${aliases.join(' ')}`);
// Values are needed only for the properties the component resolves: \p{gc=…}, \p{sc=…}, \p{scx=…},
// and general categories and scripts by their own names (\p{Lu}, \p{Greek}).
for (const property of ['General_Category', 'Script', 'Script_Extensions']) {
  const block = new RegExp(`\\(\\s*"${property}",\\s*&\\[([^\\]]*)\\]`).exec(values);
  if (!block) {
    console.error(`unicode-property-names: no values for ${property} in ${tables}`);
    process.exit(1);
  }
  for (const [canonical, aliases] of grouped(pairs(block[1]))) lines.push(`value ${property} ${canonical} ${aliases.join(' ')}`);
}
const out = join(root, 'plugin', 'unicode', 'property-names.txt');
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(`unicode-property-names: ${out} (${lines.length} lines, regex-syntax ${version})`);
