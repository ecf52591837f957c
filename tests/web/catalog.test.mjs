// The `mcprt` JS package's resources, prompts and completions (SPEC §15) under Node against
// the native demo server (--http, loopback): the catalogs and their events, the catalog
// counts in status, reading a text, a blob and a template resource, prompts by bare and
// server:name names (an ambiguous bare name is refused with the candidates), completions
// for prompt arguments and template variables, a subscription whose updates reach the
// callback until it is ended (and how it ends by itself: a load without its server,
// removeServer, a server that refuses it after its HTTP session was renewed), the catalogs from the IndexedDB cache while the server does
// not answer, and tool annotations with and without trustedServers.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

import { startDemoServer, startForwardingProxy, waitFor } from './support/harness.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const mcprt = await import(pathToFileURL(packageEntry).href);

// What the demo server offers (demo/server/mcp_demo_server.cpp).
const kResourceUris = ['demo://logo.png', 'demo://readme', 'demo://ticker'];
const kPngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

describe('mcprt runtime: resources, prompts and completions of the demo server', () => {
  let demo;
  let other;  // a second demo server: the same prompts under another server name
  const runtimes = [];
  // The gate waits for the connections; the catalogs follow the tools (bounded wait).
  const loaded = async (servers, options = {}) => {
    const rt = await mcprt.createRuntime({ cache: false, logLevel: 'silent', startupGateMs: 60000, ...options });
    runtimes.push(rt);
    const events = [];
    rt.onCatalogChanged((e) => events.push(e));
    const result = await rt.discoverAndLoad({ servers });
    assert.deepEqual(result.errors, []);
    const promptCount = Object.keys(servers).length * 2;
    await waitFor(() => rt.resources().length === 3 * Object.keys(servers).length && rt.prompts().length === promptCount &&
                        rt.resourceTemplates().length === Object.keys(servers).length, 'the catalogs');
    return { rt, events };
  };
  before(async () => {
    [demo, other] = await Promise.all([startDemoServer({ args: ['--ticker-ms', '50'] }), startDemoServer()]);
  });
  after(async () => {
    for (const rt of runtimes) rt.dispose();
    await Promise.all([demo?.stop(), other?.stop()]);
  });

  test('Catalog_ListsTheResourcesTemplatesAndPromptsWithCountsAndEvents', async () => {
    const { rt, events } = await loaded({ demo: { url: demo.url } });
    assert.deepEqual(rt.resources().map((r) => r.uri), kResourceUris);
    const logo = rt.resources().find((r) => r.uri === 'demo://logo.png');
    assert.deepEqual(logo, {
      server: 'demo', uri: 'demo://logo.png', name: 'logo.png', title: 'Logo',
      description: 'A 16x16 PNG image (binary contents, sent as a base64 blob).', mimeType: 'image/png', size: 115,
      subscribable: true, fromCache: false,
    });
    assert.deepEqual(rt.resourceTemplates(), [{
      server: 'demo', uriTemplate: 'demo://notes/{name}', name: 'note', title: 'Notes',
      description: 'A short note; the names alpha, beta and gamma exist.', mimeType: 'text/plain', fromCache: false,
    }]);
    assert.deepEqual(rt.prompts().map((p) => p.name), ['greet', 'summarize']);
    assert.deepEqual(rt.prompts()[0].arguments, [
      { name: 'name', description: 'Who to greet.', required: true },
      { name: 'style', description: 'formal, casual or pirate.', required: false },
    ]);
    const status = rt.status('demo');
    assert.equal(status.resourceCount, 3);
    assert.equal(status.resourceTemplateCount, 1);
    assert.equal(status.promptCount, 2);
    await waitFor(() => rt.status('demo').catalogsRefreshing === false, 'the end of the listing');
    // Every kind was announced, for the server or for the load that brought it.
    for (const kind of ['resources', 'resourceTemplates', 'prompts']) {
      assert.ok(events.some((e) => e.kind === kind && (e.server === 'demo' || e.server === null)), `${kind}: ${JSON.stringify(events)}`);
    }
    await rt.disconnectServer('demo');
    assert.deepEqual(rt.resources(), [], 'a disconnected server takes its catalog with it');
    assert.deepEqual(rt.prompts(), []);
  });

  test('ReadResource_ReturnsTextAndBlobContentsAndReadsThroughTheTemplate', async () => {
    const { rt } = await loaded({ demo: { url: demo.url } });
    const readme = await rt.readResource('demo://readme');
    assert.equal(readme.contents.length, 1);
    assert.equal(readme.contents[0].uri, 'demo://readme');
    assert.equal(readme.contents[0].mimeType, 'text/markdown');
    assert.match(readme.contents[0].text, /^# mcprt demo server\n/);

    const logo = await rt.readResource('demo://logo.png', { server: 'demo' });
    assert.equal(logo.contents[0].mimeType, 'image/png');
    const bytes = Buffer.from(logo.contents[0].blob, 'base64');
    assert.equal(bytes.length, 115);
    assert.deepEqual([...bytes.subarray(0, 8)], kPngSignature);

    // Not listed: the template demo://notes/{name} matches it.
    const note = await rt.readResource('demo://notes/beta');
    assert.equal(note.contents[0].text, 'Note beta: a note of the mcprt demo server, read through the template demo://notes/{name}.');
    await assert.rejects(rt.readResource('demo://notes/zeta'),
                         (e) => e instanceof mcprt.McprtError && /zeta/.test(e.message));
    await assert.rejects(rt.readResource('elsewhere://x'),
                         (e) => e instanceof mcprt.McprtError && e.code === 'invalid_argument' &&
                                /no server offers the resource "elsewhere:\/\/x"/.test(e.message));
    const aborted = AbortSignal.abort();
    await assert.rejects(rt.readResource('demo://readme', { signal: aborted }), (e) => e.name === 'AbortError');
  });

  test('GetPrompt_RendersByBareOrServerNameAndRefusesAnAmbiguousName', async () => {
    const { rt } = await loaded({ demo: { url: demo.url } });
    const greeting = await rt.getPrompt('greet', { name: 'Ada', style: 'pirate' });
    assert.equal(greeting.description, 'A greeting for Ada');
    assert.deepEqual(greeting.messages, [{ role: 'user', content: { type: 'text', text: 'Please greet Ada the way a pirate would.' } }]);

    const summary = await rt.getPrompt('demo:summarize', { uri: 'demo://readme' });
    assert.equal(summary.messages.length, 2);
    assert.equal(summary.messages[1].content.type, 'resource');
    assert.equal(summary.messages[1].content.resource.uri, 'demo://readme');
    assert.match(summary.messages[1].content.resource.text, /^# mcprt demo server/);

    await assert.rejects(rt.getPrompt('greet', { style: 'pirate' }), (e) => e instanceof mcprt.McprtError && /name/.test(e.message),
                         'the server refuses a missing required argument');
    await assert.rejects(rt.getPrompt('nope'), (e) => e.code === 'invalid_argument' && /no server offers a prompt named "nope"/.test(e.message));

    const two = await loaded({ demo: { url: demo.url }, other: { url: other.url } });
    await assert.rejects(two.rt.getPrompt('greet', { name: 'Ada' }),
                         (e) => e.code === 'invalid_argument' && /demo:greet, other:greet/.test(e.message));
    const fromOther = await two.rt.getPrompt('other:greet', { name: 'Bo' });
    assert.equal(fromOther.messages[0].content.text, 'Please greet Bo.');
    const named = await two.rt.getPrompt('greet', { name: 'Cy', style: 'formal' }, { server: 'demo' });
    assert.equal(named.messages[0].content.text, 'Please write a formal greeting for Cy.');
  });

  test('Complete_SuggestsPromptArgumentsAndTemplateVariables', async () => {
    const { rt } = await loaded({ demo: { url: demo.url } });
    assert.deepEqual(await rt.complete({ server: 'demo', ref: { type: 'ref/prompt', name: 'greet' }, argument: 'style', value: 'p' }),
                     { values: ['pirate'], total: 1, hasMore: false });
    // The server found from the template; every value for an empty prefix.
    assert.deepEqual((await rt.complete({ ref: { type: 'ref/resource', uri: 'demo://notes/{name}' }, argument: 'name' })).values,
                     ['alpha', 'beta', 'gamma']);
    const uris = await rt.complete({ ref: { type: 'ref/prompt', name: 'demo:summarize' }, argument: 'uri', value: 'demo://n',
                                     context: { arguments: {} } });
    assert.deepEqual(uris.values, ['demo://notes/alpha', 'demo://notes/beta', 'demo://notes/gamma']);
    await assert.rejects(rt.complete({ ref: { type: 'ref/other' }, argument: 'x' }), TypeError);
    await assert.rejects(rt.complete({ ref: { type: 'ref/prompt', name: 'greet' } }), /argument must be the name/);
  });

  test('Subscribe_DeliversUpdatesOfTheTickerUntilUnsubscribed', async () => {
    const { rt } = await loaded({ demo: { url: demo.url } });
    const sent = [];
    rt.onMessage(({ direction, message }) => { if (direction === 'send' && message.method) sent.push(message); });
    const updates = [];
    const unsubscribe = await rt.subscribe('demo://ticker', (u) => updates.push(u));
    assert.ok(sent.some((m) => m.method === 'resources/subscribe' && m.params.uri === 'demo://ticker'));
    // The ticker advances every 50 ms while subscribed (the bound only stops a broken run).
    await waitFor(() => updates.length >= 2, 'two updates of demo://ticker');
    assert.deepEqual(updates[0], { server: 'demo', uri: 'demo://ticker', title: 'Ticker' });
    const tick = await rt.readResource('demo://ticker');
    assert.match(tick.contents[0].text, /^tick [1-9]\d*$/);

    unsubscribe();
    await waitFor(() => sent.some((m) => m.method === 'resources/unsubscribe' && m.params.uri === 'demo://ticker'),
                  'resources/unsubscribe');
    unsubscribe();  // twice is harmless
    assert.equal(sent.filter((m) => m.method === 'resources/unsubscribe').length, 1);
    await assert.rejects(rt.subscribe('demo://ticker', 'not a function'), TypeError);
    await assert.rejects(rt.subscribe('elsewhere://x', () => {}), (e) => e.code === 'invalid_argument');
  });

  test('Subscribe_KeepsDeliveringAcrossReloadAndDiscoverAndLoadUntilUnsubscribed', async () => {
    const servers = { demo: { url: demo.url } };
    const { rt } = await loaded(servers);
    const sent = [];
    rt.onMessage(({ server, direction, message }) => { if (direction === 'send' && message.method) sent.push({ server, ...message }); });
    const subscribes = () => sent.filter((m) => m.method === 'resources/subscribe' && m.params.uri === 'demo://ticker');
    const updates = [];
    const unsubscribe = await rt.subscribe('demo://ticker', (u) => updates.push(u));
    await waitFor(() => updates.length >= 1, 'an update of demo://ticker');

    for (const [what, load] of [['reload', () => rt.reload()], ['discoverAndLoad', () => rt.discoverAndLoad({ servers })]]) {
      const before = subscribes().length;
      const beforeUpdates = updates.length;
      await load();
      await waitFor(() => subscribes().length === before + 1, `resources/subscribe again after ${what}`);
      assert.equal(subscribes().at(-1).server, 'demo');
      // Taken again: one update says so (what changed during the load was never notified).
      await waitFor(() => updates.slice(beforeUpdates).some((u) => u.resubscribed), `the resubscribed update after ${what}`);
      assert.deepEqual(updates.slice(beforeUpdates).filter((u) => u.resubscribed),
                       [{ server: 'demo', uri: 'demo://ticker', resubscribed: true }]);
      const seen = updates.length;
      await waitFor(() => updates.length >= seen + 2, `updates of demo://ticker after ${what}`);
      assert.deepEqual(updates.at(-1), { server: 'demo', uri: 'demo://ticker', title: 'Ticker' });
    }
    // A subscribe() still waiting for its server when a load starts is aborted with it; a
    // subscription ended while the load runs is not subscribed again.
    const readmeSubscribes = () => sent.filter((m) => m.method === 'resources/subscribe' && m.params.uri === 'demo://readme').length;
    const dropped = [];
    const stopDropped = await rt.subscribe('demo://ticker', (u) => dropped.push(u), { server: 'demo' });
    const tickerSubscribes = subscribes().length;
    const waiting = rt.subscribe('demo://readme', () => {});
    const reloaded = rt.reload();
    stopDropped();
    const droppedAt = dropped.length;
    await assert.rejects(waiting, (e) => e instanceof mcprt.McprtError && e.code === 'aborted');
    await reloaded;
    const readmeBefore = readmeSubscribes();  // the old manager's own, sent or not
    await waitFor(() => subscribes().length > tickerSubscribes, 'resources/subscribe again after the third load');
    const seen = updates.length;
    await waitFor(() => updates.length >= seen + 2, 'updates of demo://ticker after the third load');
    assert.equal(dropped.length, droppedAt, 'the subscription ended during the load stays ended');

    // The function from before the loads ends the subscription of the manager now loaded.
    unsubscribe();
    const stopped = updates.length;
    await waitFor(() => sent.some((m) => m.method === 'resources/unsubscribe' && m.params.uri === 'demo://ticker'),
                  'resources/unsubscribe');
    unsubscribe();  // twice is harmless
    assert.equal(sent.filter((m) => m.method === 'resources/unsubscribe').length, 1);
    assert.equal(readmeSubscribes(), readmeBefore, 'the aborted subscribe was not restored');
    // A second subscription's updates (the server ticks for it) never reach the ended one.
    const probe = [];
    const stopProbe = await rt.subscribe('demo://ticker', (u) => probe.push(u));
    await waitFor(() => probe.length >= 2, 'updates of a new subscription');
    assert.equal(updates.length, stopped);
    stopProbe();
  });

  test('Subscribe_EndsWithOneWarningWhenALoadNoLongerHasItsServer', async () => {
    const warnings = [];
    const unhandled = [];
    const onUnhandled = (reason) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { rt } = await loaded({ demo: { url: demo.url } }, {
        logLevel: 'warn', log: (level, message) => { if (level === 'warn') warnings.push(message); },
      });
      const sent = [];
      rt.onMessage(({ direction, message }) => { if (direction === 'send' && message.method) sent.push(message); });
      const ticks = [];
      const ends = [];
      const onEnd = (end) => ends.push(end);
      const stopTicker = await rt.subscribe('demo://ticker', (u) => ticks.push(u), { onEnd });  // found by its URI
      const stopReadme = await rt.subscribe('demo://readme', () => {}, { server: 'demo', onEnd });
      await waitFor(() => ticks.length >= 1, 'an update of demo://ticker');

      await rt.discoverAndLoad({ servers: {} });
      const about = (uri) => warnings.filter((w) => w.includes(uri));
      await waitFor(() => about('demo://ticker').length > 0 && about('demo://readme').length > 0, 'the warnings');
      for (const uri of ['demo://ticker', 'demo://readme']) {
        assert.equal(about(uri).length, 1, JSON.stringify(warnings));
        assert.match(about(uri)[0], new RegExp(`^demo: the subscription to ${uri} ended`));
        // onEnd learns the same, once.
        const end = ends.filter((e) => e.uri === uri);
        assert.equal(end.length, 1, JSON.stringify(ends));
        assert.equal(end[0].server, 'demo');
        assert.ok(end[0].error instanceof mcprt.McprtError);
        assert.equal(end[0].error.message, about(uri)[0]);
      }
      const ended = ticks.length;
      stopTicker();
      stopReadme();
      stopReadme();
      assert.ok(!sent.some((m) => m.method === 'resources/unsubscribe'), 'nothing to unsubscribe from');
      // The same server again: the ended subscriptions stay ended (no subscribe, no update, no warning).
      const subscribesBefore = sent.filter((m) => m.method === 'resources/subscribe').length;
      await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
      const probe = [];
      const stopProbe = await rt.subscribe('demo://ticker', (u) => probe.push(u), { server: 'demo' });
      await waitFor(() => probe.length >= 2, 'updates of a new subscription');
      assert.equal(sent.filter((m) => m.method === 'resources/subscribe').length, subscribesBefore + 1);
      assert.equal(ticks.length, ended);
      assert.equal(about('demo://ticker').length, 1);
      assert.equal(ends.length, 2, 'onEnd ran once for each, not for the host\'s own ending');
      stopProbe();
      await assert.rejects(rt.subscribe('demo://ticker', () => {}, { onEnd: 'not a function' }), TypeError);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    assert.deepEqual(unhandled, []);
  });

  test('Subscribe_EndsThroughOnEndWhenRemoveServerRemovesItsServer', async () => {
    const warnings = [];
    const { rt } = await loaded({ demo: { url: demo.url }, other: { url: other.url } }, {
      logLevel: 'warn', log: (level, message) => { if (level === 'warn') warnings.push(message); },
    });
    const sent = [];
    rt.onMessage(({ server, direction, message }) => { if (direction === 'send' && message.method) sent.push({ server, ...message }); });
    const ends = [];
    const ticks = [];
    const stopTicker = await rt.subscribe('demo://ticker', (u) => ticks.push(u), { server: 'demo', onEnd: (e) => ends.push(e) });
    const kept = [];
    const stopKept = await rt.subscribe('demo://readme', (u) => kept.push(u), { server: 'other', onEnd: (e) => ends.push(e) });
    await waitFor(() => ticks.length >= 1, 'an update of demo://ticker');

    await rt.removeServer('demo');
    assert.equal(ends.length, 1, JSON.stringify(ends));
    assert.equal(ends[0].server, 'demo');
    assert.equal(ends[0].uri, 'demo://ticker');
    assert.equal(ends[0].error.code, 'closed');
    assert.equal(ends[0].error.message, 'demo: the subscription to demo://ticker ended: removeServer removed the server');
    assert.deepEqual(warnings.filter((w) => w.includes('demo://ticker')), [ends[0].error.message]);
    stopTicker();  // ended already: nothing is sent
    assert.ok(!sent.some((m) => m.method === 'resources/unsubscribe'));
    // The other server's subscription is untouched, and its function still ends it.
    stopKept();
    await waitFor(() => sent.some((m) => m.method === 'resources/unsubscribe' && m.server === 'other'), 'resources/unsubscribe on other');
    assert.equal(ends.length, 1);
  });

  test('Subscribe_EndsThroughOnEndWhenTheServerRefusesItAgainAfterAReconnect', async () => {
    // It answers resources/subscribe itself with an error while `refuse` is set.
    let refuse = false;
    const proxy = await startForwardingProxy(demo.url, (req, res, body) => {
      const message = req.method === 'POST' ? JSON.parse(body) : null;
      if (!refuse || message?.method !== 'resources/subscribe') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'subscriptions are off here' } }));
      return true;
    });
    try {
      const warnings = [];
      const { rt } = await loaded({ demo: { url: proxy.url, reconnect: { initialDelayMs: 10 } } }, {
        logLevel: 'warn', log: (level, message) => { if (level === 'warn') warnings.push(message); },
      });
      const ends = [];
      const updates = [];
      await rt.subscribe('demo://ticker', (u) => updates.push(u), { onEnd: (e) => ends.push(e) });
      await waitFor(() => updates.length >= 1, 'an update of demo://ticker');

      // The session is lost (another server behind the same URL: the old session id is
      // unknown there), and the new one refuses subscriptions.
      proxy.state.target = other.url;
      refuse = true;
      proxy.cut();
      await waitFor(() => ends.length === 1, 'onEnd after the reconnect');
      assert.equal(ends[0].server, 'demo');
      assert.equal(ends[0].uri, 'demo://ticker');
      assert.equal(ends[0].error.code, 'wire');
      assert.match(ends[0].error.message, /subscriptions are off here/);
      assert.match(ends[0].error.message, /demo:\/\/ticker/);
      assert.ok(warnings.some((w) => w.includes('demo://ticker') && w.includes('subscriptions are off here')), JSON.stringify(warnings));
      assert.ok(!updates.some((u) => u.resubscribed), 'a refused subscription gets no resubscribed update');
      assert.equal(rt.status('demo').phase, 'connected');
    } finally {
      await proxy.close();
    }
  });

  test('Catalog_ASecondRuntimeShowsTheCatalogsFromTheCacheWhileTheServerDoesNotAnswer', async () => {
    // Once `hold` is set, every new request stays unanswered (a server that stopped answering).
    let hold = false;
    const proxy = await startForwardingProxy(demo.url, () => hold);
    try {
      const cache = { database: 'mcprt-catalog-test', store: 'tools' };
      // One config for both runtimes (the cache key).
      const servers = { demo: { url: proxy.url, reconnect: false } };
      const first = await loaded(servers, { cache });
      const listed = { resources: first.rt.resources(), prompts: first.rt.prompts() };
      assert.ok(listed.resources.every((r) => !r.fromCache));
      first.rt.dispose();

      hold = true;
      const second = await mcprt.createRuntime({ cache, logLevel: 'silent', startupGateMs: 50 });
      runtimes.push(second);
      await second.discoverAndLoad({ servers });
      assert.equal(second.status('demo').status, 'connecting');
      await waitFor(() => second.resources().length === 3 && second.prompts().length === 2, 'the cached catalogs');
      assert.deepEqual(second.resources().map((r) => r.uri), listed.resources.map((r) => r.uri));
      assert.ok(second.resources().every((r) => r.fromCache && !r.subscribable), JSON.stringify(second.resources()));
      assert.deepEqual(second.prompts().map(({ fromCache, ...p }) => p), listed.prompts.map(({ fromCache, ...p }) => p));
      assert.ok(second.prompts().every((p) => p.fromCache));
      assert.equal(second.resourceTemplates()[0].fromCache, true);
    } finally {
      await proxy.close();
    }
  });

  test('Tools_CarryTheirAnnotationsTrustedOnlyForTrustedServers', async () => {
    const { rt } = await loaded({ demo: { url: demo.url } });
    const echo = rt.tools().find((t) => t.name === 'mcp_demo_echo');
    assert.deepEqual(echo.annotations, { readOnlyHint: true, openWorldHint: false });
    assert.equal(echo.annotationsTrusted, false);
    const trusted = await loaded({ demo: { url: demo.url } }, { trustedServers: ['demo'] });
    assert.equal(trusted.rt.tools().find((t) => t.name === 'mcp_demo_echo').annotationsTrusted, true);
  });
});
