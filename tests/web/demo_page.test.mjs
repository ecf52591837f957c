// The demo page in headless Chromium, end to end: `mcprt serve-demo` serves the page, the
// JS package and wasm module of this build, and a demo MCP server whose initialize answer
// comes only after kStartupDelayMs. The page must list the demo server's tools, call `add`
// through the form generated from its schema, and on reload show the cached tools before
// the connection completes. Screenshots go to MCPRT_WEB_ARTIFACTS (the build tree).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { closedPort } from './support/harness.mjs';
import { DEMO_TOOLS, launchBrowser, readListing, startServeDemo, waitForDemoTools } from './support/demo_page.mjs';

// Long enough that a reloaded page can only list the demo tools during it from the cache.
const kStartupDelayMs = 4000;
const kArtifacts = process.env.MCPRT_WEB_ARTIFACTS || path.resolve('web-artifacts');

let served;
let browser;

before(async () => {
  mkdirSync(kArtifacts, { recursive: true });
  served = await startServeDemo({ startupDelayMs: kStartupDelayMs });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.stop();
});

// Uncaught exceptions and console errors of the page. Chromium also logs every non-2xx
// response as "Failed to load resource"; those are expected here (the favicon's 404, the
// 405 that refuses the optional GET stream) and are the network's, not the page's.
function pageErrors(logs) {
  return logs.filter((l) => l.type === 'pageerror' ||
                            (l.type === 'error' && !l.text.startsWith('Failed to load resource')));
}

async function callThroughForm(page, toolName, fields) {
  const tool = page.locator(`details.tool[data-tool="${toolName}"]`);
  if (!(await tool.evaluate((d) => d.open))) await tool.locator('summary').first().click();
  for (const [name, value] of Object.entries(fields)) await tool.locator(`[name="${name}"]`).fill(value);
  await tool.locator('form.call button[type="submit"]').click();
  return tool.locator('pre.result');
}

test('cold load: the page lists the demo server tools and calls add through its form', async () => {
  const { page, logs } = browser;
  await page.goto(served.url);
  const listed = await waitForDemoTools(page, { deferred: false });
  assert.equal(listed.phase, 'connected');
  assert.equal(listed.cachedBadge, false, 'nothing was cached before the first load');
  assert.deepEqual(listed.tools.map((t) => t.name).sort(), [...DEMO_TOOLS].sort());
  assert.match(listed.tools.find((t) => t.name === 'mcp_demo_add').description, /Adds two numbers/);
  // The server answered initialize only after its delay, so the live listing cannot precede it.
  assert.ok(listed.at >= kStartupDelayMs, `tools listed at ${listed.at} ms`);

  const result = await callThroughForm(page, 'mcp_demo_add', { a: '2', b: '40.5' });
  await page.locator('details.tool[data-tool="mcp_demo_add"] pre.result.ok').waitFor({ timeout: 20000 });
  assert.match(await result.textContent(), /42\.5/);
  await page.screenshot({ path: path.join(kArtifacts, 'demo-page.png'), fullPage: true });
  assert.deepEqual(pageErrors(logs), []);
  console.log(`# cold: demo tools listed ${Math.round(listed.at)} ms after navigation ` +
              `(server delay ${kStartupDelayMs} ms)`);
});

test('reload: the cached tools show before the connection completes, then go live', async () => {
  const { page, logs } = browser;
  await page.reload();
  // Listed as deferred means listed from the IndexedDB cache, before the live tools.
  const cached = await waitForDemoTools(page, { deferred: true });
  assert.notEqual(cached.phase, 'connected', 'cached tools must show while the server still connects');
  assert.deepEqual(cached.tools.map((t) => t.name).sort(), [...DEMO_TOOLS].sort());
  assert.match(cached.tools.find((t) => t.name === 'mcp_demo_echo').description, /unchanged/);
  await page.screenshot({ path: path.join(kArtifacts, 'demo-page-cached.png'), fullPage: true });

  // A call made through a cached tool's form waits for the connection, then answers.
  const result = await callThroughForm(page, 'mcp_demo_echo', { message: 'hello from the cache' });
  const live = await waitForDemoTools(page, { deferred: false });
  assert.equal(live.phase, 'connected');
  await page.locator('details.tool[data-tool="mcp_demo_echo"] pre.result.ok').waitFor({ timeout: 20000 });
  assert.equal((await result.textContent()).trim(), 'hello from the cache');
  assert.equal((await readListing(page)).cachedBadge, false, 'live tools are no longer marked cached');
  assert.deepEqual(pageErrors(logs), []);
  console.log(`# cached: demo tools listed ${Math.round(cached.at)} ms after navigation, ` +
              `live at ${Math.round(live.at)} ms`);
});

test('a server added through the form that cannot be reached shows its error; the demo server stays', async () => {
  const { page, logs } = browser;
  const port = await closedPort();
  await page.locator('#server-name').fill('down');
  await page.locator('#server-url').fill(`http://127.0.0.1:${port}/mcp`);
  await page.locator('#add-server button[type="submit"]').click();
  const row = page.locator('#servers li.server[data-server="down"]');
  await row.locator('[data-phase="failed"]').waitFor({ timeout: 20000 });
  assert.match(await row.locator('.error').textContent(), new RegExp(`127\\.0\\.0\\.1:${port}`));
  // Loading the new list reconnects every server (SPEC §8: a reload); the demo server
  // comes back with the same tools.
  const listing = await waitForDemoTools(page, { deferred: false });
  assert.equal(listing.phase, 'connected');
  assert.equal(listing.tools.length, DEMO_TOOLS.length, 'the failed server adds no tools');
  assert.equal(await page.locator('#load-errors').isHidden(), true, 'the error shows once, in its row');
  await page.screenshot({ path: path.join(kArtifacts, 'demo-page-failed-server.png'), fullPage: true });
  assert.deepEqual(pageErrors(logs), []);
});

test('serve-demo stops the page server and the demo server on SIGTERM', async () => {
  assert.equal(await served.stop(), 0, served.output());
});
