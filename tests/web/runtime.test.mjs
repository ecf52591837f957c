// The `mcprt` JS package (build/<tree>/mcprt-js/index.js) under Node against the native
// demo server (--http, loopback): connect, list, call with progress, abort, disconnect,
// addServer / removeServer beside live connections, the protocol log (onMessage), reload,
// the IndexedDB cache across runtimes (fake-indexeddb persists in-process), an
// unreachable server; and the index.d.ts ↔ index.js surface check.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import http from 'node:http';

import { SOURCE_DIR, closedPort, startDemoServer, startLoopbackServer, waitFor } from './support/harness.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const mcprt = await import(pathToFileURL(packageEntry).href);

// Each test uses its own IndexedDB database unless it tests sharing one.
let dbCounter = 0;
const freshCache = () => ({ database: `mcprt-runtime-test-${++dbCounter}`, store: 'tools' });

// A loopback proxy to `target` (streams responses through); with `hold = true` it parks
// new requests instead. `requests` records every request it got ({method, headers, body}).
async function startForwardingProxy(target) {
  const parked = [];
  const state = { hold: false };
  const forward = (req, res, body) => {
    const upstream = http.request(target, { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
                                  (answer) => {
                                    res.writeHead(answer.statusCode, answer.headers);
                                    answer.pipe(res);
                                  });
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  };
  const server = await startLoopbackServer((req, res, body) => {
    if (state.hold) parked.push({ req, res, body });
    else forward(req, res, body);
  });
  return {
    url: server.url('/mcp'),
    requests: server.requests,
    set hold(v) {
      state.hold = v;
      if (!v) for (const p of parked.splice(0)) forward(p.req, p.res, p.body);  // held requests go through late
    },
    async close() {
      for (const p of parked) p.res.destroy();
      await server.close();
    },
  };
}

describe('mcprt runtime against the demo server', () => {
  let demo;
  const runtimes = [];
  // The gate waits for the connection (it returns as soon as every server settled): a
  // server the cache knows would otherwise come back deferred when a loaded machine takes
  // over 250 ms to connect. Tests of the gate itself pass their own startupGateMs.
  const runtime = async (options = {}) => {
    const rt = await mcprt.createRuntime({ cache: freshCache(), logLevel: 'silent', startupGateMs: 60000, ...options });
    runtimes.push(rt);
    return rt;
  };
  before(async () => { demo = await startDemoServer(); });
  after(async () => {
    for (const rt of runtimes) rt.dispose();
    await demo?.stop();
  });

  test('Runtime_ConnectsAndListsTheServersToolsWithNamesAndSchemas', async () => {
    const rt = await runtime();
    const statuses = [];
    rt.onStatus((e) => statuses.push(`${e.server}:${e.phase}`));
    const loaded = await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    assert.deepEqual(loaded.errors, []);
    assert.deepEqual(loaded.connectedServers, ['demo']);
    const names = rt.tools().map((t) => t.name);
    assert.deepEqual(names, ['mcp_demo_add', 'mcp_demo_echo', 'mcp_demo_fail', 'mcp_demo_now',
                             'mcp_demo_slow_task', 'mcp_demo_word_count']);
    const echo = rt.tools().find((t) => t.name === 'mcp_demo_echo');
    assert.equal(echo.server, 'demo');
    assert.equal(echo.tool, 'echo');
    assert.equal(echo.deferred, false);
    assert.match(echo.path, /^mcp:demo/);
    assert.deepEqual(echo.inputSchema.required, ['message']);
    assert.deepEqual(loaded.tools.map((t) => t.name), names);
    assert.equal(rt.status('demo').status, 'connected');
    assert.equal(rt.status('demo').toolCount, 6);
    assert.equal(rt.status('nobody'), undefined);
    await waitFor(() => statuses.includes('demo:connected'), 'a connected status event');
  });

  test('Runtime_CallsAToolAndReturnsContentStructuredContentAndText', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    const echoed = await rt.callTool('mcp_demo_echo', { message: 'hi from the web runtime' });
    assert.equal(echoed.isError, false);
    assert.equal(echoed.text, 'hi from the web runtime');
    assert.deepEqual(echoed.content, [{ type: 'text', text: 'hi from the web runtime' }]);
    const sum = await rt.callTool('mcp_demo_add', { a: 2, b: 40 });
    assert.deepEqual(sum.structuredContent, { sum: 42 });
    const failed = await rt.callTool('mcp_demo_fail', { message: 'nope' });
    assert.equal(failed.isError, true);
    assert.match(failed.text, /nope/);
  });

  test('Runtime_ReportsProgressDuringACall', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    const progress = [];
    const done = await rt.callTool('mcp_demo_slow_task', { steps: 3, interval_ms: 10 },
                                   { onProgress: (p) => progress.push(p.progress) });
    assert.equal(done.isError, false);
    assert.deepEqual(progress, [1, 2, 3]);
  });

  test('Runtime_AbortRejectsWithAbortErrorAndTheRuntimeStaysUsable', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    const controller = new AbortController();
    let firstProgress;
    const seen = new Promise((resolve) => { firstProgress = resolve; });
    const call = rt.callTool('mcp_demo_slow_task', { steps: 50, interval_ms: 200 },
                             { signal: controller.signal, onProgress: () => firstProgress() });
    await seen;  // the call is running on the server
    controller.abort();
    await assert.rejects(call, (e) => e.name === 'AbortError');
    await assert.rejects(rt.callTool('mcp_demo_echo', { message: 'x' }, { signal: controller.signal }),
                         (e) => e.name === 'AbortError', 'an already aborted signal rejects at once');
    assert.equal((await rt.callTool('mcp_demo_echo', { message: 'still here' })).text, 'still here');
  });

  test('Runtime_UnknownToolRejectsWithAClearError', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    await assert.rejects(rt.callTool('mcp_demo_nope', {}), (e) => e instanceof mcprt.McprtError &&
                         /no tool named "mcp_demo_nope"/.test(e.message));
  });

  test('Runtime_DisconnectServerRemovesItsToolsAndFiresToolsChanged', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url }, other: { url: `${demo.url}?second` } } });
    assert.equal(rt.tools().filter((t) => t.server === 'other').length, 6);
    const changes = [];
    const unsubscribe = rt.onToolsChanged((tools) => changes.push(tools.length));
    await rt.disconnectServer('other');
    assert.equal(rt.tools().filter((t) => t.server === 'other').length, 0);
    assert.equal(rt.tools().filter((t) => t.server === 'demo').length, 6);
    await waitFor(() => changes.includes(6), 'a tools-changed event with the remaining tools');
    unsubscribe();
    await rt.disconnectAll();
    assert.deepEqual(rt.tools(), []);
    assert.equal(rt.status('demo')?.status ?? 'disconnected', 'disconnected');
  });

  test('Runtime_DisconnectServerLeavesADisconnectedStatusUntilItIsAddedAgain', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url }, other: { url: `${demo.url}?second` } } });
    await rt.disconnectServer('other');
    const row = rt.status('other');
    assert.equal(row?.status, 'disconnected');
    assert.equal(row.phase, 'disconnected');
    assert.equal(row.toolCount, 0);
    assert.equal(row.error, null);
    assert.deepEqual(rt.status().map((s) => `${s.name}:${s.phase}`), ['demo:connected', 'other:disconnected']);
    const added = await rt.addServer('other', { url: `${demo.url}?second` });
    assert.deepEqual(added.connectedServers, ['other']);
    assert.equal(rt.status('other').status, 'connected');
    assert.equal(added.tools.length, 6);
  });

  // The connection a proxy in front of the demo server carried: how many initialize
  // requests went through it, and the session id its last request carried.
  const initializes = (proxy) => proxy.requests.filter((r) => /"method":"initialize"/.test(r.body)).length;
  const lastSession = (proxy) => proxy.requests.filter((r) => r.method === 'POST').at(-1)?.headers['mcp-session-id'];

  test('Runtime_AddServerConnectsOnlyThatServerAndLeavesTheOthersAlone', async () => {
    const demoProxy = await startForwardingProxy(demo.url);
    const secondProxy = await startForwardingProxy(demo.url);
    try {
      const rt = await runtime();
      await rt.discoverAndLoad({ servers: { demo: { url: demoProxy.url } } });
      assert.equal(initializes(demoProxy), 1);
      const session = lastSession(demoProxy);
      assert.ok(session, 'the demo server gave a session id');
      const demoCounts = [];
      rt.onToolsChanged((tools) => demoCounts.push(tools.filter((t) => t.server === 'demo').length));
      const statuses = [];
      rt.onStatus((e) => statuses.push(`${e.server}:${e.phase}`));

      const added = await rt.addServer('second', { url: secondProxy.url });
      assert.deepEqual(added.errors, []);
      assert.deepEqual(added.connectedServers, ['second']);
      assert.deepEqual(added.tools.map((t) => t.name), ['mcp_second_add', 'mcp_second_echo', 'mcp_second_fail',
                                                        'mcp_second_now', 'mcp_second_slow_task', 'mcp_second_word_count']);
      assert.equal(rt.tools().length, 12);
      assert.equal(initializes(secondProxy), 1);
      await waitFor(() => demoCounts.length > 0, 'a tools-changed event');
      // The demo server's connection was never touched: its tools never left, no status
      // change, no new initialize, and a call goes out in the same session.
      assert.ok(demoCounts.every((n) => n === 6), `demo tool counts seen: ${demoCounts}`);
      assert.ok(!statuses.some((s) => s.startsWith('demo:')), `status events: ${statuses}`);
      assert.equal(rt.status('demo').status, 'connected');
      assert.equal((await rt.callTool('mcp_demo_echo', { message: 'still one session' })).text, 'still one session');
      assert.equal(initializes(demoProxy), 1);
      assert.equal(lastSession(demoProxy), session);
    } finally {
      await demoProxy.close();
      await secondProxy.close();
    }
  });

  test('Runtime_AddServerAgainReconnectsItOnlyWhenItIsDownOrItsConfigChanged', async () => {
    const demoProxy = await startForwardingProxy(demo.url);
    const secondProxy = await startForwardingProxy(demo.url);
    try {
      const rt = await runtime();
      await rt.discoverAndLoad({ servers: { demo: { url: demoProxy.url }, second: { url: secondProxy.url } } });
      const session = lastSession(demoProxy);
      // The same config of a connected server: nothing happens.
      const again = await rt.addServer('second', { url: secondProxy.url });
      assert.equal(again.tools.length, 6);
      assert.equal(initializes(secondProxy), 1);
      // Of a disconnected one: it connects again.
      await rt.disconnectServer('second');
      assert.equal(rt.status('second').status, 'disconnected');
      const back = await rt.addServer('second', { url: secondProxy.url });
      assert.deepEqual(back.connectedServers, ['second']);
      assert.equal(initializes(secondProxy), 2);
      // A changed config (an include filter, the same endpoint) replaces its connection.
      const changed = await rt.addServer('second', { url: secondProxy.url, includeTools: ['echo'] });
      assert.deepEqual(changed.tools.map((t) => t.name), ['mcp_second_echo']);
      assert.equal(initializes(secondProxy), 3);
      assert.deepEqual(rt.tools().filter((t) => t.server === 'second').map((t) => t.name), ['mcp_second_echo']);
      // ... and a reload keeps the changed config.
      await rt.reload();
      assert.deepEqual(rt.tools().filter((t) => t.server === 'second').map((t) => t.name), ['mcp_second_echo']);
      assert.equal(initializes(demoProxy), 2, 'the demo server reconnected only for the reload');
      assert.notEqual(lastSession(demoProxy), session);
    } finally {
      await demoProxy.close();
      await secondProxy.close();
    }
  });

  test('Runtime_AddServerSendsItsHeadersAndABearerToken', async () => {
    const proxy = await startForwardingProxy(demo.url);
    try {
      const rt = await runtime();
      const added = await rt.addServer('withHeaders', {
        url: proxy.url,
        headers: { Authorization: 'Bearer demo-t0ken', 'X-Demo-Key': 'k1' },
      });
      assert.deepEqual(added.connectedServers, ['withHeaders']);
      const posts = proxy.requests.filter((r) => r.method === 'POST');
      assert.ok(posts.length >= 2, 'initialize and tools/list went through the proxy');
      for (const r of posts) {
        assert.equal(r.headers.authorization, 'Bearer demo-t0ken');
        assert.equal(r.headers['x-demo-key'], 'k1');
      }
    } finally {
      await proxy.close();
    }
  });

  test('Runtime_AddServerRefusesAnInvalidConfigAndTheServerKeepsWhatItHad', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    const invalid = (name) => (e) => e instanceof mcprt.McprtError && e.code === 'invalid_config' &&
                                     e.message.includes(`"${name}"`);
    await assert.rejects(rt.addServer('bad', { url: 'ftp://example.com/mcp' }), invalid('bad'));
    assert.equal(rt.status('bad'), undefined);
    await assert.rejects(rt.addServer('', { url: demo.url }), TypeError);
    await assert.rejects(rt.addServer('x', null), TypeError);
    // A known server given an invalid config keeps its config and its connection.
    await assert.rejects(rt.addServer('demo', { url: 'ftp://example.com/mcp' }), invalid('demo'));
    assert.equal(rt.status('demo').status, 'connected');
    assert.equal(rt.tools().length, 6);
    // One endpoint is one connection: the same URL under another name is refused, whether
    // that name sorts after the running server's (it would lose the endpoint) or before it
    // (it would take it).
    await assert.rejects(rt.addServer('twin', { url: demo.url }),
                         (e) => e.code === 'invalid_config' && /"twin" has the same endpoint as "demo"/.test(e.message));
    await assert.rejects(rt.addServer('aaa', { url: demo.url }),
                         (e) => e.code === 'invalid_config' && /"aaa" has the same endpoint as "demo"/.test(e.message));
    assert.equal(rt.status('twin'), undefined);
    assert.equal(rt.status('aaa'), undefined);
    assert.deepEqual(rt.tools().map((t) => t.server), Array(6).fill('demo'));
    const reloaded = await rt.reload();
    assert.deepEqual(reloaded.connectedServers, ['demo']);
    assert.deepEqual(reloaded.errors, []);
  });

  test('Runtime_RemoveServerConnectsTheTwinItShadowed', async () => {
    const rt = await runtime();
    // One endpoint, one connection: "twin" loses it to "demo" (by name) and waits.
    const loaded = await rt.discoverAndLoad({ servers: { demo: { url: demo.url }, twin: { url: demo.url } } });
    assert.deepEqual(loaded.connectedServers, ['demo']);
    assert.equal(rt.status('twin'), undefined);
    // Without "demo" the twin's entry is the endpoint's: it connects now, not at the next reload.
    await rt.removeServer('demo');
    assert.equal(rt.status('demo'), undefined);
    assert.equal(rt.status('twin')?.status, 'connected');
    assert.deepEqual(rt.tools().map((t) => t.server), Array(6).fill('twin'));
    const reloaded = await rt.reload();
    assert.deepEqual(reloaded.connectedServers, ['twin']);
    // Removing a server that shadowed nothing connects nothing else, and one disconnected on
    // purpose stays so.
    await rt.addServer('other', { url: `${demo.url}?other` });
    await rt.disconnectServer('other');
    await rt.removeServer('twin');
    assert.equal(rt.status('other')?.status, 'disconnected');
    assert.deepEqual(rt.tools(), []);
  });

  test('Runtime_AddServersBeforeAnyLoadAndAtOnceApplyInOrder', async () => {
    const rt = await runtime();
    await assert.rejects(rt.discoverAndLoad({ servers: 'not a config' }), /must be an object/);
    // Nothing loaded: the first one starts the configuration, the second adds to it.
    const [a, b] = await Promise.all([rt.addServer('a', { url: `${demo.url}?a` }),
                                      rt.addServer('b', { url: `${demo.url}?b` })]);
    assert.deepEqual([a.connectedServers, b.connectedServers], [['a'], ['b']]);
    assert.equal(rt.tools().length, 12);
    // Two configs of one server at once: the last one given wins.
    await Promise.all([rt.addServer('c', { url: `${demo.url}?c`, includeTools: ['echo'] }),
                       rt.addServer('c', { url: `${demo.url}?c`, includeTools: ['add'] })]);
    assert.deepEqual(rt.tools().filter((t) => t.server === 'c').map((t) => t.name), ['mcp_c_add']);
    const reloaded = await rt.reload();
    assert.deepEqual(reloaded.connectedServers, ['a', 'b', 'c']);
    assert.equal(rt.tools().length, 13);
  });

  test('Runtime_AddServerDuringALoadWaitsForIt', async () => {
    const rt = await runtime();
    const loading = rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    const adding = rt.addServer('second', { url: `${demo.url}?second` });
    const [loaded, added] = await Promise.all([loading, adding]);
    assert.deepEqual(loaded.connectedServers, ['demo']);
    assert.deepEqual(added.connectedServers, ['second']);
    assert.equal(rt.tools().length, 12);
  });

  test('Runtime_RemoveServerForgetsItAndLeavesTheOthersConnected', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { mcpServers: { demo: { url: demo.url }, other: { url: `${demo.url}?second` } } } });
    await rt.removeServer('other');
    assert.equal(rt.status('other'), undefined);
    assert.equal(rt.tools().filter((t) => t.server === 'other').length, 0);
    assert.equal(rt.status('demo').status, 'connected');
    const reloaded = await rt.reload();
    assert.deepEqual(reloaded.connectedServers, ['demo']);
    assert.equal(rt.tools().length, 6);
    await rt.removeServer('nobody');  // unknown: nothing to do
  });

  test('Runtime_OnMessageShowsEveryMessageSentAndReceivedUntilUnsubscribed', async () => {
    const rt = await runtime();
    const log = [];
    const unsubscribe = rt.onMessage((m) => log.push(m));
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    const line = (m) => `${m.server} ${m.direction} ${m.message.method ?? `#${JSON.stringify(m.message.id)}`}`;
    const initialize = log.find((m) => m.direction === 'send' && m.message.method === 'initialize');
    const list = log.find((m) => m.direction === 'send' && m.message.method === 'tools/list');
    assert.ok(initialize && list, log.map(line).join('\n'));
    const answer = (request) => log.findIndex((m) => m.direction === 'receive' && m.message.id === request.message.id);
    assert.ok(answer(initialize) > log.indexOf(initialize));
    assert.ok(answer(list) > answer(initialize));
    assert.equal(log[answer(list)].message.result.tools.length, 6);
    assert.ok(log.every((m) => m.server === 'demo'));

    // An aborted call shows its notifications/cancelled, naming the call's request id.
    const controller = new AbortController();
    let running;
    const started = new Promise((resolve) => { running = resolve; });
    const call = rt.callTool('mcp_demo_slow_task', { steps: 50, interval_ms: 100 },
                             { signal: controller.signal, onProgress: () => running() });
    await started;
    controller.abort();
    await assert.rejects(call, (e) => e.name === 'AbortError');
    const callRequest = log.find((m) => m.direction === 'send' && m.message.method === 'tools/call');
    await waitFor(() => log.find((m) => m.message.method === 'notifications/cancelled'), 'the cancellation');
    const cancelled = log.find((m) => m.message.method === 'notifications/cancelled');
    assert.equal(cancelled.direction, 'send');
    assert.equal(cancelled.message.params.requestId, callRequest.message.id);
    assert.ok(log.some((m) => m.direction === 'receive' && m.message.method === 'notifications/progress'));

    unsubscribe();
    const before = log.length;
    await rt.callTool('mcp_demo_echo', { message: 'unheard' });
    assert.equal(log.length, before);
  });

  test('Runtime_OnMessageOptionLogsFromTheFirstMessage', async () => {
    const log = [];
    const rt = await runtime({ onMessage: (m) => log.push(m) });
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    assert.equal(log[0]?.direction, 'send', JSON.stringify(log[0]));
    assert.equal(log[0].server, 'demo');
    assert.ok(log.some((m) => m.direction === 'receive' && m.message.result?.tools?.length === 6));
    await assert.rejects(mcprt.createRuntime({ cache: false, onMessage: 'log' }), TypeError);
  });

  test('Runtime_ReloadReconnectsTheSameServers', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    await rt.disconnectAll();
    assert.deepEqual(rt.tools(), []);
    const reloaded = await rt.reload();
    assert.deepEqual(reloaded.connectedServers, ['demo']);
    assert.equal(rt.tools().length, 6);
    assert.equal((await rt.callTool('mcp_demo_echo', { message: 'again' })).text, 'again');
  });

  test('Runtime_SecondRuntimeServesDeferredToolsFromTheIndexedDbCache', async () => {
    // One URL for both runtimes (the cache key is the unresolved config): a proxy that
    // forwards to the demo server first, then holds every request, so the second runtime
    // can only get the tools from the cache at its gate.
    const proxy = await startForwardingProxy(demo.url);
    try {
      const cache = freshCache();
      const servers = { demo: { url: proxy.url, reconnect: false } };
      const first = await runtime({ cache });
      const cold = await first.discoverAndLoad({ servers });
      assert.equal(cold.tools.length, 6);
      assert.ok(cold.tools.every((t) => !t.deferred));
      first.dispose();

      proxy.hold = true;  // the restart finds the server unresponsive
      const second = await runtime({ cache, startupGateMs: 50 });
      const warm = await second.discoverAndLoad({ servers });
      assert.deepEqual(warm.tools.map((t) => t.name), cold.tools.map((t) => t.name));
      assert.ok(warm.tools.every((t) => t.deferred), 'served from the cache while connecting');
      assert.equal(second.status('demo').toolsFromCache, true);
      assert.equal(second.status('demo').status, 'connecting');
      second.dispose();
    } finally {
      await proxy.close();
    }
  });

  test('Runtime_UnreachableServerIsAPerServerErrorNamingIt', async () => {
    const rt = await runtime();
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const loaded = await rt.discoverAndLoad({ servers: { gone: { url, reconnect: false }, demo: { url: demo.url } } });
    assert.deepEqual(loaded.connectedServers, ['demo']);
    const error = loaded.errors.find((e) => e.server === 'gone');
    assert.ok(error, JSON.stringify(loaded.errors));
    assert.match(error.error, new RegExp(`^Server "gone": POST ${url.replace(/[.]/g, '[.]')} failed: .*ECONNREFUSED`));
    assert.equal(rt.tools().filter((t) => t.server === 'gone').length, 0);
  });

  test('Runtime_StdioServerIsRejectedInTheBrowserBuild', async () => {
    const rt = await runtime();
    const loaded = await rt.discoverAndLoad({ servers: { mcpServers: { local: { command: 'npx' } } } });
    assert.equal(loaded.tools.length, 0);
    assert.match(loaded.errors.map((e) => e.error).join('\n'), /stdio servers are not available in the browser/);
  });

  test('Runtime_LateServerToolsArriveThroughOnToolsChanged', async () => {
    const proxy = await startForwardingProxy(demo.url);
    try {
      proxy.hold = true;  // the first connection attempt hangs: nothing at the gate
      const rt = await runtime({ waitForUncached: false, startupGateMs: 10 });
      const seen = [];
      rt.onToolsChanged((tools) => seen.push(tools.map((t) => t.name)));
      const loaded = await rt.discoverAndLoad({ servers: { late: { url: proxy.url } } });
      assert.deepEqual(loaded.tools, []);
      assert.equal(rt.status('late').status, 'connecting');
      proxy.hold = false;  // the held initialize goes through now
      await waitFor(() => seen.some((names) => names.includes('mcp_late_echo')), 'the late tools', 20000);
      assert.equal(rt.tools().length, 6);
      assert.equal((await rt.callTool('mcp_late_echo', { message: 'late' })).text, 'late');
    } finally {
      await proxy.close();
    }
  });

  test('Runtime_DisposeDuringLoadRejectsAndClosesTheConnection', async () => {
    let closed;
    const sawClose = new Promise((resolve) => { closed = resolve; });
    const silent = await startLoopbackServer((req, res) => { res.on('close', closed); });
    try {
      const rt = await runtime();
      const loading = rt.discoverAndLoad({ servers: { silent: { url: silent.url('/mcp') } } });
      await waitFor(() => silent.requests.length > 0, 'the initialize request');
      rt.dispose();
      await assert.rejects(loading, /disposed/);
      await sawClose;  // the fetch was aborted: no socket outlives the runtime
    } finally {
      await silent.close();
    }
  });

  test('Runtime_DisposeRejectsPendingCallsAndLaterUse', async () => {
    const rt = await runtime();
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    const call = rt.callTool('mcp_demo_slow_task', { steps: 50, interval_ms: 200 });
    rt.dispose();
    await assert.rejects(call, /disposed/);
    await assert.rejects(rt.callTool('mcp_demo_echo', { message: 'x' }), /disposed/);
    assert.deepEqual(rt.tools(), []);
  });
});

describe('index.d.ts', () => {
  test('Types_DeclareExactlyTheRuntimeMethodsAndExportsOfIndexJs', async () => {
    const dts = readFileSync(path.join(path.dirname(packageEntry), 'index.d.ts'), 'utf8');
    const rt = await mcprt.createRuntime({ cache: false, logLevel: 'silent' });
    try {
      const proto = Object.getPrototypeOf(rt);
      const jsMembers = Object.getOwnPropertyNames(proto).filter((n) => n !== 'constructor').sort();
      const body = dts.match(/export interface Runtime \{([\s\S]*?)\n\}/);
      assert.ok(body, 'index.d.ts declares interface Runtime');
      const declared = [...new Set([...body[1].matchAll(/^\s+(?:readonly\s+)?(\w+)\s*[(:]/gm)].map((m) => m[1]))].sort();
      assert.deepEqual(declared, jsMembers);
    } finally {
      rt.dispose();
    }
    const jsExports = Object.keys(mcprt).sort();
    const dtsExports = [...dts.matchAll(/^export declare (?:function|class) (\w+)/gm)].map((m) => m[1]).sort();
    assert.deepEqual(dtsExports, jsExports);
  });

  test('Types_PackageJsonPointsAtTheTypesAndIsAnEsModule', () => {
    const pkg = JSON.parse(readFileSync(path.join(SOURCE_DIR, 'js/package.json'), 'utf8'));
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.types, './index.d.ts');
    assert.equal(pkg.exports['.'].default, './index.js');
  });

  test('Package_ShipsEveryListedFileAndItsLicense', () => {
    const packageDir = path.dirname(packageEntry);
    const pkg = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    assert.equal(pkg.license, 'MIT');
    assert.ok(pkg.files.includes('LICENSE'), 'the tarball lists the LICENSE');
    for (const file of pkg.files) {
      assert.ok(existsSync(path.join(packageDir, file)), `${file} is in the assembled package ${packageDir}`);
    }
    assert.match(readFileSync(path.join(packageDir, 'LICENSE'), 'utf8'), /^MIT License/);
  });
});
