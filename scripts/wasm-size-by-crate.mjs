#!/usr/bin/env node
// Where a component's bytes go: each core module's sections, and its code by Rust crate and by
// function, read from the wasm `name` section (so build with symbols; see docs/benchmarks.md, "Where
// the time and the bytes go").
//   node scripts/wasm-size-by-crate.mjs FILE.wasm [top-functions] [--record OUT.json] [--against IN.json]
// --record writes the largest module's code by crate; --against prints the crates whose share of the
// code grew since such a record (a release's: docs/benchmarks/wasm-crates-<version>.json).
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const USAGE = 'usage: node scripts/wasm-size-by-crate.mjs FILE.wasm [top-functions] [--record OUT.json] [--against IN.json]';
let parsed;
try {
  parsed = parseArgs({ allowPositionals: true, options: { record: { type: 'string' }, against: { type: 'string' } } });
} catch (error) {
  console.error(`wasm-size-by-crate: ${error.message}\n${USAGE}`);
  process.exit(2);
}
const [file, topArg = '25'] = parsed.positionals;
if (!file) {
  console.error(USAGE);
  process.exit(2);
}
const top = Number(topArg);
if (!Number.isInteger(top) || top < 0) {
  console.error(`wasm-size-by-crate: top-functions must be a whole number, not ${JSON.stringify(topArg)}`);
  process.exit(2);
}
let against;
if (parsed.values.against) {
  try {
    against = JSON.parse(readFileSync(parsed.values.against, 'utf8'));
    if (typeof against.codeBytes !== 'number' || typeof against.crates !== 'object') throw new Error('not a --record file (codeBytes, crates)');
  } catch (error) {
    console.error(`wasm-size-by-crate: --against ${parsed.values.against}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
    process.exit(2);
  }
}

function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at];
    at += 1;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}

/** The sections of a module or component: { id, start, end, bodyStart }. */
function sections(bytes) {
  if (bytes.length < 8 || bytes.readUInt32BE(0) !== 0x0061736d) throw new Error('not a wasm binary');
  const list = [];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, bodyStart] = leb(bytes, at + 1);
    if (bodyStart + size > bytes.length) throw new Error(`truncated: section ${id} at byte ${at} ends past the end`);
    list.push({ id, start: at, end: bodyStart + size, bodyStart });
    at = bodyStart + size;
  }
  return list;
}

function isComponent(bytes) {
  return bytes.readUInt16LE(6) === 1; // layer 1: a component; 0: a core module
}

/** Core modules inside a component, depth first. */
function coreModules(bytes) {
  if (!isComponent(bytes)) return [bytes];
  const found = [];
  for (const s of sections(bytes)) {
    const inner = bytes.subarray(s.bodyStart, s.end);
    if (s.id === 1) found.push(inner); // core module
    if (s.id === 4) found.push(...coreModules(inner)); // nested component
  }
  return found;
}

function readName(bytes, at) {
  const [len, start] = leb(bytes, at);
  return [bytes.toString('utf8', start, start + len), start + len];
}

const SECTION_NAMES = { 0: 'custom', 1: 'type', 2: 'import', 3: 'function', 4: 'table', 5: 'memory', 6: 'global', 7: 'export', 8: 'start', 9: 'element', 10: 'code', 11: 'data', 12: 'data count' };

/** Undoes the legacy Rust mangling's escapes enough to read the crate names. */
function readable(name) {
  if (!name.startsWith('_ZN')) return name;
  const parts = [];
  let at = 3;
  while (at < name.length && name[at] !== 'E') {
    const digits = /^\d+/.exec(name.slice(at));
    if (!digits) break;
    at += digits[0].length;
    parts.push(name.slice(at, at + Number(digits[0])));
    at += Number(digits[0]);
  }
  if (parts.length && /^h[0-9a-f]{16}$/.test(parts.at(-1))) parts.pop();
  return parts.join('::')
    .replaceAll('$LT$', '<').replaceAll('$GT$', '>').replaceAll('$u20$', ' ').replaceAll('$RF$', '&')
    .replaceAll('$C$', ',').replaceAll('$u7b$', '{').replaceAll('$u7d$', '}').replaceAll('..', '::');
}

/** The crate a function's code belongs to: its path's first segment, or the implementing type's
 * (`<&mut T as Trait>::f` is T's); for a v0-mangled name (`_R…`), its first crate root. */
function crateOf(name) {
  // The component's export wrappers, named by interface and WIT version: one entry per interface.
  const exported = /^(?:cabi_post_)?([a-z-]+:[a-z-]+\/[a-z-]+)@[0-9.]+#/.exec(name);
  if (exported) return `(exports of ${exported[1]})`;
  if (name.startsWith('_R')) {
    const root = /C(?:s[0-9A-Za-z]*_)?(\d+)/.exec(name);
    if (root) return name.substr(root.index + root[0].length, Number(root[1]));
  }
  let path = name.replace(/^_(?=<)/, '');
  for (let before = ''; before !== path;) {
    before = path;
    path = path.replace(/^[<&*\s]+/, '').replace(/^(mut|const|dyn)\s+/, '');
  }
  const crate = /^([A-Za-z_][A-Za-z0-9_]*)::/.exec(path);
  return crate ? crate[1] : `(other: ${name.length > 40 ? `${name.slice(0, 40)}…` : name})`;
}

const kb = (n) => (n / 1024).toFixed(1).padStart(8);
let bytes;
let modules;
try {
  bytes = readFileSync(file);
  if (bytes.length < 8 || bytes.readUInt32BE(0) !== 0x0061736d) throw new Error('not a wasm binary (no \\0asm header)');
  modules = coreModules(bytes); // a truncated or malformed file fails here, before anything is printed
} catch (error) {
  console.error(`wasm-size-by-crate: ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  process.exit(1);
}
console.log(`${file}: ${bytes.length} bytes`);
for (const [index, module] of modules.entries()) {
  const list = sections(module);
  console.log(`\ncore module ${index}: ${module.length} bytes`);
  for (const s of list) {
    let label = SECTION_NAMES[s.id] ?? `id ${s.id}`;
    if (s.id === 0) label += ` "${readName(module, s.bodyStart)[0]}"`;
    console.log(`  ${label.padEnd(28)} ${kb(s.end - s.start)} KiB`);
  }
  let imported = 0;
  const importSection = list.find((s) => s.id === 2);
  if (importSection) {
    let [count, at] = leb(module, importSection.bodyStart);
    for (; count > 0; count -= 1) {
      [, at] = readName(module, at);
      [, at] = readName(module, at);
      const kind = module[at];
      at += 1;
      if (kind === 0) {
        imported += 1;
        [, at] = leb(module, at);
      } else if (kind === 1) {
        at += 1; // reftype
        const flags = module[at];
        [, at] = leb(module, at + 1);
        if (flags & 1) [, at] = leb(module, at);
      } else if (kind === 2) {
        const flags = module[at];
        [, at] = leb(module, at + 1);
        if (flags & 1) [, at] = leb(module, at);
      } else if (kind === 3) {
        at += 2; // valtype, mutability
      } else {
        throw new Error(`${file}: import kind ${kind} not understood`);
      }
    }
  }
  const names = new Map();
  for (const s of list.filter((s) => s.id === 0)) {
    let [name, at] = readName(module, s.bodyStart);
    if (name !== 'name') continue;
    while (at < s.end) {
      const sub = module[at];
      const [size, start] = leb(module, at + 1);
      if (sub === 1) {
        let [count, p] = leb(module, start);
        for (; count > 0; count -= 1) {
          let idx;
          [idx, p] = leb(module, p);
          [name, p] = readName(module, p);
          names.set(idx, readable(name));
        }
      }
      at = start + size;
    }
  }
  const code = list.find((s) => s.id === 10);
  if (!code || names.size === 0) {
    console.log('  (no code section, or no function names: build with symbols to see crates)');
    continue;
  }
  const byCrate = new Map();
  const functions = [];
  let [count, at] = leb(module, code.bodyStart);
  for (let i = 0; i < count; i += 1) {
    const [size, bodyStart] = leb(module, at);
    const total = bodyStart + size - at;
    const name = names.get(imported + i) ?? `(function ${imported + i})`;
    functions.push([total, name]);
    const crate = crateOf(name);
    byCrate.set(crate, (byCrate.get(crate) ?? 0) + total);
    at = bodyStart + size;
  }
  const codeBytes = code.end - code.start;
  console.log(`\n  code by crate (${count} functions):`);
  for (const [crate, size] of [...byCrate].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
    console.log(`  ${crate.padEnd(48)} ${kb(size)} KiB ${((100 * size) / codeBytes).toFixed(1).padStart(5)}%`);
  }
  if (module.length === Math.max(...modules.map((m) => m.length))) {
    const record = { codeBytes, crates: Object.fromEntries([...byCrate].sort((x, y) => y[1] - x[1])) };
    if (parsed.values.record) writeFileSync(parsed.values.record, `${JSON.stringify(record, null, 2)}\n`);
    if (against) printGrowth(against, parsed.values.against, record);
  }
  if (top > 0) {
    console.log(`\n  largest functions:`);
    for (const [size, name] of functions.sort((a, b) => b[0] - a[0]).slice(0, top)) {
      console.log(`  ${kb(size)} KiB  ${name.length > 110 ? `${name.slice(0, 110)}…` : name}`);
    }
  }
}

/** The crates whose share of the code grew since `before`, most bytes gained first. */
function printGrowth(before, beforeFile, now) {
  const share = (record, crate) => (record.crates[crate] ?? 0) / record.codeBytes;
  const grew = Object.keys(now.crates)
    .filter((crate) => share(now, crate) > share(before, crate))
    .map((crate) => [crate, now.crates[crate] - (before.crates[crate] ?? 0)])
    .sort((a, b) => b[1] - a[1]);
  console.log(`\n  crates whose share of the code grew since ${beforeFile} (code ${kb(before.codeBytes)} -> ${kb(now.codeBytes)} KiB):`);
  for (const [crate, gained] of grew.slice(0, 30)) {
    const pct = (record) => (100 * share(record, crate)).toFixed(1);
    console.log(`  ${crate.padEnd(48)} ${gained >= 0 ? '+' : ''}${kb(gained)} KiB  ${pct(before).padStart(5)}% -> ${pct(now).padStart(5)}%`);
  }
}
