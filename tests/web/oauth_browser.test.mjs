// OAuth in headless Chromium (SPEC §13 "The user step", web):
//  - the demo page against the loopback OAuth fixture (demo/oauth: an authorization server
//    and the MCP server it protects): the server shows 'needs-auth' with a "Sign in"
//    button; the click opens the default popup, the fixture approves and redirects to
//    mcprt/oauth-callback.html, which posts the redirect back; the server connects, a tool
//    call works, a reload reconnects with the stored tokens without a popup, "Sign out"
//    brings 'needs-auth' back. Screenshots under MCPRT_WEB_ARTIFACTS (the build tree).
//  - the web seams with the browser's own APIs: WebCredentialStore's lock through
//    navigator.locks across two tabs, WebCrypto in a page.
// Every server here (the page's static server, the fixture) listens on 127.0.0.1.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SOURCE_DIR, startLoopbackServer } from './support/harness.mjs';
import { launchBrowser } from './support/demo_page.mjs';
import { secretsIn, startOAuthFixture } from './support/oauth_fixture.mjs';

const kArtifacts = process.env.MCPRT_WEB_ARTIFACTS || path.resolve('web-artifacts');
const kJsDir = path.dirname(process.env.MCPRT_JS_PACKAGE ?? '');
const kSeamsModule = process.env.MCPRT_WEB_SEAMS_MODULE ?? '';

const kTypes = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
                 '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };

// The demo page as `mcprt serve-demo` lays it out (page at /, the package under /mcprt/,
// /config.json naming the MCP server), plus the seams module under /seams/.
function staticRoutes(mcpUrl) {
  const routes = new Map();
  for (const f of ['index.html', 'app.js', 'style.css']) routes.set(`/${f}`, path.join(SOURCE_DIR, 'demo/web', f));
  routes.set('/', path.join(SOURCE_DIR, 'demo/web/index.html'));
  for (const f of ['index.js', 'mcprt.mjs', 'mcprt.wasm', 'oauth-callback.html']) routes.set(`/mcprt/${f}`, path.join(kJsDir, f));
  // Under their own names: the module fetches the .wasm named after itself.
  routes.set(`/seams/${path.basename(kSeamsModule)}`, kSeamsModule);
  routes.set(`/seams/${path.basename(kSeamsModule).replace(/\.mjs$/, '.wasm')}`, kSeamsModule.replace(/\.mjs$/, '.wasm'));
  return (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/config.json') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify({ demoServerUrl: mcpUrl }));
      return;
    }
    if (url.pathname === '/seams/page.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>seams</title><script type="module">' +
              `import f from "./${path.basename(kSeamsModule)}"; const m = await f(); window.seams = m; window.events = [];` +
              'm.seamEvent = (id, kind, payload) => window.events.push({ id, kind, ...JSON.parse(payload) });' +
              'window.ready = true;</script>');
      return;
    }
    const file = routes.get(url.pathname);
    if (!file) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': kTypes[path.extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache' });
    res.end(readFileSync(file));
  };
}

// Uncaught exceptions and console errors of a page, minus Chromium's "Failed to load
// resource" lines for expected non-2xx answers (the 401 that starts the sign-in, the favicon).
const pageErrors = (logs) => logs.filter((l) => l.type === 'pageerror' ||
                                               (l.type === 'error' && !l.text.startsWith('Failed to load resource')));

describe('OAuth in the browser', () => {
  let fixture;
  let site;
  let browser;

  before(async () => {
    mkdirSync(kArtifacts, { recursive: true });
    fixture = await startOAuthFixture([]);
    site = await startLoopbackServer(staticRoutes(fixture.mcp_url));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await fixture?.stop();
  });

  const row = (page) => page.locator('#servers li.server[data-server="demo"]');
  const phase = (page) => row(page).locator('[data-phase]').getAttribute('data-phase');

  test('DemoPage_NeedsAuth_SignInThroughThePopup_ThenToolsWork_ReloadKeepsIt_SignOut', async () => {
    const { page, logs } = browser;
    const context = page.context();
    await page.goto(site.url('/'));
    await row(page).locator('[data-phase="needs-auth"]').waitFor({ timeout: 30000 });
    const button = row(page).locator('button.sign-in');
    assert.equal(await button.textContent(), 'Sign in');
    assert.match(await row(page).locator('.error').textContent(), /runtime\.auth\.login\("demo"\)/);
    await page.screenshot({ path: path.join(kArtifacts, 'oauth-needs-auth.png'), fullPage: true });

    const countersBefore = await fixture.counters();
    // Where the popup goes (recorded from the start: on loopback it may be done and closed
    // before waitForEvent('page') resolves).
    const popupUrls = [];
    const onRequest = (request) => {
      if (request.isNavigationRequest() && request.frame().page() !== page) popupUrls.push(request.url());
    };
    context.on('request', onRequest);
    const popupSeen = context.waitForEvent('page', { timeout: 20000 });
    await button.click();
    const popup = await popupSeen;
    if (!popup.isClosed()) await popup.waitForEvent('close', { timeout: 30000 });
    context.off('request', onRequest);
    await row(page).locator('[data-phase="connected"]').waitFor({ timeout: 30000 });
    await row(page).locator('button.sign-out').waitFor({ timeout: 10000 });
    const countersAfter = await fixture.counters();
    assert.equal((countersAfter['authorize.ok'] ?? 0) - (countersBefore['authorize.ok'] ?? 0), 1, 'one authorization');
    assert.equal((countersAfter['token.authorization_code.ok'] ?? 0) - (countersBefore['token.authorization_code.ok'] ?? 0), 1);
    // The popup went to the authorization server, which redirected to the callback page of
    // the page's own origin.
    assert.ok(popupUrls.some((u) => u.startsWith(`${fixture.issuer}/authorize?`)), popupUrls.join(' '));
    assert.ok(popupUrls.some((u) => u.startsWith(site.url('/mcprt/oauth-callback.html?'))), popupUrls.join(' '));

    // The protected server's tools are listed and callable.
    const echo = page.locator('details.tool[data-tool="mcp_demo_echo"]');
    await echo.waitFor({ timeout: 20000 });
    await echo.locator('summary').first().click();
    await echo.locator('[name="message"]').fill('signed in');
    await echo.locator('form.call button[type="submit"]').click();
    await echo.locator('pre.result.ok').waitFor({ timeout: 20000 });
    assert.equal((await echo.locator('pre.result').textContent()).trim(), 'signed in');
    await page.screenshot({ path: path.join(kArtifacts, 'oauth-signed-in.png'), fullPage: true });

    // A reload connects with the tokens kept in IndexedDB: no popup, no new authorization.
    let popups = 0;
    const countPopups = () => { popups += 1; };
    context.on('page', countPopups);
    await page.reload();
    await row(page).locator('[data-phase="connected"]').waitFor({ timeout: 30000 });
    context.off('page', countPopups);
    assert.equal(popups, 0);
    assert.equal((await fixture.counters())['authorize.ok'], countersAfter['authorize.ok']);

    // Sign out: the tokens are gone and the server asks again.
    await row(page).locator('button.sign-out').click();
    await row(page).locator('[data-phase="needs-auth"]').waitFor({ timeout: 30000 });
    await row(page).locator('button.sign-in').waitFor({ timeout: 10000 });
    await page.screenshot({ path: path.join(kArtifacts, 'oauth-signed-out.png'), fullPage: true });

    // Nothing the page shows or logs carries a token, a code or a secret.
    const text = await page.evaluate(() => document.body.innerText);
    assert.deepEqual(secretsIn([text, ...logs.map((l) => l.text)].join('\n'), fixture.secret_prefixes), []);
    assert.deepEqual(pageErrors(logs), []);
  });

  test('Popup_ARedirectWithAnotherStateIsIgnored_AndClosingThePopupFailsTheSignIn', async () => {
    const { page, logs } = browser;
    const context = page.context();
    // On its own (no state, no code) the callback page posts nothing.
    const bare = await context.newPage();
    await bare.goto(site.url('/mcprt/oauth-callback.html'));
    assert.match(await bare.locator('#message').textContent(), /nothing to do here on its own/);
    await bare.close();

    await page.goto(site.url('/'));
    await row(page).locator('[data-phase="needs-auth"]').waitFor({ timeout: 30000 });
    // The authorization server "answers" with a redirect carrying some other sign-in's state.
    const forged = site.url('/mcprt/oauth-callback.html?code=forged&state=not-this-sign-in');
    const onAuthorize = (route) => route.fulfill({ status: 302, headers: { Location: forged } });
    const isAuthorize = (url) => url.pathname.endsWith('/authorize');
    await context.route(isAuthorize, onAuthorize);
    try {
      const before = await fixture.counters();
      const popupSeen = context.waitForEvent('page', { timeout: 20000 });
      await row(page).locator('button.sign-in').click();
      const popup = await popupSeen;
      // The callback page posts the forged redirect and closes; the opener ignores it, so
      // the sign-in ends as a closed window — not with a token request for "forged".
      if (!popup.isClosed()) await popup.waitForEvent('close', { timeout: 30000 });
      const error = row(page).locator('.auth-error');
      await error.waitFor({ timeout: 20000 });
      assert.match(await error.textContent(), /Sign-in failed: .*the sign-in window for demo was closed before the sign-in finished/);
      const after = await fixture.counters();
      assert.equal(after['token.authorization_code'] ?? 0, before['token.authorization_code'] ?? 0, 'no token request');
      assert.equal(await phase(page), 'needs-auth');
    } finally {
      await context.unroute(isAuthorize, onAuthorize);
    }
    assert.deepEqual(pageErrors(logs), []);
  });

  test('WebLocks_TheCredentialLockExcludesAnotherTab_AndTimesOutThere', async () => {
    const context = browser.page.context();
    const [a, b] = [await context.newPage(), await context.newPage()];
    try {
      for (const p of [a, b]) {
        await p.goto(site.url('/seams/page.html'));
        await p.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
        assert.equal(await p.evaluate(() => typeof navigator.locks?.request), 'function');
      }
      const lockEvent = (p, id) => p.waitForFunction((i) => window.events.find((e) => e.id === i && e.kind === 'lock'), id, { timeout: 20000 })
        .then((h) => h.jsonValue());
      await a.evaluate(() => window.seams.credLock(1, 'mcprt', 'credentials', 'shared-key', 5000));
      assert.equal((await lockEvent(a, 1)).ok, true);
      // Another tab waits for it (and gives up after its wait) ...
      await b.evaluate(() => window.seams.credLock(2, 'mcprt', 'credentials', 'shared-key', 300));
      const timedOut = await lockEvent(b, 2);
      assert.equal(timedOut.ok, false);
      assert.equal(timedOut.error.code, 'timeout');
      await b.evaluate(() => window.seams.credLock(3, 'mcprt', 'credentials', 'shared-key', 0));
      assert.match((await lockEvent(b, 3)).error.message, /held elsewhere/);
      // ... and gets it once the first tab releases.
      await b.evaluate(() => window.seams.credLock(4, 'mcprt', 'credentials', 'shared-key', 10000));
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(await b.evaluate(() => window.events.some((e) => e.id === 4)), false, 'still held by the other tab');
      assert.equal(await a.evaluate(() => window.seams.credUnlock(1)), true);
      assert.equal((await lockEvent(b, 4)).ok, true);
      // Web Crypto in the page: SHA-256 of "abc".
      await a.evaluate(() => window.seams.cryptoSha256(5, '616263'));
      const digest = await a.waitForFunction(() => window.events.find((e) => e.id === 5), null, { timeout: 20000 }).then((h) => h.jsonValue());
      assert.equal(digest.hex, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
