// OAuth through the JS package (createRuntime → auth.login / logout / status, the
// 'needs-auth' phase) under Node, against the loopback OAuth fixture (demo/oauth): a whole
// sign-in, tokens kept in IndexedDB (fake-indexeddb) for the next runtime, a refresh after
// the access token expired, a refresh race between two runtimes of one page, a revoked
// refresh token, logout — and no token, code or secret in anything the runtime shows or
// logs. The user step follows the authorization URL's redirect (support/oauth_fixture.mjs).
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

import { waitFor } from './support/harness.mjs';
import { followRedirect, secretsIn, startOAuthFixture } from './support/oauth_fixture.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
if (!packageEntry) throw new Error('MCPRT_JS_PACKAGE must name the assembled mcprt-js/index.js (ctest sets it)');
const mcprt = await import(pathToFileURL(packageEntry).href);

// Every console line the runtimes write (logLevel debug), for the leak check.
const consoleLines = [];
for (const level of ['debug', 'info', 'warn', 'error', 'log']) {
  const original = console[level];
  console[level] = (...args) => {
    consoleLines.push(args.map(String).join(' '));
    if (level === 'error') original.apply(console, args);
  };
}

const kServer = 'tracker';
let dbCounter = 0;
// A fresh credentials database per test, unless a test shares one on purpose.
const freshCredentials = () => ({ database: `mcprt-oauth-runtime-${process.pid}-${++dbCounter}` });

describe('OAuth in the JS runtime', () => {
  let fixture;
  const runtimes = [];
  const everythingShown = [];  // every value the runtimes handed to us, as JSON

  before(async () => {
    fixture = await startOAuthFixture(['--access-token-ttl', '3600']);
  });
  after(async () => {
    for (const rt of runtimes) rt.dispose();
    await fixture?.stop();
    const leaks = secretsIn([...everythingShown, ...consoleLines, fixture?.requestLog() ?? ''].join('\n'), fixture?.secret_prefixes ?? []);
    assert.deepEqual(leaks, [], 'no token, refresh token, code or client secret in any status, result, event or log line');
  });

  async function runtime(options) {
    const rt = await mcprt.createRuntime({ cache: false, logLevel: 'debug', startupGateMs: 10000, ...options });
    runtimes.push(rt);
    rt.onStatus((e) => everythingShown.push(JSON.stringify(e)));
    return rt;
  }
  const show = (value) => {
    everythingShown.push(JSON.stringify(value));
    return value;
  };
  const load = async (rt) => show(await rt.discoverAndLoad({ servers: { [kServer]: { url: fixture.mcp_url } } }));
  const echo = async (rt, message) => show(await rt.callTool(`mcp_${kServer}_echo`, { message }));

  test('Login_FromNeedsAuth_SignsInReconnectsAndKeepsTokensForTheNextRuntime', async () => {
    const credentials = freshCredentials();
    const authorized = [];
    const onAuthorize = async (url, info) => {
      authorized.push({ url, ...info });
      return followRedirect(url, info);
    };
    // A host step that is not used unless asked (as with the popup): the 401 → needs-auth.
    const rt = await runtime({ credentials, onAuthorize, interactiveAuth: false, redirectUri: 'http://127.0.0.1:9/cb' });
    const phases = [];
    rt.onStatus((e) => { if (e.server === kServer) phases.push(e.phase); });
    const loaded = await load(rt);
    assert.deepEqual(loaded.connectedServers, []);
    assert.deepEqual(loaded.needsAuthServers, [kServer]);
    assert.equal(rt.status(kServer).phase, 'needs-auth');
    assert.match(rt.status(kServer).error.message, /runtime\.auth\.login\("tracker"\)/);
    assert.ok(phases.includes('needs-auth'), `status events: ${phases}`);
    assert.equal(authorized.length, 0, 'no user step without auth.login');
    assert.deepEqual(show(await rt.auth.status(kServer)).signedIn, false);

    const status = show(await rt.auth.login(kServer));
    assert.equal(authorized.length, 1);
    assert.equal(authorized[0].serverName, kServer);
    assert.equal(authorized[0].redirectUri, 'http://127.0.0.1:9/cb');
    const auth = new URL(authorized[0].url);
    assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(auth.searchParams.get('state'));
    assert.equal(auth.searchParams.get('redirect_uri'), 'http://127.0.0.1:9/cb');
    assert.equal(status.server, kServer);
    assert.equal(status.signedIn, true);
    assert.equal(status.hasAccessToken, true);
    assert.equal(status.hasRefreshToken, true);
    assert.equal(status.issuer, fixture.issuer);
    assert.equal(status.clientSource, 'registration');
    assert.ok(status.expiresAt > Date.now());
    for (const key of Object.keys(status)) assert.ok(!/token$/i.test(key) || typeof status[key] === 'boolean', `${key} is a flag, not a token`);

    await waitFor(() => rt.status(kServer)?.phase === 'connected', 'the reconnect after login');
    assert.ok(rt.tools().some((t) => t.name === `mcp_${kServer}_echo`));
    assert.match(JSON.stringify((await echo(rt, 'hi')).content), /hi/);

    // The next runtime on the same IndexedDB connects with the stored tokens: no user step.
    const countersBefore = await fixture.counters();
    const next = await runtime({ credentials });  // default popup: there is no window in Node
    const again = await load(next);
    assert.deepEqual(again.connectedServers, [kServer]);
    const countersAfter = await fixture.counters();
    assert.equal(countersAfter['authorize.ok'] ?? 0, countersBefore['authorize.ok'] ?? 0);
    assert.deepEqual((await next.auth.status()).map((s) => [s.server, s.signedIn]), [[kServer, true]]);
    rt.dispose();
    next.dispose();
  });

  test('InteractiveHost_SignsInDuringConnect_AndRefreshesAnExpiredToken', async () => {
    const rt = await runtime({ credentials: freshCredentials(), onAuthorize: followRedirect, redirectUri: 'http://127.0.0.1:9/cb' });
    const loaded = await load(rt);
    assert.deepEqual(loaded.connectedServers, [kServer], JSON.stringify(loaded.errors));
    const before = show(await rt.auth.status(kServer));
    const counters = await fixture.counters();
    await fixture.admin('expire-access-tokens', {});
    assert.match(JSON.stringify((await echo(rt, 'after expiry')).content), /after expiry/);
    const after = await fixture.counters();
    assert.equal((after['token.refresh_token.ok'] ?? 0) - (counters['token.refresh_token.ok'] ?? 0), 1, 'one refresh');
    assert.equal(after['authorize.ok'], counters['authorize.ok'], 'no new authorization');
    const status = show(await rt.auth.status(kServer));
    assert.equal(status.hasRefreshToken, true, 'the rotated refresh token was kept');
    assert.ok(status.expiresAt >= before.expiresAt);
    rt.dispose();
  });

  test('RefreshRace_TwoRuntimesOfOnePage_OneRefreshBothCallsSucceed', async () => {
    const credentials = freshCredentials();
    const first = await runtime({ credentials, onAuthorize: followRedirect, redirectUri: 'http://127.0.0.1:9/cb' });
    assert.deepEqual((await load(first)).connectedServers, [kServer]);
    const second = await runtime({ credentials, interactiveAuth: false });
    assert.deepEqual((await load(second)).connectedServers, [kServer]);
    await fixture.admin('expire-access-tokens', {});
    const counters = await fixture.counters();
    const [a, b] = await Promise.all([echo(first, 'one'), echo(second, 'two')]);
    assert.match(JSON.stringify(a.content), /one/);
    assert.match(JSON.stringify(b.content), /two/);
    const after = await fixture.counters();
    assert.equal((after['token.refresh_token.ok'] ?? 0) - (counters['token.refresh_token.ok'] ?? 0), 1,
                 'the lock made it one refresh; the other runtime read its result');
    assert.equal(after['token.refresh_token.reuse'] ?? 0, counters['token.refresh_token.reuse'] ?? 0,
                 'no rotated-out refresh token was replayed');
    first.dispose();
    second.dispose();
  });

  test('RevokedRefreshToken_GoesNeedsAuth_ThenLoginRecovers_AndLogoutSignsOut', async () => {
    const credentials = freshCredentials();
    const signIn = await runtime({ credentials, onAuthorize: followRedirect, redirectUri: 'http://127.0.0.1:9/cb' });
    assert.deepEqual((await load(signIn)).connectedServers, [kServer]);
    signIn.dispose();
    await fixture.admin('revoke-refresh-tokens', {});
    await fixture.admin('expire-access-tokens', {});
    const rt = await runtime({ credentials, onAuthorize: followRedirect, interactiveAuth: false, redirectUri: 'http://127.0.0.1:9/cb' });
    const loaded = await load(rt);
    assert.deepEqual(loaded.needsAuthServers, [kServer], JSON.stringify(loaded.errors));
    // The dead refresh token is gone, not retried.
    assert.equal(show(await rt.auth.status(kServer)).hasRefreshToken, false);
    assert.equal((await rt.auth.login(kServer)).signedIn, true);
    await waitFor(() => rt.status(kServer)?.phase === 'connected', 'connected after the new login');
    await rt.auth.logout(kServer);
    const out = show(await rt.auth.status(kServer));
    assert.equal(out.signedIn, false);
    assert.equal(out.clientId !== '', true, 'the registration stays');
    await waitFor(() => rt.status(kServer)?.phase === 'needs-auth', 'needs-auth after logout');
    rt.dispose();
  });

  test('Login_Errors_NameTheServerAndTheReason', async () => {
    const rt = await runtime({
      credentials: freshCredentials(),
      onAuthorize: async () => { throw new Error('the user said no'); },
      interactiveAuth: false,
      redirectUri: 'http://127.0.0.1:9/cb',
    });
    await load(rt);
    await assert.rejects(rt.auth.login(kServer), (e) => {
      assert.equal(e.name, 'McprtError');
      assert.match(e.message, /tracker/);
      assert.match(e.message, /the user said no/);
      return true;
    });
    await assert.rejects(rt.auth.login('nope'), (e) => e.code === 'invalid_argument' && /nope/.test(e.message));
    assert.equal(await rt.auth.status('nope'), undefined);
    assert.equal(rt.status(kServer).phase, 'needs-auth');
    rt.dispose();
    // In Node the default user step has no window to open a popup in.
    const popupless = await runtime({ credentials: freshCredentials() });
    await load(popupless);
    // (The default redirect URI, oauth-callback.html next to index.js, is a file: URL here.)
    await assert.rejects(popupless.auth.login(kServer), /no usable OAuth redirect URI for tracker \("file:.*oauth-callback\.html"\)/);
    const windowless = await runtime({ credentials: freshCredentials(), redirectUri: 'http://127.0.0.1:9/cb' });
    await load(windowless);
    await assert.rejects(windowless.auth.login(kServer), /no browser window to open a sign-in popup in: pass onAuthorize/);
    windowless.dispose();
    popupless.dispose();
  });
});
