// Drives the demo page in headless Chromium: starts `mcprt serve-demo` (the page, the JS
// package of the wasm tree and the demo MCP server, all on 127.0.0.1) and a Chromium
// profile that keeps localStorage and IndexedDB across reloads. Used by the browser test
// (demo_page.test.mjs) and the page-load benchmark (tests/bench/bench_demo_page.mjs).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SOURCE_DIR, startProcess, stopProcess } from './harness.mjs';

export const CHROMIUM = process.env.MCPRT_CHROMIUM || '/usr/bin/chromium';

// The tools the demo server offers, as the page names them.
export const DEMO_TOOLS = ['echo', 'add', 'now', 'word_count', 'slow_task', 'fail'].map((t) => `mcp_demo_${t}`);

function required(file, what, hint) {
  if (!file || !existsSync(file)) throw new Error(`${what} is missing (${file}); ${hint}`);
  return file;
}

// `mcprt serve-demo --port 0` with this checkout's page and the given build trees. Resolves
// with {url, stop()} once it printed the page URL.
export async function startServeDemo({ startupDelayMs = 0 } = {}) {
  const hint = 'scripts/test builds build/native and build/wasm';
  const cli = required(process.env.MCPRT_CLI, 'the native mcprt CLI (MCPRT_CLI)', hint);
  const demoServer = required(process.env.MCPRT_DEMO_SERVER, 'the native demo server (MCPRT_DEMO_SERVER)', hint);
  const jsIndex = required(process.env.MCPRT_JS_PACKAGE, 'the JS package (MCPRT_JS_PACKAGE)', hint);
  const args = ['serve-demo', '--port', '0', '--web-dir', path.join(SOURCE_DIR, 'demo/web'),
                '--js-dir', path.dirname(jsIndex), '--demo-server', demoServer,
                '--demo-startup-delay-ms', String(startupDelayMs)];
  const { child, match, output } = await startProcess(
    cli, args, {}, /mcprt demo page: (http:\/\/127\.0\.0\.1:\d+\/)/, 'mcprt serve-demo');
  return {
    url: match[1],
    output,
    // SIGTERM stops the page server and the demo server; resolves with the exit code.
    stop: () => stopProcess(child, 10000),
  };
}

// A headless Chromium with a fresh profile directory (persistent: a reload keeps the
// page's localStorage and the runtime's IndexedDB cache). Page errors and console
// messages are collected in `logs`.
export async function launchBrowser() {
  required(CHROMIUM, 'Chromium', 'scripts/bootstrap installs the chromium package');
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'mcprt-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = context.pages()[0] || (await context.newPage());
  const logs = [];
  page.on('console', (m) => logs.push({ type: m.type(), text: m.text(), url: m.location()?.url ?? '' }));
  page.on('pageerror', (e) => logs.push({ type: 'pageerror', text: String(e) }));
  return {
    page,
    logs,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// Runs in the page (serialised by playwright, so self-contained): the page's listing of
// the demo server — its tools, its status badge — when all the demo tools are listed with
// `deferred` as asked ('any': cached or live; null: the state whatever it is), else null.
// `at` is the time in ms since the navigation started.
function demoListing({ names, deferred }) {
  const tools = [...document.querySelectorAll('#tools details.tool')].map((d) => ({
    name: d.dataset.tool,
    deferred: d.dataset.deferred === 'true',
    description: d.querySelector('.description')?.textContent ?? '',
  }));
  const server = document.querySelector('#servers li.server[data-server="demo"]');
  const state = {
    tools,
    phase: server?.querySelector('[data-phase]')?.dataset.phase ?? null,
    cachedBadge: Boolean(server?.querySelector('.badge.cached')),
    at: performance.now(),
  };
  if (deferred === null) return state;
  const listed = tools.filter((t) => names.includes(t.name) && (deferred === 'any' || t.deferred === deferred));
  return listed.length === names.length ? state : null;
}

// The page's listing now (see demoListing).
export function readListing(page) {
  return page.evaluate(demoListing, { names: DEMO_TOOLS, deferred: null });
}

// Waits until the page lists all the demo tools, `deferred` true (from the cache, before
// the connection), false (live) or 'any', polling every animation frame; resolves with the listing at that
// moment. `limitMs` bounds a broken run; it is not a timing assertion.
export async function waitForDemoTools(page, { deferred, limitMs = 30000 }) {
  const handle = await page.waitForFunction(demoListing, { names: DEMO_TOOLS, deferred },
                                            { polling: 'raf', timeout: limitMs });
  return handle.jsonValue();
}
