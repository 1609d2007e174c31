// The jco-transpiled component, instantiated a few times: one JSPI instance runs one call at a time,
// so concurrent turns take different instances instead of queueing behind one another. The core
// modules are compiled once and shared. A call that traps replaces its instance; the caller gets the
// error and answers "no injection".

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createWasi } from './wasi.js';
import { createHttpRequest, originOf } from './http.js';

/** The WIT package's interfaces, as jco's generated code reads them (unversioned) and as its types
 * name them (versioned). Both are provided. */
const WIT_PACKAGE = 'graphiti:openclaw';
const WIT_VERSION = '0.4.0';

/**
 * @typedef {{ debug?: (m: string) => void, info: (m: string) => void, warn: (m: string) => void,
 *   error: (m: string) => void }} Logger
 * @typedef {{ configDir: string, overlayDir?: string, stateDir?: string, instances: number,
 *   allowOrigins?: string[], hostSettings?: string }} PoolOptions
 */

class Instance {
  constructor(exports) {
    this.plugin = exports.plugin ?? exports[`${WIT_PACKAGE}/plugin@${WIT_VERSION}`];
    if (!this.plugin) throw new Error('the component does not export graphiti:openclaw/plugin');
    this.busy = false;
  }
}

export class ComponentPool {
  /**
   * @param {string} componentDir  jco's output: plugin.js and the core .wasm files
   * @param {PoolOptions} options
   * @param {Logger} logger
   */
  static async create(componentDir, options, logger) {
    const generated = await import(pathToFileURL(path.join(componentDir, 'plugin.js')).href);
    const pool = new ComponentPool(componentDir, generated.instantiate, options, logger);
    // One instance serves the first turn; the others join as soon as they are ready.
    pool.instances.push(await pool.instantiate());
    pool.summary = await pool.reload(options.hostSettings);
    pool.growing = pool.grow(options.instances - 1);
    return pool;
  }

  async grow(count) {
    for (let i = 0; i < count; i += 1) {
      try {
        const instance = await this.startInstance();
        instance.busy = true;
        this.instances.push(instance);
        this.release(instance);
      } catch (error) {
        this.logger.error(`graphiti-openclaw: cannot start another component instance: ${error?.stack ?? error}`);
        return;
      }
    }
  }

  constructor(componentDir, instantiate, options, logger) {
    this.componentDir = componentDir;
    this.instantiateComponent = instantiate;
    this.options = options;
    this.logger = logger;
    /** @type {Instance[]} */
    this.instances = [];
    /** @type {Array<(instance: Instance) => void>} */
    this.waiting = [];
    /** @type {Map<string, Promise<WebAssembly.Module>>} */
    this.coreModules = new Map();
    /** Origins `http-request` may reach: the configured ones, else the Graphiti URL's origin. */
    this.origins = new Set();
    this.summary = undefined;
    this.hostSettings = options.hostSettings;
    /** Settles when every instance has been started. */
    this.growing = Promise.resolve();
  }

  coreModule(name) {
    if (!this.coreModules.has(name)) {
      this.coreModules.set(name, WebAssembly.compile(fs.readFileSync(path.join(this.componentDir, name))));
    }
    return this.coreModules.get(name);
  }

  hostImports() {
    const logger = this.logger;
    const host = {
      log(level, message) {
        const write = { debug: logger.debug ?? logger.info, info: logger.info, warn: logger.warn, error: logger.error }[level] ?? logger.info;
        write.call(logger, `graphiti-openclaw: ${message}`);
      },
      httpRequest: createHttpRequest({ allowedOrigins: () => this.origins }),
    };
    const { options } = this;
    const wasi = createWasi({
      preopens: [
        { guestPath: '/config', hostDir: options.configDir, writable: false },
        { guestPath: '/overlay', hostDir: options.overlayDir, writable: false },
        { guestPath: '/state', hostDir: options.stateDir, writable: true },
        { guestPath: '/experts', hostDir: options.expertsDir, writable: false },
        { guestPath: '/workspace', hostDir: options.workspaceDir, writable: true },
      ],
      stderr: (text) => logger.debug?.(`graphiti-openclaw (stderr): ${text.trimEnd()}`),
    });
    const imports = { ...wasi, [`${WIT_PACKAGE}/host`]: host, [`${WIT_PACKAGE}/types`]: {} };
    // jco's code reads the unversioned names; its .d.ts shows versioned ones.
    for (const [name, value] of Object.entries({ ...imports })) {
      if (name.startsWith(`${WIT_PACKAGE}/`)) imports[`${name}@${WIT_VERSION}`] = value;
    }
    return imports;
  }

  async instantiate() {
    if (this.options.stateDir) fs.mkdirSync(this.options.stateDir, { recursive: true });
    const exports = await this.instantiateComponent((name) => this.coreModule(name), this.hostImports());
    return new Instance(exports);
  }

  /** A new instance with the configuration in force. */
  async startInstance() {
    const instance = await this.instantiate();
    instance.plugin.reloadConfig(this.hostSettings);
    return instance;
  }

  /** An idle instance, waiting for one when all are busy. */
  acquire() {
    const idle = this.instances.find((i) => !i.busy);
    if (idle) {
      idle.busy = true;
      return Promise.resolve(idle);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(instance) {
    const next = this.waiting.shift();
    if (next) {
      next(instance);
    } else {
      instance.busy = false;
    }
  }

  /**
   * Runs `call` on an idle instance. A guest trap replaces the instance (with the configuration
   * reloaded) and is thrown to the caller.
   * @template T
   * @param {string} what  for the log
   * @param {(plugin: any) => T | Promise<T>} call
   * @returns {Promise<T>}
   */
  async run(what, call) {
    const instance = await this.acquire();
    try {
      return await call(instance.plugin);
    } catch (error) {
      this.logger.error(`graphiti-openclaw: ${what} failed in the component, replacing the instance: ${error?.stack ?? error}`);
      await this.replace(instance);
      throw error;
    } finally {
      this.release(instance);
    }
  }

  async replace(instance) {
    try {
      const fresh = await this.startInstance();
      instance.plugin = fresh.plugin;
    } catch (error) {
      this.logger.error(`graphiti-openclaw: cannot replace the component instance: ${error?.stack ?? error}`);
    }
  }

  /**
   * Reloads the configuration in every instance (waiting for each to be idle). Returns the summary,
   * or throws an Error listing every configuration problem; the last good configuration stays.
   * @param {string | undefined} hostSettings
   */
  async reload(hostSettings) {
    this.hostSettings = hostSettings;
    await this.growing;
    let summary;
    for (const instance of this.instances) {
      while (instance.busy) await new Promise((resolve) => setTimeout(resolve, 5));
      instance.busy = true;
      try {
        summary = instance.plugin.reloadConfig(hostSettings);
      } catch (errors) {
        const list = Array.isArray(errors) ? errors : errors?.payload ?? [errors];
        const lines = list.map((e) => `${e.file}${e.line ? `:${e.line}` : ''}${e.field ? `: ${e.field}` : ''}: ${e.message}`);
        throw new Error(`graphiti-openclaw: configuration has ${lines.length} error(s); the last good configuration stays in force:\n  ${lines.join('\n  ')}`);
      } finally {
        this.release(instance);
      }
    }
    const allowed = this.options.allowOrigins ?? (summary?.graphitiUrl ? [summary.graphitiUrl] : []);
    this.origins = new Set(allowed.map((url) => originOf(url)));
    return summary;
  }
}
