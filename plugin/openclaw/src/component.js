// The jco-transpiled component, instantiated a few times: one JSPI instance runs one call at a time,
// so concurrent turns take different instances instead of queueing behind one another. The calls
// that send the capture spool (tick, flush, spool commands) run on one more instance of their own, so
// a long send never takes an instance a turn needs. The core modules are compiled once and shared. A
// call that traps replaces its instance (giving up the locks it held); the caller gets the error and
// answers "no injection".

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createWasi } from './wasi.js';
import { createHttpBatch, createHttpRequest, originOf } from './http.js';
import { createRedisCommand, databaseOrigin } from './database.js';
import { StateLocks } from './lock.js';

/** The WIT package's interfaces, as jco's generated code reads them (unversioned) and as its types
 * name them (versioned). Both are provided. */
const WIT_PACKAGE = 'graphiti:openclaw';
const WIT_VERSION = '0.19.0';
/** The interfaces the component exports (wit/world.wit). */
const WIT_EXPORTS = ['hooks', 'commands', 'experts'];

/**
 * @typedef {{ debug?: (m: string) => void, info: (m: string) => void, warn: (m: string) => void,
 *   error: (m: string) => void }} Logger
 * @typedef {{ configDir: string, overlayDir?: string, stateDir?: string, instances: number,
 *   allowOrigins?: string[], falkordbPassword?: string, hostSettings?: string }} PoolOptions
 * @typedef {{ expertsWritable?: boolean, installDir?: string }} Mounts  a one-off instance's extra
 *   mounts: `/experts` writable, a package directory read-only at `/install`
 */

class Instance {
  /** @param {StateLocks} locks  the locks this instance takes through `acquire-lock` */
  constructor(exports, locks) {
    // One object for the three interfaces: their function names are distinct.
    this.plugin = {};
    for (const name of WIT_EXPORTS) {
      const functions = exports[name] ?? exports[`${WIT_PACKAGE}/${name}@${WIT_VERSION}`];
      if (!functions) throw new Error(`the component does not export ${WIT_PACKAGE}/${name}`);
      Object.assign(this.plugin, functions);
    }
    this.locks = locks;
    this.busy = false;
  }
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** The other instances start after the first call, or after this long without one. */
const GROW_AFTER_MS = 100;

export class ComponentPool {
  /**
   * @param {string} componentDir  jco's output: plugin.js and the core .wasm files
   * @param {PoolOptions} options
   * @param {Logger} logger
   */
  static async create(componentDir, options, logger) {
    const pool = new ComponentPool(componentDir, options, logger);
    // The core modules start compiling now, on V8's compile threads, while jco's glue loads here.
    for (const name of fs.readdirSync(componentDir)) {
      if (name.endsWith('.wasm')) pool.coreModule(name).catch(() => {}); // instantiate reports it
    }
    const generated = await import(pathToFileURL(path.join(componentDir, 'plugin.js')).href);
    pool.instantiateComponent = generated.instantiate;
    // One instance serves the first turn; the others join as soon as they are ready.
    pool.instances.push(await pool.instantiate());
    try {
      pool.summary = await pool.reload(options.hostSettings);
    } catch (error) {
      // Reported once, here. What loaded stays in force: recall and capture never wait for routing.
      logger.error(error.message);
    }
    pool.growing = pool.growWhenIdle(options.instances - 1);
    return pool;
  }

  /**
   * Starts `count` more instances once the first call has ended (or after GROW_AFTER_MS without one):
   * instantiating one and loading its configuration runs on this thread, and must not hold up the
   * first turn, which usually comes right after loading.
   */
  growWhenIdle(count) {
    if (count <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const start = () => {
        if (this.startGrowing !== start) return;
        this.startGrowing = undefined;
        clearTimeout(timer);
        resolve(this.grow(count));
      };
      // A turn in flight (waiting on Graphiti, say) keeps the thread for itself: its release starts it.
      const timer = setTimeout(() => this.instances.some((i) => i.busy) || start(), GROW_AFTER_MS);
      this.startGrowing = start;
    });
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

  constructor(componentDir, options, logger) {
    this.componentDir = componentDir;
    /** jco's `instantiate`, once its glue has loaded */
    this.instantiateComponent = undefined;
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
    /** The database `redis-command` may reach: the one the settings name (`graphiti.falkordb.url`). */
    this.databases = new Set();
    this.summary = undefined;
    this.hostSettings = options.hostSettings;
    /** Settles when every instance has been started. */
    this.growing = Promise.resolve();
    /** @type {(() => void) | undefined} starts the growth now, if it has not started */
    this.startGrowing = undefined;
    /** @type {Promise<Instance> | undefined} the instance for sending, started on first use */
    this.senderReady = undefined;
  }

  coreModule(name) {
    if (!this.coreModules.has(name)) {
      this.coreModules.set(name, WebAssembly.compile(fs.readFileSync(path.join(this.componentDir, name))));
    }
    return this.coreModules.get(name);
  }

  /**
   * @param {StateLocks} locks  this instance's locks
   * @param {Mounts} [mounts]  what a one-off instance mounts besides (see `runOneOff`)
   */
  hostImports(locks, { expertsWritable = false, installDir } = {}) {
    const logger = this.logger;
    const { options } = this;
    const preopens = [
      { guestPath: '/config', hostDir: options.configDir, writable: false },
      { guestPath: '/overlay', hostDir: options.overlayDir, writable: false },
      { guestPath: '/state', hostDir: options.stateDir, writable: true },
      { guestPath: '/experts', hostDir: options.expertsDir, writable: expertsWritable },
      { guestPath: '/workspace', hostDir: options.workspaceDir, writable: true },
      ...(installDir ? [{ guestPath: '/install', hostDir: installDir, writable: false }] : []),
    ];
    const httpRequest = createHttpRequest({ allowedOrigins: () => this.origins });
    const host = {
      log(level, message) {
        const write = { debug: logger.debug ?? logger.info, info: logger.info, warn: logger.warn, error: logger.error }[level] ?? logger.info;
        write.call(logger, `graphiti-openclaw: ${message}`);
      },
      httpRequest,
      httpBatch: createHttpBatch(httpRequest),
      // Async (JSPI) as HTTP is; the password stays here, never in the settings the component reads.
      redisCommand: createRedisCommand({ allowedDatabases: () => this.databases, password: () => options.falkordbPassword }),
      // Async (JSPI): a busy lock is waited for on timers, never by blocking the event loop.
      acquireLock: (name, leaseMs, waitMs) => locks.acquire(name, leaseMs, waitMs),
      releaseLock: (name) => locks.release(name),
      // Every directory asked for, mounted or not (a missing one is left out of the preopens): the
      // component names files by these paths, and says so when one does not exist.
      mounts: () => preopens.filter((p) => p.hostDir).map((p) => ({ guestPath: p.guestPath, hostPath: p.hostDir })),
      utcOffset,
    };
    const wasi = createWasi({
      preopens,
      // The process the locks' holders are named by: the component cannot see its own pid, and
      // would call another instance of this Gateway "another process".
      environment: [['GRAPHITI_OPENCLAW_PID', String(process.pid)], ['GRAPHITI_OPENCLAW_HOSTNAME', os.hostname()]],
      stderr: (text) => logger.debug?.(`graphiti-openclaw (stderr): ${text.trimEnd()}`),
    });
    const imports = { ...wasi, [`${WIT_PACKAGE}/host`]: host };
    // jco's code reads the unversioned names; its .d.ts shows versioned ones.
    for (const [name, value] of Object.entries({ ...imports })) {
      if (name.startsWith(`${WIT_PACKAGE}/`)) imports[`${name}@${WIT_VERSION}`] = value;
    }
    return imports;
  }

  /** @param {Mounts} [mounts] */
  async instantiate(mounts) {
    if (this.options.stateDir) fs.mkdirSync(this.options.stateDir, { recursive: true });
    const logger = this.logger;
    const locks = new StateLocks({ stateDir: this.options.stateDir, log: (line) => logger.info(`graphiti-openclaw: ${line}`) });
    try {
      const exports = await this.instantiateComponent((name) => this.coreModule(name), this.hostImports(locks, mounts));
      return new Instance(exports, locks);
    } catch (error) {
      locks.close();
      throw error;
    }
  }

  /**
   * A new instance with the configuration in force (its errors were reported when it was loaded).
   * @param {Mounts} [mounts]
   */
  async startInstance(mounts) {
    const instance = await this.instantiate(mounts);
    try {
      instance.plugin.reloadConfig(this.hostSettings);
    } catch (error) {
      if (!configFailure(error)) throw error;
    }
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
    this.startGrowing?.();
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
      return await this.callOn(instance, what, call);
    } finally {
      this.release(instance);
    }
  }

  /**
   * Runs a call that sends the capture spool (tick, flush, spool commands) on the instance kept for
   * sending, so turns never wait behind one. The caller runs one at a time.
   * @template T
   * @param {string} what  for the log
   * @param {(plugin: any) => T | Promise<T>} call
   * @returns {Promise<T>}
   */
  async runSending(what, call) {
    const sender = await this.sender();
    // Only a configuration reload shares it.
    while (sender.busy) await pause(5);
    sender.busy = true;
    try {
      return await this.callOn(sender, what, call);
    } finally {
      sender.busy = false;
    }
  }

  /**
   * Runs one call on an instance of its own that mounts more than the pool's do, then drops it (its
   * locks given up): the experts directory writable and a package directory at `/install`, for
   * `experts install`, `bind` and `remove` only. Every other call sees `/experts` read-only.
   * @template T
   * @param {string} what  for the log
   * @param {Mounts} mounts
   * @param {(plugin: any) => T | Promise<T>} call
   * @returns {Promise<T>}
   */
  async runOneOff(what, mounts, call) {
    const instance = await this.startInstance(mounts);
    try {
      return await call(instance.plugin);
    } catch (error) {
      this.logger.error(`graphiti-openclaw: ${what} failed in the component: ${error?.stack ?? error}`);
      throw error;
    } finally {
      instance.locks.releaseAll();
      instance.locks.close();
    }
  }

  /** The instance for sending, started on first use (a failed start is retried on the next). */
  sender() {
    this.senderReady ??= this.startInstance().catch((error) => {
      this.senderReady = undefined;
      throw error;
    });
    return this.senderReady;
  }

  async callOn(instance, what, call) {
    try {
      return await call(instance.plugin);
    } catch (error) {
      this.logger.error(`graphiti-openclaw: ${what} failed in the component, replacing the instance: ${error?.stack ?? error}`);
      await this.replace(instance);
      throw error;
    }
  }

  /** A fresh instance in place of a failed one; the failed one's locks are given up first. */
  async replace(instance) {
    instance.locks.releaseAll();
    try {
      const fresh = await this.startInstance();
      instance.locks.close();
      instance.plugin = fresh.plugin;
      instance.locks = fresh.locks;
    } catch (error) {
      this.logger.error(`graphiti-openclaw: cannot replace the component instance: ${error?.stack ?? error}`);
    }
  }

  /** Every instance, the sender included once it is up. */
  async everyInstance() {
    await this.growing;
    const sender = this.senderReady && (await this.senderReady.catch(() => undefined));
    return sender ? [...this.instances, sender] : [...this.instances];
  }

  /** Gives up every lock an instance still holds (on service stop), each once it is idle. */
  async releaseLocks() {
    for (const instance of await this.everyInstance()) {
      while (instance.busy) await pause(5);
      instance.locks.releaseAll();
    }
  }

  /**
   * Reloads the configuration in every instance (waiting for each to be idle). Returns the summary,
   * or throws an Error listing every configuration problem and what stays in force (routing and
   * settings load apart: each keeps its last good state).
   * @param {string | undefined} hostSettings
   */
  async reload(hostSettings) {
    this.hostSettings = hostSettings;
    let summary;
    let failure;
    for (const instance of await this.everyInstance()) {
      while (instance.busy) await pause(5);
      instance.busy = true;
      try {
        summary = instance.plugin.reloadConfig(hostSettings);
      } catch (error) {
        failure = configFailure(error);
        if (!failure) throw error;
      } finally {
        // The sender is not the pool's to hand to a waiting turn.
        if (this.instances.includes(instance)) this.release(instance);
        else instance.busy = false;
      }
    }
    const graphitiUrl = failure?.graphitiUrl ?? summary?.graphitiUrl;
    const allowed = this.options.allowOrigins ?? (graphitiUrl ? [graphitiUrl] : []);
    this.origins = new Set(allowed.filter((url) => !url.startsWith('redis')).map((url) => originOf(url)));
    const falkordbUrl = failure?.falkordbUrl ?? summary?.falkordbUrl;
    const databases = this.options.allowOrigins?.filter((url) => url.startsWith('redis')) ?? (falkordbUrl ? [falkordbUrl] : []);
    this.databases = new Set(databases.map((url) => databaseOrigin(url)));
    if (failure) {
      const lines = failure.errors.map((e) => `${e.file}${e.line ? `:${e.line}` : ''}${e.field ? `: ${e.field}` : ''}: ${e.message}`);
      throw new Error(`graphiti-openclaw: configuration has ${lines.length} error(s):\n  ${lines.join('\n  ')}\n${failure.inForce.join('\n')}`);
    }
    return summary;
  }
}

/**
 * `host.utc-offset`: minutes east of UTC of IANA zone `zone` at `atMs` (epoch ms), from the time-zone
 * database of Node's Intl (ICU). An unknown zone is the import's error value (jco hands a thrown
 * string to the guest as `err`).
 * @param {string} zone
 * @param {bigint | number} atMs
 * @returns {number}
 */
export function utcOffset(zone, atMs) {
  let format;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
  } catch {
    throw `unknown time zone ${JSON.stringify(zone)} (an IANA name such as Europe/Berlin)`;
  }
  const at = new Date(Number(atMs));
  if (Number.isNaN(at.getTime())) throw `${atMs} ms is not a representable moment`;
  const name = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? '';
  // "GMT" for UTC itself, else "GMT+01:00", "GMT-03:30", "GMT+05:45".
  const match = /^GMT(?:([+-])(\d{1,2})(?::(\d{2}))?)?$/.exec(name);
  if (!match) throw `time zone ${JSON.stringify(zone)}: cannot read its offset from ${JSON.stringify(name)}`;
  if (!match[1]) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3] ?? 0);
  return match[1] === '-' ? -minutes : minutes;
}

/** The component's `config-failure` when `error` is one (jco throws a result's error as its payload). */
function configFailure(error) {
  const payload = error?.payload;
  return payload && Array.isArray(payload.errors) ? payload : undefined;
}
