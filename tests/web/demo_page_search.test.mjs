// The demo page's tool search box in headless Chromium (SPEC §16): `mcprt serve-demo`
// serves the page, this build's JS package and the demo MCP server, whose instructions
// name its tools (so they stay loaded); a second server, "plain", is the demo server
// behind a loopback proxy that drops its instructions (its tools are deferred). Typing
// shows the ranked hits live (name, server, match kind, summary): keywords find
// word_count, a tool's exact name ranks it first, select: keeps the order given. With tool
// search on, Load puts a hit in the loaded set and the line under the box counts what a
// model is given; Reset empties it; the mode survives a reload (localStorage). A
// screenshot goes to MCPRT_WEB_ARTIFACTS (search.png).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { startInstructionlessProxy } from './support/harness.mjs';
import { launchBrowser, startServeDemo, waitForDemoTools } from './support/demo_page.mjs';

const kArtifacts = process.env.MCPRT_WEB_ARTIFACTS || path.resolve('web-artifacts');

let served;
let browser;
let plain;


before(async () => {
  mkdirSync(kArtifacts, { recursive: true });
  const [s, b] = await Promise.allSettled([startServeDemo(), launchBrowser()]);
  [served, browser] = [s.value, b.value];
  for (const started of [s, b]) if (started.status === 'rejected') throw started.reason;
  // The demo server's URL, as serve-demo gives it to the page.
  const config = await (await fetch(new URL('config.json', served.url))).json();
  plain = await startInstructionlessProxy(config.demoServerUrl);
});

after(async () => {
  await browser?.close();
  await plain?.close();
  await served?.stop();
});

// Uncaught exceptions and console errors of the page, but for the favicon's 404 and the
// 400 with which the (2025-only) demo server refuses the protocol probe (SPEC §14).
function pageErrors(logs) {
  const expected = (l) => l.text.startsWith('Failed to load resource') &&
                          (l.url.endsWith('/favicon.ico') || (l.text.includes('status of 400') && new URL(l.url).pathname === '/mcp'));
  return logs.filter((l) => l.type === 'pageerror' || (l.type === 'error' && !expected(l)));
}

// The hits the page shows now: [{name, server, match, summary}].
function readHits(page) {
  return page.locator('#search-hits li.hit').evaluateAll((items) => items.map((li) => ({
    name: li.dataset.tool,
    server: li.querySelector('.server-badge')?.textContent ?? '',
    match: li.querySelector('.badge.match')?.textContent ?? '',
    summary: li.querySelector('.summary')?.textContent ?? '',
  })));
}

// Types `query` and waits until the first hit is `first` (the list updates as typed).
async function search(page, query, first) {
  await page.locator('#search-query').fill(query);
  await page.waitForFunction((name) => document.querySelector('#search-hits li.hit')?.dataset.tool === name,
                             first, { timeout: 20000 });
  return readHits(page);
}

const loadedNames = (page) => page.locator('#loaded-tools li[data-tool]').evaluateAll((lis) => lis.map((li) => li.dataset.tool));

test('the search box ranks hits live; with tool search on, Load and Reset change what a model is given', async () => {
  const { page, logs } = browser;
  await page.goto(served.url);
  await waitForDemoTools(page, { deferred: false });
  await page.locator('#server-name').fill('plain');
  await page.locator('#server-url').fill(plain.url('/mcp'));
  await page.locator('#add-server button[type="submit"]').click();
  await page.waitForFunction(() => document.querySelectorAll('#tools details.tool[data-deferred="false"]').length === 12,
                             null, { timeout: 30000 });
  // The default mode, auto, with twelve tools: every tool is given to a model.
  assert.equal(await page.locator('#search-mode').inputValue(), 'auto');
  await page.waitForFunction(() => /^Tool search inactive \(auto: 12 tools, at most 30\): a model is given every tool/.test(
    document.querySelector('#search-state')?.textContent ?? ''), null, { timeout: 20000 });

  const words = await search(page, 'count the words', 'mcp_demo_word_count');
  const summary = 'Counts the words (whitespace-separated), lines and characters (Unicode code points) of a text.';
  assert.deepEqual(words.slice(0, 2), [
    { name: 'mcp_demo_word_count', server: 'demo', match: 'keywords', summary },
    { name: 'mcp_plain_word_count', server: 'plain', match: 'keywords', summary },
  ]);
  // Inactive: no hit is marked or loadable, every tool is given to the model.
  assert.equal(await page.locator('#search-hits .badge.loaded, #search-hits button.load').count(), 0);

  const exact = await search(page, 'mcp_plain_add', 'mcp_plain_add');
  assert.equal(exact[0].match, 'exact-name');
  assert.equal(exact[0].server, 'plain');
  assert.equal(exact[0].summary, 'Adds two numbers and returns the sum as text and as structuredContent.');

  const selected = await search(page, 'select:mcp_plain_now,mcp_demo_echo', 'mcp_plain_now');
  assert.deepEqual(selected.map((h) => [h.name, h.match]), [['mcp_plain_now', 'selected'], ['mcp_demo_echo', 'selected']]);

  await page.locator('#search-query').fill('zzqx nothing like this');
  await page.locator('#search-hits li.none').waitFor({ timeout: 20000 });

  // Tool search on: a model is given mcp_tool_search and the demo server's tools (its
  // instructions name them) until something of "plain" is loaded.
  await page.locator('#search-mode').selectOption('on');
  await page.waitForFunction(() => /^Tool search active \(on\): a model is given 7 of 13 tools/.test(
    document.querySelector('#search-state')?.textContent ?? ''), null, { timeout: 20000 });
  assert.deepEqual(await loadedNames(page), []);
  await search(page, 'current time', 'mcp_demo_now');
  assert.equal(await page.locator('#search-hits li.hit[data-tool="mcp_demo_now"] .badge.loaded.always').textContent(),
               'always loaded', "its server's instructions name it");
  await page.locator('#search-hits li.hit[data-tool="mcp_plain_now"] button.load').click();
  await page.waitForFunction(() => document.querySelector('#search-hits li.hit[data-tool="mcp_plain_now"] .badge.loaded'),
                             null, { timeout: 20000 });
  assert.deepEqual(await loadedNames(page), ['mcp_plain_now']);
  assert.match(await page.locator('#search-state').textContent(), /a model is given 8 of 13 tools/);
  await search(page, 'count words', 'mcp_demo_word_count');
  await page.locator('#search-hits li.hit[data-tool="mcp_plain_word_count"] button.load').click();
  await page.waitForFunction(() => document.querySelectorAll('#loaded-tools li[data-tool]').length === 2, null, { timeout: 20000 });
  assert.deepEqual(await loadedNames(page), ['mcp_plain_now', 'mcp_plain_word_count']);
  assert.match(await page.locator('#search-state').textContent(), /a model is given 9 of 13 tools/);
  // The tool list itself still shows every tool.
  assert.equal(await page.locator('#tools details.tool').count(), 12);
  await search(page, 'add numbers', 'mcp_demo_add');
  const file = path.join(kArtifacts, 'search.png');
  await page.locator('#tool-search').screenshot({ path: file });
  console.log(`screenshot: ${file}`);

  await page.locator('#reset-loaded').click();
  await page.waitForFunction(() => document.querySelectorAll('#loaded-tools li[data-tool]').length === 0, null, { timeout: 20000 });
  assert.match(await page.locator('#search-state').textContent(), /a model is given 7 of 13 tools/);

  // The mode is kept across a reload.
  await page.reload();
  await waitForDemoTools(page, { deferred: 'any' });
  assert.equal(await page.locator('#search-mode').inputValue(), 'on');
  await page.waitForFunction(() => /^Tool search active \(on\)/.test(document.querySelector('#search-state')?.textContent ?? ''),
                             null, { timeout: 20000 });
  assert.deepEqual(pageErrors(logs), []);
});

test('serve-demo stops on SIGTERM', async () => {
  assert.equal(await served.stop(), 0, served.output());
});
