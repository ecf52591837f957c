// The demo page in headless Chromium, end to end: `mcprt serve-demo` serves the page, the
// JS package and wasm module of this build, and a demo MCP server whose initialize answer
// comes only after kStartupDelayMs. The page must list the demo server's tools, call `add`
// through the form generated from its schema, and on reload show the cached tools before
// the connection completes. Then: a server added (or removed) through the form connects
// (closes) alone — the demo server keeps its connection, its tools and its one initialize;
// a bearer token and headers given in the form reach the server (through a recording
// proxy); a slow call shows its progress and Cancel ends it with notifications/cancelled
// reaching the server; the raw JSON view; the protocol log; and no console error beyond
// the expected ones (the demo server offers the GET stream, so no refused request is
// logged). Last, a server that refuses the GET stream (a proxy answering 405) connects
// without an error: the runtime asks once per session, and Chromium's own network line is
// the only trace. Screenshots go to MCPRT_WEB_ARTIFACTS (the build tree); the output
// names each one.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { closedPort, startDemoServer, startLoopbackServer, waitFor } from './support/harness.mjs';
import { DEMO_TOOLS, launchBrowser, readListing, startServeDemo, waitForDemoTools } from './support/demo_page.mjs';

// Long enough that a reloaded page can only list the demo tools during it from the cache.
const kStartupDelayMs = 4000;
const kArtifacts = process.env.MCPRT_WEB_ARTIFACTS || path.resolve('web-artifacts');

let served;
let other;  // a second demo server, without the startup delay, for the servers the tests add
let browser;
let proxy;

before(async () => {
  mkdirSync(kArtifacts, { recursive: true });
  // Started together; each one that started is kept for after() even when another failed.
  const [s, o, b] = await Promise.allSettled([startServeDemo({ startupDelayMs: kStartupDelayMs }),
                                               startDemoServer(), launchBrowser()]);
  [served, other, browser] = [s.value, o.value, b.value];
  for (const started of [s, o, b]) if (started.status === 'rejected') throw started.reason;
});

after(async () => {
  await browser?.close();
  await proxy?.close();
  await other?.stop();
  await served?.stop();
});

// Uncaught exceptions and console errors of the page. Chromium logs every failed request
// as "Failed to load resource"; the only ones expected here are the favicon's 404, the
// refused connection of the server added at a closed port, and the 400 with which the
// (2025-only) demo server refuses the protocol probe's 2026-07-28 request before the
// client falls back to initialize (SPEC §14; once per connection without a cached
// verdict). A refused GET stream (405) counts as an error.
function pageErrors(logs) {
  const expected = (l) => l.text.startsWith('Failed to load resource') &&
                          (l.url.endsWith('/favicon.ico') || l.text.includes('net::ERR_CONNECTION_REFUSED') ||
                           (l.text.includes('status of 400') && new URL(l.url).pathname === '/mcp'));
  return logs.filter((l) => l.type === 'pageerror' || (l.type === 'error' && !expected(l)));
}

// Writes `name` under the artifacts directory (the build tree) and names it in the output.
async function screenshot(target, name, options = {}) {
  const file = path.join(kArtifacts, name);
  await target.screenshot({ path: file, ...options });
  console.log(`screenshot: ${file}`);
}

// A loopback proxy in front of `target` that records every request (method, headers,
// body) and the status it got; it answers CORS preflights itself, allowing what is asked.
// `refuseGet`: it answers GET with 405 itself, as servers without a standalone stream do.
async function startRecordingProxy(target, { refuseGet = false } = {}) {
  const server = await startLoopbackServer((req, res, body) => {
    const record = server.requests.at(-1);
    if (refuseGet && req.method === 'GET') {
      record.status = 405;
      res.writeHead(405, { 'access-control-allow-origin': '*', allow: 'POST, DELETE' });
      res.end();
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
        'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '',
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
    const upstream = http.request(target, { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
                                  (answer) => {
                                    record.status = answer.statusCode;
                                    res.writeHead(answer.statusCode, answer.headers);
                                    answer.pipe(res);
                                  });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  });
  return { url: server.url('/mcp'), requests: server.requests, close: () => server.close() };
}

// The protocol log's entries for `server` (direction and method: a response carries the
// method of the request it answers).
function logEntries(page, server, direction, method) {
  return page.locator(`#protocol-log li[data-server="${server}"][data-direction="${direction}"][data-method="${method}"]`);
}

async function addThroughForm(page, { name, url, token = '', headers = '' }) {
  await page.locator('#server-name').fill(name);
  await page.locator('#server-url').fill(url);
  await page.locator('#server-token').fill(token);
  await page.locator('#server-headers').fill(headers);
  await page.locator('#add-server button[type="submit"]').click();
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
  await screenshot(page, 'demo-page.png', { fullPage: true });
  assert.deepEqual(pageErrors(logs), []);
  // The page opened the session's GET stream, and nothing was refused.
  assert.ok(logs.every((l) => !/\b405\b/.test(l.text)), JSON.stringify(logs));
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
  await screenshot(page, 'demo-page-cached.png', { fullPage: true });

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
  await waitForDemoTools(page, { deferred: false });
  const demoInitializes = await logEntries(page, 'demo', 'send', 'initialize').count();
  assert.ok(demoInitializes >= 1, 'the protocol log shows the demo server\'s initialize');
  await addThroughForm(page, { name: 'down', url: `http://127.0.0.1:${port}/mcp` });
  const row = page.locator('#servers li.server[data-server="down"]');
  await row.locator('[data-phase="failed"]').waitFor({ timeout: 20000 });
  assert.match(await row.locator('.error').textContent(), new RegExp(`127\\.0\\.0\\.1:${port}`));
  // Only the new server was connected: the demo server kept its connection and tools.
  const listing = await waitForDemoTools(page, { deferred: false });
  assert.equal(listing.phase, 'connected');
  assert.equal(listing.tools.length, DEMO_TOOLS.length, 'the failed server adds no tools');
  assert.equal(await logEntries(page, 'demo', 'send', 'initialize').count(), demoInitializes);
  assert.equal(await page.locator('#load-errors').isHidden(), true, 'the error shows once, in its row');
  await screenshot(page, 'demo-page-failed-server.png', { fullPage: true });
  assert.deepEqual(pageErrors(logs), []);
});

test('adding a healthy server connects it alone: the demo server keeps its connection and tools', async () => {
  const { page, logs } = browser;
  const demoInitializes = await logEntries(page, 'demo', 'send', 'initialize').count();
  // Every state the demo server's row shows while the other server is added.
  await page.evaluate(() => {
    window.demoPhases = [];
    window.demoObserver = new MutationObserver(() => {
      const row = document.querySelector('#servers li.server[data-server="demo"]');
      window.demoPhases.push(`${row?.querySelector('[data-phase]')?.dataset.phase}/${row?.textContent.match(/(\d+) tools?/)?.[1]}`);
    });
    window.demoObserver.observe(document.getElementById('servers'), { childList: true, subtree: true });
  });
  // The other demo server (the served one answers initialize only after its delay).
  await addThroughForm(page, { name: 'second', url: other.url });
  await page.locator('#servers li.server[data-server="second"] [data-phase="connected"]').waitFor({ timeout: 30000 });
  await page.locator('details.tool[data-tool="mcp_second_echo"]').waitFor({ timeout: 10000 });
  const phases = await page.evaluate(() => {
    window.demoObserver.disconnect();
    return window.demoPhases;
  });
  assert.ok(phases.length > 0, 'the server list was re-rendered while adding');
  assert.deepEqual([...new Set(phases)], [`connected/${DEMO_TOOLS.length}`]);
  assert.equal(await logEntries(page, 'demo', 'send', 'initialize').count(), demoInitializes,
               'no new initialize on the demo server');
  const listing = await waitForDemoTools(page, { deferred: false });
  assert.equal(listing.phase, 'connected');
  assert.deepEqual(pageErrors(logs), []);
});

test('the protocol log shows each server\'s initialize and tools/list, sent and received, and filters by server', async () => {
  const { page } = browser;
  for (const direction of ['send', 'receive']) {
    for (const method of ['initialize', 'tools/list']) {
      assert.ok(await logEntries(page, 'second', direction, method).count() >= 1, `${direction} ${method}`);
    }
  }
  const answer = logEntries(page, 'second', 'receive', 'tools/list').last();
  await answer.locator('summary').click();
  const listed = JSON.parse(await answer.locator('pre').textContent());
  assert.deepEqual(listed.result.tools.map((t) => t.name).sort(),
                   DEMO_TOOLS.map((t) => t.replace('mcp_demo_', '')).sort());
  assert.match(await answer.locator('summary').textContent(), /← tools\/list result #/);
  await page.locator('#log-server').selectOption('second');
  assert.equal(await page.locator('#protocol-log li[data-server="demo"]:visible').count(), 0);
  assert.ok(await page.locator('#protocol-log li[data-server="second"]:visible').count() >= 4);
  await screenshot(page.locator('#protocol-log'), 'demo-page-protocol-log.png');
  await page.locator('#log-server').selectOption('');
  assert.ok(await page.locator('#protocol-log li[data-server="demo"]:visible').count() >= 1);
});

test('a bearer token and headers given in the form reach the server', async () => {
  const { page, logs } = browser;
  proxy = await startRecordingProxy(other.url);
  await addThroughForm(page, { name: 'proxied', url: proxy.url, token: 'demo-t0ken', headers: 'X-Demo-Key: k1' });
  const row = page.locator('#servers li.server[data-server="proxied"]');
  await row.locator('[data-phase="connected"]').waitFor({ timeout: 30000 });
  const posts = proxy.requests.filter((r) => r.method === 'POST');
  assert.ok(posts.length >= 2, 'initialize and tools/list went through the proxy');
  for (const r of posts) {
    assert.equal(r.headers.authorization, 'Bearer demo-t0ken');
    assert.equal(r.headers['x-demo-key'], 'k1');
  }
  assert.match(await row.textContent(), /headers: X-Demo-Key, Authorization/);
  assert.doesNotMatch(await page.locator('#servers').textContent(), /demo-t0ken/, 'the token is never shown');
  assert.deepEqual(pageErrors(logs), []);
});

test('a slow call shows its progress; Cancel ends it and the server gets notifications/cancelled', async () => {
  const { page, logs } = browser;
  const tool = page.locator('details.tool[data-tool="mcp_proxied_slow_task"]');
  await tool.locator('summary').first().click();
  await tool.locator('[name="steps"]').fill('50');
  await tool.locator('[name="interval_ms"]').fill('200');
  await tool.locator('form.call button[type="submit"]').click();
  await page.waitForFunction((name) => {
    const bar = document.querySelector(`details.tool[data-tool="${name}"] progress.call-progress`);
    return bar && !bar.hidden && bar.value >= 2;
  }, 'mcp_proxied_slow_task', { timeout: 20000 });
  assert.match(await tool.locator('.progress-text').textContent(), /^\d+ \/ 50/);
  await screenshot(tool, 'demo-page-progress.png');
  await tool.locator('button.cancel').click();
  await tool.locator('pre.result.cancelled').waitFor({ timeout: 10000 });
  assert.equal(await tool.locator('button.cancel').isHidden(), true);

  // The runtime sent notifications/cancelled for the call's request id, and the server's
  // endpoint took it (202).
  const call = logEntries(page, 'proxied', 'send', 'tools/call').last();
  await call.locator('summary').click();
  const callId = JSON.parse(await call.locator('pre').textContent()).id;
  const sent = logEntries(page, 'proxied', 'send', 'notifications/cancelled').last();
  await sent.locator('summary').click();
  assert.equal(JSON.parse(await sent.locator('pre').textContent()).params.requestId, callId);
  const delivered = await waitFor(() => proxy.requests.find((r) => r.method === 'POST' && r.status &&
                                                           /"notifications\/cancelled"/.test(r.body)),
                                  'the cancellation at the server');
  assert.equal(JSON.parse(delivered.body).params.requestId, callId);
  assert.equal(delivered.status, 202);

  // The page (and the server) are still usable.
  const result = await callThroughForm(page, 'mcp_proxied_echo', { message: 'after the cancel' });
  await page.locator('details.tool[data-tool="mcp_proxied_echo"] pre.result.ok').waitFor({ timeout: 20000 });
  assert.equal((await result.textContent()).trim(), 'after the cancel');
  assert.deepEqual(pageErrors(logs), []);
});

test('Raw JSON results shows every result as the runtime returned it', async () => {
  const { page } = browser;
  const text = await callThroughForm(page, 'mcp_demo_add', { a: '2', b: '40' });
  const tool = page.locator('details.tool[data-tool="mcp_demo_add"]');
  await tool.locator('pre.result.ok').waitFor({ timeout: 20000 });
  const raw = tool.locator('pre.result-json');
  assert.equal(await raw.isVisible(), false);
  await page.locator('#raw-json').check();
  assert.equal(await raw.isVisible(), true);
  assert.equal(await text.isVisible(), false);
  const result = JSON.parse(await raw.textContent());
  assert.deepEqual(result.structuredContent, { sum: 42 });
  assert.equal(result.isError, false);
  assert.ok(Array.isArray(result.content));
  // Every result: the cancelled call's too.
  const cancelled = JSON.parse(await page.locator('details.tool[data-tool="mcp_proxied_slow_task"] pre.result-json').textContent());
  assert.equal(cancelled.name, 'AbortError');
  await screenshot(page, 'demo-page-raw-json.png', { fullPage: true });
  await page.locator('#raw-json').uncheck();
  assert.equal(await raw.isVisible(), false);
});

test('removing a server closes it alone: the demo server stays connected', async () => {
  const { page, logs } = browser;
  const demoInitializes = await logEntries(page, 'demo', 'send', 'initialize').count();
  await page.locator('#servers li.server[data-server="second"] button.remove').click();
  await page.locator('#servers li.server[data-server="second"]').waitFor({ state: 'detached', timeout: 10000 });
  await page.locator('details.tool[data-tool="mcp_second_echo"]').waitFor({ state: 'detached', timeout: 10000 });
  const listing = await readListing(page);
  assert.equal(listing.phase, 'connected');
  assert.equal(listing.tools.filter((t) => t.name.startsWith('mcp_demo_')).length, DEMO_TOOLS.length);
  assert.equal(await logEntries(page, 'demo', 'send', 'initialize').count(), demoInitializes);
  await screenshot(page.locator('#servers-section'), 'demo-page-servers.png');
  assert.deepEqual(pageErrors(logs), []);
  assert.ok(logs.every((l) => !/\b405\b/.test(l.text)), JSON.stringify(logs.filter((l) => /405/.test(l.text))));
});

test('a server that refuses the GET stream (405) connects without an error; only Chromium logs the refusal, once', async () => {
  const { page, logs } = browser;
  const refusing = await startRecordingProxy(other.url, { refuseGet: true });
  try {
    const before = logs.length;
    await addThroughForm(page, { name: 'nostream', url: refusing.url });
    const row = page.locator('#servers li.server[data-server="nostream"]');
    await row.locator('[data-phase="connected"]').waitFor({ timeout: 30000 });
    const result = await callThroughForm(page, 'mcp_nostream_echo', { message: 'no GET stream needed' });
    await page.locator('details.tool[data-tool="mcp_nostream_echo"] pre.result.ok').waitFor({ timeout: 20000 });
    assert.equal((await result.textContent()).trim(), 'no GET stream needed');
    // The runtime asked once for the session's stream and, refused, never again; the
    // refusal is no error of the server or the page.
    const gets = refusing.requests.filter((r) => r.method === 'GET');
    assert.deepEqual(gets.map((r) => r.status), [405]);
    assert.equal(await row.locator('.error').count(), 0);
    assert.equal(await page.locator('#add-error').isHidden(), true);
    assert.equal(await page.locator('#load-errors').isHidden(), true);
    // What remains is Chromium's own network line for that one response, which no page
    // code can silence (like the one for the 400 with which a 2025 server answers the
    // protocol probe of a first connection): nothing else reached the console.
    const added = logs.slice(before);
    assert.ok(added.every((l) => l.type === 'error' && l.url === refusing.url &&
                                 l.text.startsWith('Failed to load resource: the server responded with a status of')),
              JSON.stringify(added));
    assert.equal(added.filter((l) => /status of 405/.test(l.text)).length, 1, JSON.stringify(added));
  } finally {
    await page.locator('#servers li.server[data-server="nostream"] button.remove').click();
    await refusing.close();
  }
});

test('serve-demo stops the page server and the demo server on SIGTERM', async () => {
  assert.equal(await served.stop(), 0, served.output());
});
