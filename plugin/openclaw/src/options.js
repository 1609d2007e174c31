// The plugin's OpenClaw config (`plugins.entries.graphiti-openclaw.config`) split into what the
// adapter needs (directories, instances, timer, origins) and the settings it hands to the component,
// which lays them over its settings file and validates them.

import os from 'node:os';
import path from 'node:path';

/** Sections passed to the component as they are (same keys as the config directory's settings.yaml). */
export const SETTINGS_SECTIONS = ['graphiti', 'recall', 'capture', 'skip', 'routing', 'experts'];

export const DEFAULTS = Object.freeze({
  instances: 2,
  tickIntervalMs: 5000,
  /** The component's default `experts.webhook_max_bytes`. */
  webhookMaxBytes: 256 * 1024,
});

/** The adapter's own keys, with how each is checked. */
const ADAPTER_KEYS = {
  configDir: 'string',
  privateDir: 'string',
  stateDir: 'string',
  expertsDir: 'string',
  workspaceDir: 'string',
  instances: 'integer',
  tickIntervalMs: 'integer',
  allowOrigins: 'string[]',
  falkordbPassword: 'string',
};

/**
 * @param {string} value
 * @param {string} base  what relative paths are relative to
 */
function expandPath(value, base) {
  if (value === '~' || value.startsWith('~/')) return path.join(os.homedir(), value.slice(1));
  return path.resolve(base, value);
}

/**
 * @param {Record<string, unknown> | undefined} pluginConfig  as OpenClaw validated it against the manifest
 * @param {{ pluginRoot: string, openclawStateDir: string, workspaceDir?: string, mcpServers?: string[], fallbackTools?: string[] }} where
 *   `workspaceDir`: OpenClaw's agent workspace; `mcpServers`: the MCP servers OpenClaw has configured;
 *   `fallbackTools`: the memory tools OpenClaw has besides this plugin's (for the fallback note)
 * @returns {{ configDir: string, overlayDir: string | undefined, stateDir: string, expertsDir: string,
 *   workspaceDir: string, instances: number, tickIntervalMs: number, allowOrigins: string[] | undefined,
 *   falkordbPassword: string | undefined,
 *   hostSettings: string | undefined, expertsEnabled: boolean, webhookMaxBytes: number }}
 *   `webhookMaxBytes`: the plugin config's `experts.webhook_max_bytes` (the adapter reads one byte more
 *   of a webhook body, so the component can refuse a larger one; set it here, not in settings.yaml)
 */
export function resolveOptions(pluginConfig, { pluginRoot, openclawStateDir, workspaceDir, mcpServers, fallbackTools }) {
  const config = pluginConfig ?? {};
  if (typeof config !== 'object' || Array.isArray(config)) {
    throw new Error('graphiti-openclaw: the plugin config must be an object');
  }
  for (const [key, value] of Object.entries(config)) {
    const kind = ADAPTER_KEYS[key];
    if (!kind && !SETTINGS_SECTIONS.includes(key)) {
      throw new Error(`graphiti-openclaw: unknown config key "${key}" (known: ${[...Object.keys(ADAPTER_KEYS), ...SETTINGS_SECTIONS].join(', ')})`);
    }
    const ok = kind === 'string' ? typeof value === 'string' && value.trim() !== ''
      : kind === 'integer' ? Number.isInteger(value)
        : kind === 'string[]' ? Array.isArray(value) && value.every((v) => typeof v === 'string')
          : value !== null && typeof value === 'object' && !Array.isArray(value);
    if (!ok) throw new Error(`graphiti-openclaw: config key "${key}" must be ${kind ?? 'an object'}`);
  }
  const instances = config.instances ?? DEFAULTS.instances;
  if (instances < 1 || instances > 16) throw new Error('graphiti-openclaw: config key "instances" must be between 1 and 16');
  const tickIntervalMs = config.tickIntervalMs ?? DEFAULTS.tickIntervalMs;
  if (tickIntervalMs < 100) throw new Error('graphiti-openclaw: config key "tickIntervalMs" must be at least 100');

  const settings = Object.fromEntries(SETTINGS_SECTIONS.filter((s) => s in config).map((s) => [s, config[s]]));
  const maxBytes = config.experts?.webhook_max_bytes;
  const webhookMaxBytes = Number.isInteger(maxBytes) && maxBytes >= 0 ? maxBytes : DEFAULTS.webhookMaxBytes;
  const workspace = config.workspaceDir ? expandPath(config.workspaceDir, openclawStateDir) : (workspaceDir ?? path.join(openclawStateDir, 'workspace'));
  // What the component cannot see for itself: where the workspace is for agents, which MCP servers exist.
  settings.experts = {
    workspace_dir: workspace,
    ...(mcpServers ? { known_servers: [...mcpServers].sort() } : {}),
    ...settings.experts,
  };
  // Which memory tools exist is the host's to say (settings.yaml cannot know); the plugin config may still name others.
  if (fallbackTools) settings.recall = { fallback_tools: fallbackTools, ...settings.recall };
  return {
    configDir: config.configDir ? expandPath(config.configDir, openclawStateDir) : path.join(pluginRoot, 'config'),
    overlayDir: config.privateDir ? expandPath(config.privateDir, openclawStateDir) : undefined,
    stateDir: config.stateDir ? expandPath(config.stateDir, openclawStateDir) : path.join(openclawStateDir, 'graphiti-openclaw'),
    expertsDir: config.expertsDir ? expandPath(config.expertsDir, openclawStateDir) : path.join(openclawStateDir, 'experts'),
    workspaceDir: workspace,
    instances,
    tickIntervalMs,
    allowOrigins: config.allowOrigins,
    // A secret input (a SecretRef in OpenClaw's config): the host authenticates with it; it is
    // never part of the settings handed to the component.
    falkordbPassword: config.falkordbPassword,
    hostSettings: JSON.stringify(settings),
    expertsEnabled: config.experts?.enabled !== false,
    webhookMaxBytes,
  };
}

/** OpenClaw's state directory as OpenClaw resolves it, when its runtime does not say. */
export function defaultOpenclawStateDir(env = process.env) {
  const fromEnv = env.OPENCLAW_STATE_DIR?.trim();
  return fromEnv ? expandPath(fromEnv, process.cwd()) : path.join(os.homedir(), '.openclaw');
}
