// The demo page's Resources and Prompts tabs in headless Chromium (SPEC §15): `mcprt
// serve-demo` serves the page, this build's JS package and the demo MCP server. The
// Resources tab lists the demo server's resources and template; opening demo://readme shows
// its Markdown as text, demo://logo.png shows the PNG as an image the browser decoded, the
// template takes its variable with the server's completions as suggestions, and Subscribe
// shows demo://ticker's updates live. The Prompts tab fills greet (its style suggested by
// completion) and summarize and shows the messages. Screenshots of both tabs go to
// MCPRT_WEB_ARTIFACTS (the build tree).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { launchBrowser, startServeDemo, waitForDemoTools } from './support/demo_page.mjs';

const kArtifacts = process.env.MCPRT_WEB_ARTIFACTS || path.resolve('web-artifacts');

let served;
let browser;

before(async () => {
  mkdirSync(kArtifacts, { recursive: true });
  const [s, b] = await Promise.allSettled([startServeDemo(), launchBrowser()]);
  [served, browser] = [s.value, b.value];
  for (const started of [s, b]) if (started.status === 'rejected') throw started.reason;
});

after(async () => {
  await browser?.close();
  await served?.stop();
});

// Uncaught exceptions and console errors of the page, but for the favicon's 404 and the
// 400 with which the (2025-only) demo server refuses the protocol probe (SPEC §14).
function pageErrors(logs) {
  const expected = (l) => l.text.startsWith('Failed to load resource') &&
                          (l.url.endsWith('/favicon.ico') || (l.text.includes('status of 400') && new URL(l.url).pathname === '/mcp'));
  return logs.filter((l) => l.type === 'pageerror' || (l.type === 'error' && !expected(l)));
}

async function screenshot(page, name) {
  const file = path.join(kArtifacts, name);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`screenshot: ${file}`);
}

// The suggestions the page put in an input's datalist.
const suggestions = (input) => input.evaluate((i) => [...(i.list?.options ?? [])].map((o) => o.value));

async function waitForSuggestions(input, expected) {
  await input.page().waitForFunction(({ element, want }) => {
    const got = [...(element.list?.options ?? [])].map((o) => o.value);
    return JSON.stringify(got) === JSON.stringify(want);
  }, { element: await input.elementHandle(), want: expected }, { timeout: 20000 });
  assert.deepEqual(await suggestions(input), expected);
}

test('the Resources tab reads text, renders the PNG, reads through the template and shows updates live', async () => {
  const { page, logs } = browser;
  await page.goto(served.url);
  await waitForDemoTools(page, { deferred: false });
  assert.equal(await page.locator('#resources-section').isHidden(), true, 'the Tools tab is the first one shown');
  await page.locator('#tab-resources').click();
  assert.equal(await page.locator('#tools-section').isHidden(), true);
  assert.equal(await page.locator('#tab-resources').getAttribute('aria-selected'), 'true');

  const readme = page.locator('details.resource[data-uri="demo://readme"]');
  await readme.waitFor({ timeout: 20000 });
  assert.deepEqual(await page.locator('#resources details.resource').evaluateAll((ds) => ds.map((d) => d.dataset.uri)),
                   ['demo://logo.png', 'demo://readme', 'demo://ticker']);
  assert.match(await page.locator('#tab-resources').textContent(), /\(4\)/, 'three resources and a template');
  await readme.locator('summary .entry-name').click();
  const text = readme.locator('.content-item.text pre');
  await text.waitFor({ timeout: 20000 });
  assert.match(await text.textContent(), /^# mcprt demo server\n/);
  assert.equal(await readme.locator('button.subscribe').getAttribute('aria-pressed'), 'false', 'opened, not subscribed');

  const logo = page.locator('details.resource[data-uri="demo://logo.png"]');
  await logo.locator('summary .entry-name').click();
  const image = logo.locator('.content-item.image img');
  await image.waitFor({ timeout: 20000 });
  // Decoded by the browser: the 16x16 PNG the server sent as a base64 blob.
  await page.waitForFunction((img) => img.complete && img.naturalWidth > 0, await image.elementHandle());
  assert.deepEqual(await image.evaluate((img) => [img.naturalWidth, img.naturalHeight]), [16, 16]);
  assert.match(await logo.locator('.content-item.image').textContent(), /115 B/);

  const template = page.locator('details.template[data-uri-template="demo://notes/{name}"]');
  await template.locator('summary .entry-name').click();
  const name = template.locator('input[name="name"]');
  await name.focus();
  await waitForSuggestions(name, ['alpha', 'beta', 'gamma']);
  await name.fill('g');
  await waitForSuggestions(name, ['gamma']);
  await name.fill('gamma');
  assert.equal(await template.locator('code.expanded').textContent(), 'demo://notes/gamma');
  await template.locator('button[type="submit"]').click();
  await template.locator('.content-item.text pre').waitFor({ timeout: 20000 });
  assert.match(await template.locator('.content-item.text pre').textContent(), /^Note gamma: /);

  const ticker = page.locator('details.resource[data-uri="demo://ticker"]');
  await ticker.locator('button.subscribe').click();
  await page.waitForFunction(() => /^\d+ updates?, last /.test(
    document.querySelector('details.resource[data-uri="demo://ticker"] .badge.updated')?.textContent ?? ''),
  null, { timeout: 20000 });
  assert.equal(await ticker.locator('button.subscribe').getAttribute('aria-pressed'), 'true');
  assert.equal(await ticker.evaluate((d) => d.open), true, 'subscribing opens the resource');
  // The update was read: the ticker shows a tick the server advanced.
  await page.waitForFunction(() => /^tick [1-9]\d*$/.test(
    document.querySelector('details.resource[data-uri="demo://ticker"] .content-item.text pre')?.textContent ?? ''),
  null, { timeout: 20000 });
  await screenshot(page, 'resources-tab.png');
  await ticker.locator('button.subscribe').click();
  await page.waitForFunction(() => document.querySelector('details.resource[data-uri="demo://ticker"] button.subscribe')
    ?.getAttribute('aria-pressed') === 'false', null, { timeout: 10000 });
  assert.deepEqual(pageErrors(logs), []);
});

test('the Prompts tab fills greet with completions and shows the messages; summarize embeds the resource', async () => {
  const { page, logs } = browser;
  await page.locator('#tab-prompts').click();
  assert.equal(await page.locator('#resources-section').isHidden(), true);
  assert.deepEqual(await page.locator('#prompts details.prompt').evaluateAll((ds) => ds.map((d) => d.dataset.prompt)),
                   ['demo:greet', 'demo:summarize']);
  const greet = page.locator('details.prompt[data-prompt="demo:greet"]');
  await greet.locator('summary .entry-name').click();
  await greet.locator('input[name="name"]').fill('Ada');
  const style = greet.locator('input[name="style"]');
  await style.focus();
  await waitForSuggestions(style, ['formal', 'casual', 'pirate']);
  await style.fill('p');
  await waitForSuggestions(style, ['pirate']);
  await style.fill('pirate');
  await greet.locator('button[type="submit"]').click();
  const message = greet.locator('.message pre.message-text');
  await message.waitFor({ timeout: 20000 });
  assert.equal(await message.textContent(), 'Please greet Ada the way a pirate would.');
  assert.equal(await greet.locator('.message .role').textContent(), 'user');
  assert.equal(await greet.locator('.read-status').textContent(), 'A greeting for Ada');

  const summarize = page.locator('details.prompt[data-prompt="demo:summarize"]');
  await summarize.locator('summary .entry-name').click();
  const uri = summarize.locator('input[name="uri"]');
  await uri.focus();
  await uri.fill('demo://r');
  await waitForSuggestions(uri, ['demo://readme']);
  await uri.fill('demo://readme');
  await summarize.locator('button[type="submit"]').click();
  await summarize.locator('.message .content-item.text pre').waitFor({ timeout: 20000 });
  assert.equal(await summarize.locator('.message').count(), 2);
  assert.match(await summarize.locator('.message .content-item.text pre').textContent(), /^# mcprt demo server/);
  await screenshot(page, 'prompts-tab.png');
  assert.deepEqual(pageErrors(logs), []);
});

test('serve-demo stops on SIGTERM', async () => {
  assert.equal(await served.stop(), 0, served.output());
});
