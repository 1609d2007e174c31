// What OpenClaw's own memory (the bundled memory-core plugin: builtin search over MEMORY.md, USER.md
// and memory/*.md) looks like under a config, so that the fallback note names only tools that exist,
// and the one memory-slot setting that silently breaks it is said out loud.
//
// graphiti-openclaw declares no `kind: "memory"`: the memory slot never affects it, and it runs beside
// whichever plugin owns the slot (docs/install.md, "Rolling out"). Decided as OpenClaw 2026.9's loader does
// (`resolvePluginActivationDecisionShared`, `resolveMemorySlotDecisionShared` and the dreaming sidecar
// in `resolveAuthorizedDreamingSidecar`), from the config it hands the plugin as `api.config`.

export const MEMORY_CORE = 'memory-core';
const PLUGIN_ID = 'graphiti-openclaw';

/** memory-core's tools that a model can look things up with. */
export const MEMORY_CORE_TOOLS = ['memory_search', 'memory_get'];

/** The command that gives the memory slot back to memory-core. */
export const SLOT_FIX = `openclaw config set plugins.slots.memory ${MEMORY_CORE}`;

/**
 * Whether memory-core runs under `config`, why, and which of its lookup tools the model gets.
 * `tools` ignores tool profiles and per-agent policy (only the global `tools.deny` is read): a tool
 * listed may still be hidden from some agent, one left out is certainly absent.
 * @param {unknown} config  OpenClaw's config (`api.config`)
 * @returns {{ active: boolean, why: string, tools: string[] }}
 */
export function memoryCoreState(config) {
  const plugins = isRecord(config?.plugins) ? config.plugins : {};
  const off = (why) => ({ active: false, why, tools: [] });
  const on = (why) => ({ active: true, why, tools: MEMORY_CORE_TOOLS.filter((tool) => !deniedTool(config, tool)) });
  if (plugins.enabled === false) return off('plugins.enabled is false');
  if (policyIds(plugins.deny).includes(MEMORY_CORE)) return off('plugins.deny lists memory-core');
  if (entryEnabled(plugins.entries, MEMORY_CORE) === false) return off('plugins.entries.memory-core.enabled is false');
  const slot = typeof plugins.slots?.memory === 'string' ? plugins.slots.memory.trim() : '';
  if (slot === '' || slot === MEMORY_CORE) return on('memory-core owns the memory slot');
  if (slot.toLowerCase() === 'none') return off('plugins.slots.memory is none');
  // Another plugin owns the slot. memory-core comes back as its "dreaming sidecar" (with its tools)
  // only when that owner is a memory plugin whose dreaming is on (default on); this plugin is none.
  if (slot.toLowerCase() === PLUGIN_ID || slot.toLowerCase() === MEMORY_CORE) return off(`plugins.slots.memory is "${slot}"`);
  const dreaming = plugins.entries?.[slot]?.config?.dreaming?.enabled;
  if (dreaming === false || (typeof dreaming === 'string' && /^(false|no|off|0)$/i.test(dreaming.trim()))) {
    return off(`plugins.slots.memory is "${slot}" and its dreaming is off`);
  }
  return on(`the dreaming sidecar of the memory slot's owner "${slot}"`);
}

/**
 * The warning when the memory slot names this plugin: accepted silently by OpenClaw, it switches
 * memory-core off (no sidecar: this plugin is no memory plugin) and gives nothing in return.
 * @returns {string | undefined}
 */
export function slotWarning(config) {
  const slot = config?.plugins?.slots?.memory;
  if (typeof slot !== 'string' || slot.trim().toLowerCase() !== PLUGIN_ID) return undefined;
  return `plugins.slots.memory is "${slot.trim()}": OpenClaw switches its own memory (memory-core: memory_search, `
    + 'memory_get, standing intents, dreaming) off for it, and graphiti-openclaw does not replace them: it owns no '
    + `memory slot and works beside memory-core (docs/install.md, "Rolling out"). Fix: ${SLOT_FIX}`;
}

/**
 * The line `status` begins with when the slot is wrong: from OpenClaw's live config when there is
 * one (the fix takes effect there), else the config this instance was registered with.
 * @returns {string[]}
 */
export function slotStatusLines(registeredConfig, liveConfig) {
  const warning = slotWarning(isRecord(liveConfig) ? liveConfig : registeredConfig);
  return warning ? [`memory:   WRONG SLOT: ${warning}`] : [];
}

/** Whether OpenClaw's global tool policy denies `tool` (by name, `group:memory` or `*`). */
function deniedTool(config, tool) {
  const deny = Array.isArray(config?.tools?.deny) ? config.tools.deny : [];
  return deny.some((entry) => typeof entry === 'string' && ['*', 'group:memory', tool].includes(entry.trim().toLowerCase()));
}

/** Plugin ids in an allow or deny list, as OpenClaw compares them (trimmed, lower-cased). */
function policyIds(list) {
  return Array.isArray(list) ? list.filter((id) => typeof id === 'string').map((id) => id.trim().toLowerCase()) : [];
}

/**
 * `plugins.entries.<id>.enabled` as OpenClaw normalizes it: keys trimmed and lower-cased; of several
 * spellings, a later boolean wins and a later entry that is not an object resets it.
 */
function entryEnabled(entries, id) {
  if (!isRecord(entries)) return undefined;
  let enabled;
  for (const [key, entry] of Object.entries(entries)) {
    if (key.trim().toLowerCase() !== id) continue;
    if (!isRecord(entry)) enabled = undefined;
    else if (typeof entry.enabled === 'boolean') enabled = entry.enabled;
  }
  return enabled;
}

function isRecord(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
