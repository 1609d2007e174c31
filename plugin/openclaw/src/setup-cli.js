// `openclaw graphiti setup`: what the install instructions otherwise ask a user to type. It copies the
// example configuration into a directory of the user's (never over one that exists), turns on
// `hooks.allowConversationAccess`, writes the Graphiti URL, transport and configuration directory into
// the plugin's entry of OpenClaw's config (and the FalkorDB behind Graphiti, when given), then asks
// the component for its status with those settings, so a Graphiti that cannot be reached is said at
// once, and a Graphiti on FalkorDB with no connection to it gets the offer to connect.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseOrigin } from './database.js';

const DEFAULT_URL = 'http://localhost:8000/mcp';
const DEFAULT_CONFIG_DIR = '~/graphiti-openclaw/config';

function expandHome(dir) {
  return dir === '~' || dir.startsWith('~/') ? path.join(os.homedir(), dir.slice(1)) : path.resolve(dir);
}

/** The URL and transport asked for, or why they cannot be used. */
export function graphitiTarget(url, transport) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return { error: `--graphiti-url ${JSON.stringify(url)} is not a URL (e.g. ${DEFAULT_URL})` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { error: `--graphiti-url ${JSON.stringify(url)}: Graphiti is reached over http or https` };
  }
  const chosen = transport ?? (parsed.pathname.replace(/\/+$/, '').endsWith('/mcp') ? 'mcp' : 'rest');
  if (chosen !== 'mcp' && chosen !== 'rest') {
    return { error: `--transport ${JSON.stringify(transport)}: mcp (the MCP server) or rest (graph_service)` };
  }
  return { url, transport: chosen };
}

/**
 * @param {import('commander').Command} graphiti  the `graphiti` command
 * @param {object} api  the plugin API of this registration
 * @param {{ pluginId: string, pluginRoot: string, createRuntime: Function }} plugin
 */
export function registerSetupCommand(graphiti, api, { pluginId, pluginRoot, createRuntime }) {
  graphiti.command('setup')
    .description('Set the plugin up: copy the example configuration, allow its hooks, set the Graphiti URL, and check that Graphiti answers')
    .option('--graphiti-url <url>', 'the MCP endpoint (…/mcp) or the REST server\'s base URL', DEFAULT_URL)
    .option('--transport <mcp|rest>', 'the Graphiti API [default: mcp when the URL ends in /mcp, else rest]')
    .option('--config-dir <dir>', 'your configuration directory (the example is copied there when it does not exist)', DEFAULT_CONFIG_DIR)
    .option('--falkordb-url <url>', 'the FalkorDB behind Graphiti (redis://host:6379), when Graphiti runs on FalkorDB: forgets and listings go through it; its password goes in falkordbPassword')
    .action(async (opts) => {
      const target = graphitiTarget(opts.graphitiUrl, opts.transport);
      if (target.error) {
        process.stderr.write(`graphiti setup: ${target.error}\n`);
        process.exitCode = 2;
        return;
      }
      let falkordbUrl;
      if (opts.falkordbUrl !== undefined) {
        try {
          falkordbUrl = databaseOrigin(opts.falkordbUrl);
        } catch (error) {
          process.stderr.write(`graphiti setup: --falkordb-url: ${error.message}\n`);
          process.exitCode = 2;
          return;
        }
      }
      const configDir = expandHome(opts.configDir);
      if (fs.existsSync(configDir)) {
        process.stdout.write(`configuration: kept ${configDir} as it is\n`);
      } else {
        fs.cpSync(path.join(pluginRoot, 'config'), configDir, { recursive: true, errorOnExist: true });
        process.stdout.write(`configuration: copied the example to ${configDir}\n`);
      }
      const mutate = api.runtime?.config?.mutateConfigFile;
      if (typeof mutate !== 'function') {
        process.stderr.write('graphiti setup: this OpenClaw gives plugins no config writes; run:\n'
          + `  openclaw config set plugins.entries.${pluginId}.hooks.allowConversationAccess true --strict-json\n`);
        process.exitCode = 1;
        return;
      }
      let pluginConfig;
      let written;
      await mutate.call(api.runtime.config, {
        afterWrite: { mode: 'auto' },
        mutate(draft) {
          draft.plugins ??= {};
          draft.plugins.entries ??= {};
          const entry = (draft.plugins.entries[pluginId] ??= {});
          entry.hooks = { ...entry.hooks, allowConversationAccess: true };
          const config = entry.config ?? {};
          const graphiti = { ...config.graphiti, url: target.url, transport: target.transport };
          if (falkordbUrl) graphiti.falkordb = { ...config.graphiti?.falkordb, url: falkordbUrl };
          entry.config = { ...config, configDir, graphiti };
          pluginConfig = entry.config;
          written = JSON.parse(JSON.stringify(draft));
        },
      });
      process.stdout.write(`OpenClaw config: ${pluginId} hooks allowed; Graphiti ${target.url} (${target.transport})${falkordbUrl ? `; FalkorDB ${falkordbUrl}` : ''}; configDir ${configDir}\n`);
      // The status of the configuration just written: this process registered the plugin under the
      // one before, whose blocked hooks setup has just allowed.
      const configured = { ...api, config: written, pluginConfig, runtime: { ...api.runtime, config: { current: () => written } } };
      const output = await createRuntime(configured).command({ tag: 'status' });
      process.stdout.write(output.stdout);
      if (output.stderr) process.stderr.write(output.stderr);
      if (output.exitCode !== 0) {
        process.stderr.write(`graphiti setup: Graphiti does not answer at ${target.url}; start it, then run openclaw graphiti status\n`);
      }
      process.exitCode = output.exitCode;
    });
}
