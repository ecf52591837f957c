// The web platform seams under Node, through the test-only module mcprt_web_seams.mjs
// (tests/web/support/web_seams_module.cpp): WebFetchHttpClient against loopback HTTP
// servers this file starts (and the native demo server), WebIndexedDbStore against
// fake-indexeddb, WebConsoleLogger against a stubbed console.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { closedPort, loadWasmModule, startDemoServer, startLoopbackServer, waitFor } from './support/harness.mjs';

const seams = await loadWasmModule('MCPRT_WEB_SEAMS_MODULE');

// callId → { events: [{kind, payload}] }; every seam callback lands here. `insideCall`
// is true while a seam function runs: an event then would break the async contract.
const calls = new Map();
let insideCall = false;
let nextCall = 1;
const contractViolations = [];
seams.seamEvent = (id, kind, payload) => {
  if (insideCall) contractViolations.push(`${kind} for call ${id} ran inside the starting call`);
  const entry = calls.get(id);
  if (entry) entry.events.push({ kind, ...JSON.parse(payload) });
};
function call(fn) {
  const id = nextCall++;
  const entry = { id, events: [] };
  calls.set(id, entry);
  insideCall = true;
  try {
    entry.startError = fn(id);
  } finally {
    insideCall = false;
  }
  return entry;
}

function http(request) {
  return call((id) => seams.httpSend(id, JSON.stringify(request)));
}
const kinds = (entry) => entry.events.map((e) => e.kind);
const completion = (entry, what = 'completion') =>
  waitFor(() => entry.events.find((e) => e.kind === 'complete'), what);
const bodyText = (entry) => entry.events.filter((e) => e.kind === 'chunk').map((e) => e.text).join('');
const header = (head, name) => head.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

after(() => {
  assert.deepEqual(contractViolations, [], 'no callback may run inside the call that started it');
});

describe('WebFetchHttpClient', () => {
  let server;
  let parked = [];  // responses a test holds open
  before(async () => {
    server = await startLoopbackServer((req, res, body) => {
      const url = new URL(req.url, 'http://x');
      if (url.pathname === '/json') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'session-42' });
        res.end(JSON.stringify({ echo: body, method: req.method, accept: req.headers.accept }));
      } else if (url.pathname === '/sse') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write('data: one\n\n');
        parked.push({ res, name: url.searchParams.get('name') });
      } else if (url.pathname === '/status') {
        res.writeHead(503, { 'Content-Type': 'text/plain' });
        res.end('overloaded, try later');
      } else if (url.pathname === '/silent') {
        parked.push({ res, name: 'silent' });
      } else if (url.pathname === '/redirect') {
        res.writeHead(302, { Location: '/json' });
        res.end();
      } else {
        res.writeHead(404);
        res.end('no such path');
      }
    });
  });
  after(async () => {
    for (const p of parked) p.res.destroy();
    await server.close();
  });
  const parkedNamed = (name) => parked.find((p) => p.name === name);

  test('Fetch_PostsHeadersAndBodyAndDeliversJsonAnswerWithResponseHeaders', async () => {
    const c = http({
      method: 'POST', url: server.url('/json'), body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      headers: [['Content-Type', 'application/json'], ['Accept', 'application/json, text/event-stream']],
    });
    assert.equal(c.startError, '');
    const done = await completion(c);
    assert.deepEqual(done, { kind: 'complete', ok: true });
    assert.deepEqual(kinds(c)[0], 'head');
    const head = c.events[0];
    assert.equal(head.status, 200);
    assert.equal(header(head, 'mcp-session-id'), 'session-42');
    assert.equal(head.url, server.url('/json'));
    const answer = JSON.parse(bodyText(c));
    assert.equal(answer.echo, '{"jsonrpc":"2.0","id":1,"method":"ping"}');
    assert.equal(answer.method, 'POST');
    assert.equal(answer.accept, 'application/json, text/event-stream');
    assert.equal(server.requests.at(-1).headers['content-type'], 'application/json');
  });

  test('Fetch_StreamsSseChunksAsTheyArriveBeforeTheBodyEnds', async () => {
    const c = http({ method: 'GET', url: server.url('/sse?name=stream'), headers: [['Accept', 'text/event-stream']] });
    // The first event arrives while the server still holds the response open.
    await waitFor(() => bodyText(c).includes('data: one'), 'the first SSE event');
    assert.ok(!kinds(c).includes('complete'), 'the stream is still open');
    const p = parkedNamed('stream');
    p.res.write('data: two\n\n');
    await waitFor(() => bodyText(c).includes('data: two'), 'the second SSE event');
    assert.ok(!kinds(c).includes('complete'));
    p.res.end('data: three\n\n');
    const done = await completion(c);
    assert.equal(done.ok, true);
    assert.equal(bodyText(c), 'data: one\n\ndata: two\n\ndata: three\n\n');
    assert.deepEqual([...new Set(kinds(c))], ['head', 'chunk', 'complete'], 'head, chunks, then completion');
  });

  test('Fetch_AbortMidStreamStopsCallbacksAndClosesTheConnection', async () => {
    const c = http({ method: 'GET', url: server.url('/sse?name=abort') });
    await waitFor(() => bodyText(c).includes('data: one'), 'the first SSE event');
    const p = parkedNamed('abort');
    const closed = new Promise((resolve) => p.res.on('close', resolve));
    seams.httpAbort(c.id);
    assert.equal(seams.httpActive(), 0, 'the client forgot the request at once');
    await closed;  // the server saw the connection go away
    const seen = c.events.length;
    p.res.write('data: late\n\n');
    // Give a late chunk every chance to arrive: a fresh request completes after it would have.
    await completion(http({ method: 'GET', url: server.url('/json') }));
    assert.equal(c.events.length, seen, 'no callback after abort, not even a completion');
  });

  test('Fetch_UnreachableUrlCompletesWithTransportErrorNamingTheUrlAndCause', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const c = http({ method: 'POST', url, body: '{}' });
    const done = await completion(c);
    assert.equal(done.ok, false);
    assert.equal(done.error.code, 'transport');
    assert.match(done.error.message, /ECONNREFUSED/);
    assert.equal(done.error.data.url, url, 'the error names the URL (the core prefixes "POST <url> failed:")');
    assert.deepEqual(kinds(c), ['complete'], 'no head before a failed connection');
  });

  test('Fetch_OpaqueNetworkFailureSaysItMayBeCorsAndHowToFixIt', async () => {
    // A browser rejects CORS (and unreachable hosts) with a bare TypeError; simulate one.
    const realFetch = globalThis.fetch;
    globalThis.fetch = () => Promise.reject(new TypeError('Failed to fetch'));
    try {
      const c = http({ method: 'POST', url: 'https://mcp.example.com/mcp', body: '{}' });
      const done = await completion(c);
      assert.equal(done.ok, false);
      assert.equal(done.error.code, 'transport');
      assert.equal(done.error.data.cors, true);
      assert.match(done.error.message, /^Failed to fetch: the server may be unreachable, or the browser blocked the request to https:\/\/mcp\.example\.com\/mcp \(CORS\)/);
      assert.match(done.error.message, /CORS/);
      assert.match(done.error.message, /Access-Control-Expose-Headers: mcp-session-id/);
      assert.match(done.error.message, /Access-Control-Allow-Headers: .*mcp-protocol-version/);
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  test('Fetch_Non2xxIsAHeadAndBodyNotAnError', async () => {
    const c = http({ method: 'POST', url: server.url('/status'), body: 'x' });
    const done = await completion(c);
    assert.equal(done.ok, true);
    assert.equal(c.events[0].status, 503);
    assert.equal(bodyText(c), 'overloaded, try later');
  });

  test('Fetch_TimeoutBeforeTheHeadCompletesWithTimeoutError', async () => {
    const c = http({ method: 'POST', url: server.url('/silent'), body: '{}', timeoutMs: 50 });
    const done = await completion(c);
    assert.equal(done.ok, false);
    assert.equal(done.error.code, 'timeout');
    assert.match(done.error.message, /no response within 50 ms/);
    assert.equal(seams.httpActive(), 0);
  });

  test('Fetch_RedirectIsReportedAsIsWhenNotFollowedAndFollowedOnRequest', async () => {
    const manual = http({ method: 'GET', url: server.url('/redirect') });
    assert.equal((await completion(manual)).ok, true);
    assert.equal(manual.events[0].status, 302);
    assert.equal(header(manual.events[0], 'location'), '/json');

    const followed = http({ method: 'GET', url: server.url('/redirect'), followRedirects: true });
    assert.equal((await completion(followed)).ok, true);
    assert.equal(followed.events[0].status, 200);
    assert.equal(followed.events[0].url, server.url('/json'), 'the head names where the redirect ended');
  });

  test('Fetch_RejectsANonHttpUrlAtSendWithoutCallbacks', async () => {
    const c = http({ method: 'GET', url: 'file:///etc/passwd' });
    assert.match(c.startError, /not an absolute http\(s\) URL/);
    await completion(http({ method: 'GET', url: server.url('/json') }));
    assert.deepEqual(c.events, []);
  });
});

describe('WebFetchHttpClient against the demo server', () => {
  let demo;
  before(async () => { demo = await startDemoServer(); });
  after(async () => { await demo?.stop(); });

  test('Fetch_InitializesAnMcpSessionAndReadsTheSessionIdHeader', async () => {
    const c = http({
      method: 'POST', url: demo.url,
      headers: [['Content-Type', 'application/json'], ['Accept', 'application/json, text/event-stream']],
      body: JSON.stringify({
        jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'web-test', version: '1' } },
      }),
    });
    assert.equal((await completion(c)).ok, true);
    assert.equal(c.events[0].status, 200);
    assert.ok(header(c.events[0], 'mcp-session-id'), 'the session id header is readable');
    assert.match(bodyText(c), /"protocolVersion":"2025-11-25"/);
  });
});

describe('WebIndexedDbStore (fake-indexeddb)', () => {
  const op = (kind, ...args) => call((id) => seams[kind](id, ...args));
  const result = (entry) => waitFor(() => entry.events[0], `${entry.id} result`);

  test('Store_GetOfAMissingKeyIsNotFound', async () => {
    assert.deepEqual(await result(op('kvGet', 'mcprt-test', 'tools', 'nobody')),
                     { kind: 'get', ok: true, found: false });
  });

  test('Store_PutThenGetReturnsTheValue', async () => {
    const value = JSON.stringify({ tools: [{ name: 'échø ✓' }], savedAt: 1 });
    assert.equal((await result(op('kvPut', 'mcprt-test', 'tools', 'server-a', value))).ok, true);
    assert.deepEqual(await result(op('kvGet', 'mcprt-test', 'tools', 'server-a')),
                     { kind: 'get', ok: true, found: true, value });
  });

  test('Store_PutReplacesAndRemoveDeletes', async () => {
    await result(op('kvPut', 'mcprt-test', 'tools', 'k', 'old'));
    await result(op('kvPut', 'mcprt-test', 'tools', 'k', 'new'));
    assert.equal((await result(op('kvGet', 'mcprt-test', 'tools', 'k'))).value, 'new');
    assert.equal((await result(op('kvRemove', 'mcprt-test', 'tools', 'k'))).ok, true);
    assert.equal((await result(op('kvGet', 'mcprt-test', 'tools', 'k'))).found, false);
    assert.equal((await result(op('kvRemove', 'mcprt-test', 'tools', 'k'))).ok, true, 'removing a missing key succeeds');
  });

  test('Store_DataOutlivesTheStoreObjectAndStoresAreSeparate', async () => {
    await result(op('kvPut', 'mcprt-test', 'tools', 'persist', 'v1'));
    seams.kvDrop('mcprt-test', 'tools');
    assert.equal((await result(op('kvGet', 'mcprt-test', 'tools', 'persist'))).value, 'v1');
    // A second object store in the same database is created by an upgrade and is empty.
    assert.equal((await result(op('kvGet', 'mcprt-test', 'other', 'persist'))).found, false);
    assert.equal((await result(op('kvGet', 'mcprt-test', 'tools', 'persist'))).value, 'v1');
  });

  test('Store_CompletionAfterTheStoreIsDestroyedIsDropped', async () => {
    const pending = op('kvPut', 'mcprt-test', 'tools', 'late', 'x');
    seams.kvDrop('mcprt-test', 'tools');
    await result(op('kvGet', 'mcprt-test', 'tools', 'late'));  // a later op on a new store object
    assert.deepEqual(pending.events, []);
  });
});

describe('WebExecutor', () => {
  test('Executor_RunsPostedClosuresLaterInOrderAndChainsComplete', async () => {
    const c = call((id) => seams.executorPost(id, 20));
    assert.deepEqual(c.events, [], 'nothing runs inside post()');
    await waitFor(() => c.events.length === 40, 'every posted closure');
    const plain = c.events.filter((e) => !e.chain).map((e) => e.index);
    const chain = c.events.filter((e) => e.chain).map((e) => e.index);
    assert.deepEqual(plain, [...Array(20).keys()], 'FIFO');
    assert.deepEqual(chain, [...Array(20).keys()]);
    assert.equal(c.events[0].chain, false, 'closures posted first run first');
  });

  test('Executor_TimersFireOnceAndCancelledTimersNever', async () => {
    let timerId;
    const cancelled = call((id) => { timerId = seams.executorTimer(id, 5); });
    const fired = call((id) => { seams.executorTimer(id, 10); });
    assert.equal(seams.executorCancel(timerId), true);
    assert.equal(seams.executorCancel(timerId), false, 'a second cancel finds nothing');
    // The 10 ms timer fires after the cancelled 5 ms one would have.
    await waitFor(() => fired.events.length === 1, 'the timer');
    assert.deepEqual(fired.events.map((e) => e.kind), ['fired']);
    assert.deepEqual(cancelled.events, []);
  });
});

describe('WebConsoleLogger', () => {
  test('Logger_WritesEachLevelToItsConsoleMethodWithAPrefix', () => {
    const seen = [];
    const saved = { ...console };
    for (const m of ['debug', 'info', 'warn', 'error']) console[m] = (text) => seen.push([m, text]);
    try {
      seams.log(0, 'd');
      seams.log(1, 'i');
      seams.log(2, 'w ✓');
      seams.log(3, 'e');
    } finally {
      Object.assign(console, saved);
    }
    assert.deepEqual(seen, [['debug', '[mcprt] d'], ['info', '[mcprt] i'], ['warn', '[mcprt] w ✓'], ['error', '[mcprt] e']]);
  });

  test('Logger_MasksSecretsInEveryLine', () => {
    const seen = [];
    const saved = console.warn;
    console.warn = (text) => seen.push(text);
    try {
      seams.log(2, 'GET http://alice:PW@h/x?api_key=K&q=1 failed; Authorization: Bearer tok123');
    } finally {
      console.warn = saved;
    }
    assert.deepEqual(seen, ['[mcprt] GET http://***@h/x?api_key=***&q=1 failed; Authorization: Bearer ***']);
  });
});
