// OAuth through the JS package (createRuntime → auth.login / logout / status, the
// 'needs-auth' phase) under Node, against the loopback OAuth fixture (demo/oauth): a whole
// sign-in, tokens kept in IndexedDB (fake-indexeddb) for the next runtime, a refresh after
// the access token expired, a refresh race between two runtimes of one page, a revoked
// refresh token, logout, step-up (interactive and not), an authorization server that
// moves — and no token, code or secret in anything the runtime shows or
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

  test('LiveRuntimeLosingItsAuthorization_TheCallSaysHowToSignIn_TheServerGoesNeedsAuth', async () => {
    const credentials = freshCredentials();
    const rt = await runtime({ credentials, onAuthorize: followRedirect, interactiveAuth: false, redirectUri: 'http://127.0.0.1:9/cb' });
    await load(rt);
    await rt.auth.login(kServer);
    await waitFor(() => rt.status(kServer)?.phase === 'connected', 'connected after login');
    assert.match(JSON.stringify((await echo(rt, 'while signed in')).content), /while signed in/);
    await fixture.admin('revoke-refresh-tokens', {});
    await fixture.admin('expire-access-tokens', {});
    const refused = await echo(rt, 'after the revocation');
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.equal(refused.errorCode, 'needs_auth');
    assert.match(refused.text, /runtime\.auth\.login\("tracker"\)/);
    await waitFor(() => rt.status(kServer)?.phase === 'needs-auth', 'needs-auth after the refused refresh');
    assert.ok(rt.tools().some((t) => t.name === `mcp_${kServer}_echo`), 'its tools stay listed (deferred)');
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

  // A fixture of its own for each of the two tests below: they change its tool scopes and
  // move its authorization server.
  async function ownFixture(t) {
    const own = await startOAuthFixture(['--access-token-ttl', '3600']);
    t.after(async () => {
      const leaks = secretsIn(own.requestLog(), own.secret_prefixes ?? []);
      await own.stop();
      assert.deepEqual(leaks, [], 'no secret in the fixture log');
    });
    return own;
  }
  const loadFrom = async (rt, own) => show(await rt.discoverAndLoad({ servers: { [kServer]: { url: own.mcp_url } } }));
  const createIssue = async (rt, title) => show(await rt.callTool(`mcp_${kServer}_create_issue`, { project: 'demo', title }));

  test('StepUp_A403InsufficientScope_AsksForTheUnion_InteractiveAtOnce_OtherwiseAtTheNextLogin', async (t) => {
    const own = await ownFixture(t);
    await own.admin('switches', { tool_scopes: { create_issue: 'issues:write' } });
    const scopesAsked = [];
    const onAuthorize = async (url, info) => {
      scopesAsked.push(new URL(url).searchParams.get('scope') ?? '');
      return followRedirect(url, info);
    };
    // An interactive host: the 403 re-authorizes at once with the union, the call succeeds.
    const rt = await runtime({ credentials: freshCredentials(), onAuthorize, redirectUri: 'http://127.0.0.1:9/cb' });
    assert.deepEqual((await loadFrom(rt, own)).connectedServers, [kServer]);
    assert.equal(scopesAsked.length, 1);
    assert.ok(!scopesAsked[0].split(' ').includes('issues:write'), scopesAsked[0]);
    const created = await createIssue(rt, 'needs issues:write');
    assert.equal(created.isError, false, JSON.stringify(created));
    assert.equal(scopesAsked.length, 2);
    assert.deepEqual(new Set(scopesAsked[1].split(' ')), new Set([...scopesAsked[0].split(' '), 'issues:write']));
    assert.equal((await own.counters())['mcp.403'], 1, 'one 403, then the stepped-up token');
    rt.dispose();

    // Not interactive: the call says which scopes and how to sign in; the next auth.login
    // (which never saw the 403) asks for them, and the call then works.
    await own.admin('switches', { tool_scopes: { create_issue: 'issues:admin' } });
    const quiet = await runtime({ credentials: freshCredentials(), onAuthorize, interactiveAuth: false, redirectUri: 'http://127.0.0.1:9/cb' });
    await loadFrom(quiet, own);
    await quiet.auth.login(kServer);
    await waitFor(() => quiet.status(kServer)?.phase === 'connected', 'connected after the first login');
    const asked = scopesAsked.length;
    let refused;
    try {
      refused = await createIssue(quiet, 'needs issues:admin');
    } catch (error) {
      refused = { isError: true, text: error.message };
    }
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.equal(refused.errorCode, 'needs_auth');
    assert.equal(quiet.status(kServer).phase, 'connected', 'a step-up leaves the connection up');
    assert.match(JSON.stringify(refused), /it asks for more scopes: [^"]*issues:admin/);
    assert.match(JSON.stringify(refused), /runtime\.auth\.login\(\\?"tracker\\?"\)/);
    assert.equal(scopesAsked.length, asked, 'no user step without auth.login');
    await quiet.auth.login(kServer);
    assert.equal(scopesAsked.length, asked + 1);
    assert.ok(scopesAsked.at(-1).split(' ').includes('issues:admin'), scopesAsked.at(-1));
    await waitFor(() => quiet.status(kServer)?.phase === 'connected', 'connected after the step-up login');
    assert.equal((await createIssue(quiet, 'with issues:admin')).isError, false);
    quiet.dispose();
  });

  test('AuthorizationServerMoves_NoOldIssuerTokenIsSent_LoginRegistersThere', async (t) => {
    const own = await ownFixture(t);
    const credentials = freshCredentials();
    const signIn = await runtime({ credentials, onAuthorize: followRedirect, redirectUri: 'http://127.0.0.1:9/cb' });
    assert.deepEqual((await loadFrom(signIn, own)).connectedServers, [kServer]);
    signIn.dispose();
    const moved = await own.admin('move-authorization-server', { issuer_path: '/tenant-b' });
    assert.equal(moved.issuer, `${own.issuer}/tenant-b`);
    await own.admin('reset-counters', {});

    const rt = await runtime({ credentials, onAuthorize: followRedirect, interactiveAuth: false, redirectUri: 'http://127.0.0.1:9/cb' });
    const loaded = await loadFrom(rt, own);
    assert.deepEqual(loaded.needsAuthServers, [kServer], JSON.stringify(loaded.errors));
    let c = await own.counters();
    assert.equal(c['token.refresh_token'] ?? 0, 0, `no refresh token went anywhere: ${JSON.stringify(c)}`);
    assert.equal(c['as POST /token'] ?? 0, 0);
    assert.equal(c['as POST /tenant-b/token'] ?? 0, 0);

    const status = show(await rt.auth.login(kServer));
    assert.equal(status.signedIn, true);
    assert.equal(status.issuer, moved.issuer);
    c = await own.counters();
    assert.equal(c['as POST /tenant-b/register'], 1, `a registration of its own there: ${JSON.stringify(c)}`);
    await waitFor(() => rt.status(kServer)?.phase === 'connected', 'connected through the new issuer');
    assert.match(JSON.stringify((await echo(rt, 'after the move')).content), /after the move/);
    rt.dispose();
  });
});
