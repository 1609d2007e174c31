// Whether OpenClaw lets this plugin's turn hooks run. OpenClaw drops a non-bundled plugin's
// conversation hooks (`before_prompt_build`, `agent_end` among them) at registration unless
// `plugins.entries.<id>.hooks.allowConversationAccess` is true, and its prompt hooks when
// `allowPromptInjection` is false; then every turn silently does nothing, and only
// `openclaw plugins inspect <id> --runtime --json` says why. The plugin API exposes neither the hook
// policy nor what `api.on` did (it returns nothing either way), so this decides as OpenClaw 2026.9's
// loader does (`resolveConversationAccessAllowed` and `resolvePromptInjectionAllowed` in its
// hook-policy-decisions, over `plugins.entries` normalized as its config-state does), from the very
// config object that loader reads the policy from and hands the plugin as `api.config`.

/** The turn hooks this plugin registers, what OpenClaw gates them by, and what every turn loses without each. */
const TURN_HOOKS = [
  { hook: 'before_prompt_build', conversation: true, promptInjection: true, loss: 'no turn gets recall, a workflow pack or an expert prompt' },
  { hook: 'agent_end', conversation: true, promptInjection: false, loss: 'no turn is captured' },
];

/**
 * The plugin's hook flags in `plugins.entries`, as OpenClaw's config normalization reads them: keys
 * trimmed and lower-cased; of several spellings of the id, a later one that is not an object resets
 * the entry, and a later `hooks` replaces an earlier one only when OpenClaw keeps it (it holds a
 * boolean flag or a valid timeout); only boolean flags count.
 * @returns {{ allowConversationAccess?: boolean, allowPromptInjection?: boolean } | undefined}
 */
export function hookPolicyOf(config, pluginId) {
  const entries = config?.plugins?.entries;
  if (!isRecord(entries)) return undefined;
  let policy;
  for (const [key, entry] of Object.entries(entries)) {
    if (key.trim().toLowerCase() !== pluginId) continue;
    if (!isRecord(entry)) {
      policy = {};
    } else if (isRecord(entry.hooks) && keptByOpenClaw(entry.hooks)) {
      policy = {};
      for (const flag of ['allowConversationAccess', 'allowPromptInjection']) {
        if (typeof entry.hooks[flag] === 'boolean') policy[flag] = entry.hooks[flag];
      }
    } else {
      policy ??= {};
    }
  }
  return policy;
}

/** OpenClaw keeps an entry's `hooks` when it has a boolean flag, a valid `timeoutMs` or a valid `timeouts` value. */
function keptByOpenClaw(hooks) {
  const validTimeout = (ms) => Number.isSafeInteger(ms) && ms >= 1 && ms <= 600_000;
  return typeof hooks.allowConversationAccess === 'boolean' || typeof hooks.allowPromptInjection === 'boolean'
    || validTimeout(hooks.timeoutMs) || (isRecord(hooks.timeouts) && Object.values(hooks.timeouts).some(validTimeout));
}

/**
 * The turn hooks OpenClaw blocks for this plugin (which is never a bundled one: it is installed from
 * its own package), with why and the command that lets them run; none when `config` is not an
 * object (the plugin was not loaded by OpenClaw, which always passes its config).
 * @param {unknown} config  `api.config`
 * @param {string} pluginId
 * @returns {{ hooks: string[], losses: string[], reasons: string[], fixes: string[] } | undefined}
 */
export function blockedTurnHooks(config, pluginId) {
  if (!isRecord(config)) return undefined;
  const policy = hookPolicyOf(config, pluginId) ?? {};
  const key = `plugins.entries.${pluginId}.hooks`;
  const conversationAllowed = policy.allowConversationAccess === true;
  const promptInjectionAllowed = policy.allowPromptInjection !== false;
  const blocked = TURN_HOOKS.filter((h) => (h.conversation && !conversationAllowed) || (h.promptInjection && !promptInjectionAllowed));
  if (blocked.length === 0) return undefined;
  const reasons = [];
  const fixes = [];
  if (!conversationAllowed) {
    reasons.push(`${key}.allowConversationAccess is ${policy.allowConversationAccess === false ? 'false' : 'not set to true'}`);
    fixes.push(`openclaw config set ${key}.allowConversationAccess true --strict-json`);
  }
  if (!promptInjectionAllowed) {
    reasons.push(`${key}.allowPromptInjection is false`);
    fixes.push(`openclaw config set ${key}.allowPromptInjection true --strict-json`);
  }
  return { hooks: blocked.map((h) => h.hook), losses: blocked.map((h) => h.loss), reasons, fixes };
}

/**
 * One line for the log and for `status`: which hooks OpenClaw blocks, what every turn loses, why,
 * and the exact command(s) that fix it.
 * @param {{ hooks: string[], losses: string[], reasons: string[], fixes: string[] }} blocked
 */
export function describeBlockedHooks(blocked) {
  const hooks = `${blocked.hooks.join(' and ')} hook${blocked.hooks.length > 1 ? 's' : ''}`;
  return `OpenClaw blocks this plugin's ${hooks}: ${blocked.losses.join(', and ')} `
    + `(${blocked.reasons.join('; ')}). Fix: ${blocked.fixes.join(' && ')}`;
}

/**
 * The lines `status` begins with: the hooks blocked for this instance (decided from the config it was
 * registered with), and, when OpenClaw's live config (`api.runtime.config.current()`, where there is
 * one) now decides otherwise, that this instance does not have that yet.
 * @param {unknown} registeredConfig  `api.config`
 * @param {unknown} liveConfig  the current config, or undefined when OpenClaw offers none
 * @returns {string[]}
 */
export function hookStatusLines(registeredConfig, liveConfig, pluginId) {
  const blocked = blockedTurnHooks(registeredConfig, pluginId);
  const live = isRecord(liveConfig) ? blockedTurnHooks(liveConfig, pluginId) : blocked;
  const reload = `openclaw plugins reload ${pluginId} (or restart the Gateway)`;
  const lines = [];
  if (blocked) lines.push(`hooks:    BLOCKED: ${describeBlockedHooks(blocked)}`);
  if (String(blocked?.hooks) === String(live?.hooks)) return lines;
  if (!live) {
    lines.push(`          The configuration now lets them run, but this instance was registered before: ${reload}`);
  } else {
    lines.push(`hooks:    the configuration changed since this instance was registered; once OpenClaw reloads it (${reload}): ${describeBlockedHooks(live)}`);
  }
  return lines;
}

function isRecord(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
