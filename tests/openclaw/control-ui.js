// Drives OpenClaw's Control UI in the system's headless Chromium (scripts/chromium.sh finds or
// installs it) with puppeteer-core, which downloads no browser.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { REPO } from './openclaw.js';

/** A package of tools/node/ (scripts/node-tools.sh), by name. */
const load = (name) => import(pathToFileURL(createRequire(path.join(REPO, 'tools/node/package.json')).resolve(name)).href);

/** The Control UI URL of one of this plugin's pages. */
export const pageUrl = (base, page, token) => `${base}/plugin?plugin=graphiti-openclaw&id=${page}#token=${encodeURIComponent(token)}`;

/**
 * A headless Chromium with a fresh profile. `readOnly`: the Control UI connects with only the
 * operator.read scope (its native-auth bootstrap, set before any page script runs).
 */
export async function launchBrowser() {
  const executablePath = execFileSync('bash', [path.join(REPO, 'scripts/chromium.sh')], { encoding: 'utf8' }).trim().split('\n').at(-1);
  const { default: puppeteer } = await load('puppeteer-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'graphiti-chromium-'));
  const args = ['--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'];
  // Chromium's sandbox cannot start as root (CI containers).
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  const browser = await puppeteer.launch({ executablePath, headless: true, userDataDir: profile, args, env: { ...process.env, HOME: profile } });
  return {
    browser,
    async page({ readOnly = false, gatewayUrl, token } = {}) {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      if (readOnly) {
        await page.evaluateOnNewDocument((auth) => { window.__OPENCLAW_NATIVE_CONTROL_AUTH__ = auth; }, {
          gatewayUrl,
          token,
          client: { id: 'openclaw-control-ui', mode: 'webchat', platform: 'linux', deviceFamily: 'desktop', scopes: ['operator.read'] },
        });
      }
      return page;
    },
    async close() {
      await browser.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The text of every element matching `selector`, through shadow roots. */
export async function texts(page, selector) {
  return page.$$eval(`>>> ${selector}`, (nodes) => nodes.map((node) => node.textContent));
}

/** Every text of the document, through shadow roots (run in the page). */
function documentText() {
  const all = [];
  const walk = (root) => {
    all.push(root.textContent);
    for (const node of root.querySelectorAll('*')) if (node.shadowRoot) walk(node.shadowRoot);
  };
  walk(document.documentElement);
  return all.join('\n');
}

/**
 * What `read` (run in the frame) returns, or '' when the frame went away meanwhile (puppeteer
 * throws at once for a detached one).
 */
async function frameTextNow(frame, read = documentText) {
  try {
    return await frame.evaluate(read);
  } catch {
    return '';
  }
}

/**
 * Waits until the page's text (through shadow roots) matches `pattern`; when it never does, the
 * error carries what the page said instead (the tail of its text).
 */
export async function waitForText(page, pattern, timeout = 30_000) {
  const test = `new RegExp(${JSON.stringify(pattern.source)}, ${JSON.stringify(pattern.flags)}).test((${documentText})())`;
  try {
    await page.waitForFunction(test, { timeout, polling: 250 });
  } catch (error) {
    const shown = await frameTextNow(page.mainFrame()).catch((e) => `(unreadable: ${e.message})`);
    throw new Error(`${error.message}: the page never showed ${pattern}; its text ends:\n${String(shown).slice(-2000)}`);
  }
}

/** Clicks the first button (through shadow roots) whose text is `label`. */
export async function clickButton(page, label, within = '') {
  for (const candidate of await page.$$(`>>> ${within} button`)) {
    if ((await candidate.evaluate((node) => node.textContent.trim())) === label) {
      await candidate.click();
      return;
    }
  }
  throw new Error(`no button "${label}"${within ? ` in ${within}` : ''}`);
}

/** The labels of every button (through shadow roots) under `within`. */
export async function buttonLabels(page, within) {
  return page.$$eval(`>>> ${within} button`, (nodes) => nodes.map((node) => node.textContent.trim()));
}

/** The Memory page's search for a direct chat's sender (the field is cleared first). */
export async function searchMemories(page, sender, query) {
  const fields = Object.fromEntries(await Promise.all((await page.$$('>>> .graphiti-openclaw-field')).map(async (field) => [await field.evaluate((node) => node.name), field])));
  for (const [name, value] of [['sender', sender], ['query', query]]) {
    await fields[name].evaluate((node) => { node.value = ''; });
    await fields[name].type(value);
  }
  await clickButton(page, 'Show', '.graphiti-openclaw-search');
}

/**
 * Opens the chat of `sessionKey` and, in its side panel, the panel labelled `label`; false when the
 * panel is not offered. `untilReloaded`: false also when the page has no side panel yet (a Gateway
 * still taking a config change in serves the page without it: the caller loads it again); else a
 * page without one fails.
 */
export async function openSessionPanel(page, base, token, sessionKey, label, { untilReloaded = false } = {}) {
  const route = sessionKey.split(':').slice(1).join('/');
  await page.goto(`${base}/chat/${route}#token=${encodeURIComponent(token)}`);
  const sidePanel = await page.waitForSelector('>>> button[aria-label="Side panel"]', { timeout: untilReloaded ? 15_000 : 30_000 }).catch((error) => {
    if (untilReloaded && error.name === 'TimeoutError') return null;
    throw error;
  });
  if (!sidePanel) return false;
  await page.click('>>> button[aria-label="Side panel"]');
  await page.waitForSelector('>>> .side-panel-empty__type', { timeout: 30_000 });
  for (const offered of await page.$$('>>> .side-panel-empty__type')) {
    if ((await offered.evaluate((node) => node.textContent)).includes(label)) {
      await offered.click();
      return true;
    }
  }
  return false;
}

/**
 * Saves a screenshot (of the element `selector` picks, else the page) under
 * $GRAPHITI_UI_SCREENSHOTS when it is set: for a reviewer and the docs, nothing checks it.
 */
export async function screenshot(page, name, selector) {
  const dir = process.env.GRAPHITI_UI_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  const target = selector ? await page.$(`>>> ${selector}`) : page;
  await (target ?? page).screenshot({ path: path.join(dir, `${name}.png`) });
}

/** The text of the first frame (widgets render in sandboxed frames) whose text matches `pattern`. */
export async function frameText(page, pattern, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    for (const frame of page.frames()) {
      const text = await frameTextNow(frame, () => document.body?.innerText ?? '');
      if (pattern.test(text)) return text;
    }
    if (Date.now() > deadline) throw new Error(`no frame shows ${pattern}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Fails when a secret is in a URL the page requested from now on or in the text it shows, through
 * shadow roots and frames. The test's own navigations (the Control UI takes the token in their
 * `#token=`) are not the page's requests.
 */
export function secretsWatch(page, secrets) {
  const urls = [];
  page.on('request', (request) => {
    if (!(request.isNavigationRequest() && request.frame() === page.mainFrame())) urls.push(request.url());
  });
  return async () => {
    const shown = [];
    for (const frame of page.frames()) shown.push(await frameTextNow(frame));
    for (const secret of secrets) {
      const leaked = urls.filter((url) => url.includes(secret) || url.includes(encodeURIComponent(secret)));
      if (leaked.length) throw new Error(`a requested URL holds a secret: ${leaked[0]}`);
      if (shown.some((text) => text.includes(secret))) throw new Error('the page shows a secret');
    }
    return urls.length;
  };
}
