// The `mcprt` JS package (build/<tree>/mcprt-js/index.js) under Node against the native
// demo server (--http, loopback): connect, list, call with progress, abort, disconnect,
// reload, the IndexedDB cache across runtimes (fake-indexeddb persists in-process), an
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
// new requests instead.
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
  const runtime = async (options = {}) => {
    const rt = await mcprt.createRuntime({ cache: freshCache(), logLevel: 'silent', ...options });
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
