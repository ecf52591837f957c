// Page-load benchmark of the web demo: the time from navigation start to the demo
// server's six tools listed on the page, read in the page (performance.now()), in headless
// Chromium against `mcprt serve-demo` with the demo server answering initialize after
// DELAY_MS:
//   cold     a fresh browser profile (no IndexedDB cache): tools listed live
//   reload   the same profile reloaded: tools listed, from the cache when the server has
//            not answered by the startup gate (250 ms), else live
//   live     after that reload, the tools listed live
// Baseline, measured in the same page: the page's own load event plus a hand-written
// fetch() client doing initialize + notifications/initialized + tools/list against the
// same server (what a page gets with no runtime at all).
//
//   node tests/bench/bench_demo_page.mjs [RUNS] [DELAY_MS]     (defaults 5, 0; prints medians)
//
// Environment as for the web tests: MCPRT_CLI, MCPRT_DEMO_SERVER, MCPRT_JS_PACKAGE
// (defaults: build/native and build/wasm of this checkout).
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
process.env.MCPRT_CLI ||= path.join(root, 'build/native/platform-native/cli/mcprt');
process.env.MCPRT_DEMO_SERVER ||= path.join(root, 'build/native/demo/mcprt-demo-server');
process.env.MCPRT_JS_PACKAGE ||= path.join(root, 'build/wasm/mcprt-js/index.js');

const { launchBrowser, startServeDemo, waitForDemoTools } = await import('../web/support/demo_page.mjs');

const runs = Number(process.argv[2] ?? 5);
const delayMs = Number(process.argv[3] ?? 0);
if (!Number.isInteger(runs) || runs < 1 || runs > 50 || !Number.isInteger(delayMs) || delayMs < 0 || delayMs > 10000) {
  console.error('usage: bench_demo_page.mjs [RUNS] [DELAY_MS]   (1..50, 0..10000)');
  process.exit(2);
}

// In the page: the three requests of a minimal client, timed; the demo server's URL comes
// from the page's /config.json.
async function rawFetchListing() {
  const { demoServerUrl } = await (await fetch('./config.json')).json();
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const post = (body, session) => fetch(demoServerUrl, {
    method: 'POST',
    headers: session ? { ...headers, 'Mcp-Session-Id': session } : headers,
    body: JSON.stringify(body),
  });
  const start = performance.now();
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } });
  const session = init.headers.get('Mcp-Session-Id');
  await init.json();
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
  const list = await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, session)).json();
  if (list.result?.tools?.length !== 6) throw new Error(`raw tools/list: ${JSON.stringify(list)}`);
  const elapsed = performance.now() - start;
  await fetch(demoServerUrl, { method: 'DELETE', headers: { 'Mcp-Session-Id': session } });
  return { elapsed, loadEvent: performance.getEntriesByType('navigation')[0].loadEventEnd };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const served = await startServeDemo({ startupDelayMs: delayMs });
const samples = { cold: [], reload: [], live: [], baseline: [] };
let fromCache = 0;
try {
  for (let i = 0; i < runs; i++) {
    const browser = await launchBrowser();
    try {
      const { page } = browser;
      await page.goto(served.url);
      samples.cold.push((await waitForDemoTools(page, { deferred: false })).at);
      const raw = await page.evaluate(rawFetchListing);
      samples.baseline.push(raw.loadEvent + raw.elapsed);
      await page.reload();
      const reloaded = await waitForDemoTools(page, { deferred: 'any' });
      samples.reload.push(reloaded.at);
      if (reloaded.tools.every((t) => t.deferred)) fromCache++;
      samples.live.push((await waitForDemoTools(page, { deferred: false })).at);
    } finally {
      await browser.close();
    }
  }
} finally {
  await served.stop();
}

const base = median(samples.baseline);
console.log(`demo page, server delay ${delayMs} ms, ${runs} run(s): medians in ms since navigation start`);
console.log(`  baseline (load event + raw fetch initialize/initialized/tools/list): ${base.toFixed(0)}`);
console.log(`  reload listings from the cache: ${fromCache} of ${runs}`);
for (const key of ['cold', 'reload', 'live']) {
  const m = median(samples[key]);
  console.log(`  ${key.padEnd(6)} tools listed: ${m.toFixed(0).padStart(5)}  (${(m / base).toFixed(2)}× baseline)` +
              `   samples: ${samples[key].map((x) => x.toFixed(0)).join(' ')}`);
}
