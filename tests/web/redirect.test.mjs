// Redirects across origins in the web build (SPEC §17): credentials, configured headers and
// the session headers never reach another origin, through the browser fetch client alone
// (the seams module) and through the whole runtime (the JS package) under Node.
//  - Node's fetch shows a redirect of `redirect: "manual"` as it is (302 + Location), so the
//    core's hop-by-hop rule runs there: the other origin gets the hop without them.
//  - A browser hides it (an opaque redirect); that is simulated with a stubbed fetch that
//    answers the way a browser does, and must become a clear error, with nothing sent to
//    where the redirect leads.
// Every server listens on 127.0.0.1; two ports are two origins.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

import { loadWasmModule, startLoopbackServer, waitFor } from './support/harness.mjs';

const seams = await loadWasmModule('MCPRT_WEB_SEAMS_MODULE');
const calls = new Map();
let nextCall = 1;
seams.seamEvent = (id, kind, payload) => {
  calls.get(id)?.events.push({ kind, ...JSON.parse(payload) });
};
function http(request) {
  const id = nextCall++;
  const entry = { id, events: [] };
  calls.set(id, entry);
  entry.startError = seams.httpSend(id, JSON.stringify(request));
  return entry;
}
const completion = (entry) => waitFor(() => entry.events.find((e) => e.kind === 'complete'), 'completion');
const header = (head, name) => head.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

// Headers that must stay with their origin, as the tests send them.
const kBound = ['authorization', 'x-api-key', 'cookie', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
const boundHeadersOf = (request) => kBound.filter((h) => h in request.headers);

describe('WebFetchHttpClient: redirects of requests with credentials', () => {
  let home;
  let other;
  before(async () => {
    other = await startLoopbackServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('you should not be here');
    });
    home = await startLoopbackServer((req, res) => {
      res.writeHead(302, { Location: other.url('/collect') });
      res.end();
    });
  });
  after(async () => {
    await home.close();
    await other.close();
  });

  test('Fetch_ACredentialedRedirectIsNotFollowedAndTheOtherOriginHearsNothing', async () => {
    const c = http({
      method: 'GET', url: home.url('/mcp'), followRedirects: false,
      headers: [['Authorization', 'Bearer secret-token'], ['Mcp-Session-Id', 's1'], ['Accept', 'text/event-stream']],
    });
    assert.equal(c.startError, '');
    assert.equal((await completion(c)).ok, true);
    const head = c.events.find((e) => e.kind === 'head');
    assert.equal(head.status, 302, 'the redirect is reported as it is, for the core to decide');
    assert.equal(header(head, 'location'), other.url('/collect'));
    assert.equal(home.requests.at(-1).headers.authorization, 'Bearer secret-token');
    assert.equal(other.requests.length, 0, 'fetch itself sent nothing to the other origin');
  });

  test('Fetch_AnOpaqueRedirectInTheBrowserIsAClearTransportErrorAndNothingIsSentOn', async () => {
    // What a browser's fetch does with redirect: "manual": it stops at the 3xx and hides it.
    const realFetch = globalThis.fetch;
    const seen = [];
    globalThis.fetch = (url, init) => {
      seen.push({ url, redirect: init.redirect, headers: init.headers });
      if (init.redirect !== 'manual') return realFetch(url, init);
      return Promise.resolve({ type: 'opaqueredirect', status: 0, url: '', headers: new Headers(), body: null });
    };
    try {
      const url = 'https://mcp.example.com/mcp';
      const c = http({ method: 'GET', url, headers: [['Authorization', 'Bearer secret-token']] });
      const done = await completion(c);
      assert.equal(done.ok, false);
      assert.equal(done.error.code, 'transport');
      assert.equal(done.error.data.redirect, true, 'marked as a redirect, not as a server that is gone');
      assert.equal(done.error.data.url, url);
      assert.match(done.error.message, /the server redirected \(HTTP 3xx\)/);
      assert.match(done.error.message, /mcprt does not follow redirects of requests carrying credentials/);
      assert.match(done.error.message, /configure the final URL/);
      assert.deepEqual(c.events.map((e) => e.kind), ['complete'], 'no head for a hidden redirect');
      assert.equal(seen.length, 1, 'one fetch, to the configured URL only');
      assert.equal(seen[0].url, url);
      assert.equal(seen[0].redirect, 'manual');
    } finally {
      globalThis.fetch = realFetch;
    }
  });
});

// --- the whole runtime: core rules over the fetch client ------------------------------

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const mcprt = await import(pathToFileURL(packageEntry).href);
let dbCounter = 0;

// A minimal Streamable HTTP MCP server: initialize (session sess-1), 202 for notifications,
// tools/list with one tool; `onGet(req, res)` answers the GET stream.
function streamableServer(onGet) {
  return (req, res, body) => {
    if (req.method === 'GET') return onGet(req, res);
    if (req.method === 'DELETE') { res.writeHead(200); return res.end(); }
    const msg = JSON.parse(body || '{}');
    if (msg.id === undefined) { res.writeHead(202); return res.end(); }
    let result;
    if (msg.method === 'initialize') {
      result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
                 serverInfo: { name: 'home', version: '1' } };
    } else if (msg.method === 'tools/list') {
      result = { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] };
    } else {
      result = {};
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'sess-1' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  };
}

describe('mcprt runtime: cross-origin redirects keep the credentials home', () => {
  const runtimes = [];
  const servers = [];
  const runtime = async () => {
    const rt = await mcprt.createRuntime({
      cache: { database: `mcprt-redirect-test-${++dbCounter}`, store: 'tools' }, logLevel: 'silent',
    });
    runtimes.push(rt);
    return rt;
  };
  const serve = async (handler) => {
    const s = await startLoopbackServer(handler);
    servers.push(s);
    return s;
  };
  after(async () => {
    for (const rt of runtimes) rt.dispose();
    for (const s of servers) await s.close();
  });
  const headers = { Authorization: 'Bearer secret-token', 'X-Api-Key': 'key-123', Cookie: 'sid=c00kie' };

  test('Runtime_TheGetStreamRedirectedToAnotherOriginCarriesNoCredentialsNorSession', async () => {
    const other = await serve((req, res) => { res.writeHead(404); res.end(); });
    const home = await serve(streamableServer((req, res) => {
      res.writeHead(302, { Location: other.url('/collect') });
      res.end();
    }));
    const rt = await runtime();
    const loaded = await rt.discoverAndLoad({ servers: { home: { type: 'http', url: home.url('/mcp'), headers } } });
    assert.deepEqual(loaded.errors, []);
    assert.deepEqual(rt.tools().map((t) => t.name), ['mcp_home_echo']);
    await waitFor(() => other.requests.length > 0, 'the GET stream hop to the other origin');

    const homeGet = home.requests.find((r) => r.method === 'GET');
    assert.deepEqual(boundHeadersOf(homeGet).sort(),
                     ['authorization', 'cookie', 'mcp-protocol-version', 'mcp-session-id', 'x-api-key'],
                     'the configured origin gets them all (so the test can see them missing)');
    for (const r of other.requests) {
      assert.equal(r.method, 'GET');
      assert.deepEqual(boundHeadersOf(r), [], `nothing origin-bound went to ${r.url}`);
    }
    // The tool still works on the configured origin.
    const result = await rt.callTool('mcp_home_echo', {});
    assert.equal(result.isError, false);
    assert.equal(other.requests.filter((r) => r.method === 'POST').length, 0);
  });

  test('Runtime_ALegacySseStreamRedirectedToAnotherOriginPostsNothingThere', async () => {
    const other = await serve((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write('event: endpoint\ndata: /message\n\n');  // on the other origin
        return;  // kept open
      }
      res.writeHead(202);
      res.end();
    });
    const home = await serve((req, res) => {
      res.writeHead(302, { Location: other.url('/sse') });
      res.end();
    });
    const rt = await runtime();
    const loaded = await rt.discoverAndLoad({ servers: { legacy: { type: 'sse', url: home.url('/sse'), headers } } });
    assert.deepEqual(rt.tools(), []);
    const failure = JSON.stringify(loaded.errors);
    assert.match(failure, /Server \\"legacy\\"/, failure);
    assert.match(failure, /is not on the same origin as the configured URL/, failure);
    assert.match(failure, /the stream was redirected to/, failure);
    assert.deepEqual(other.requests.map((r) => r.method), ['GET'], 'no POST to the other origin');
    assert.deepEqual(boundHeadersOf(other.requests[0]), []);
    assert.equal(home.requests[0].headers.authorization, 'Bearer secret-token');
  });
});
