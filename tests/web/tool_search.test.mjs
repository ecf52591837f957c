// Tool search in the `mcprt` JS package (SPEC §16) under Node against the native demo
// server (--http, loopback) behind a proxy that drops its instructions, two servers of
// six tools each: the catalog lists every tool
// with its summary; searchTools ranks an exact name first, finds keywords and takes
// select: names in their order without loading them; calling mcp_tool_search loads its
// hits, fires onToolsChanged and grows visibleTools(); a deferred tool called by name is
// loaded; loadTools / resetLoadedTools / setToolSearch; 'off' and 'auto' below the
// threshold keep every tool visible; instructions that name the tools keep them loaded;
// and the catalog and search work from the IndexedDB cache while the server does not
// answer.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

import { startDemoServer, startInstructionlessProxy, waitFor } from './support/harness.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const mcprt = await import(pathToFileURL(packageEntry).href);

// The demo server's tools (demo/server/mcp_demo_server.cpp), as the runtime names them.
const kRawTools = ['add', 'echo', 'fail', 'now', 'slow_task', 'word_count'];
const names = (server) => kRawTools.map((t) => `mcp_${server}_${t}`);
const kAllTools = [...names('demo'), ...names('other')].sort();


describe('mcprt runtime: tool search over two demo servers', () => {
  let demo;
  let plain;  // the demo server without instructions
  const runtimes = [];
  // Both servers connected (the gate waits for them).
  const loaded = async (options = {}) => {
    const rt = await mcprt.createRuntime({ cache: false, logLevel: 'silent', startupGateMs: 60000, ...options });
    runtimes.push(rt);
    const result = await rt.discoverAndLoad({ servers: { demo: { url: plain.url('/mcp') }, other: { url: plain.url('/mcp?second') } } });
    assert.deepEqual(result.errors, []);
    assert.equal(rt.tools().length, 12);
    return rt;
  };
  before(async () => {
    demo = await startDemoServer();
    plain = await startInstructionlessProxy(demo.url);
  });
  after(async () => {
    for (const rt of runtimes) rt.dispose();
    await plain?.close();
    await demo?.stop();
  });

  test('Catalog_ListsEveryToolWithItsSummaryAndNothingLoaded', async () => {
    const rt = await loaded({ toolSearch: 'on' });
    assert.equal(rt.toolSearchActive(), true);
    const catalog = rt.catalog();
    assert.deepEqual(catalog.map((t) => t.name), kAllTools);
    const tools = new Map(rt.tools().map((t) => [t.name, t]));
    for (const entry of catalog) {
      const tool = tools.get(entry.name);
      assert.equal(entry.server, tool.server);
      // The demo descriptions are one line under 200 bytes: the summary is all of it.
      assert.equal(entry.summary, tool.description, entry.name);
      assert.equal(entry.loaded, false, entry.name);
    }
    assert.equal(tools.get('mcp_demo_echo').description, 'Returns the given message unchanged, as text.');
    // The model gets the meta-tool alone; tools() still lists everything.
    const visible = rt.visibleTools();
    assert.deepEqual(visible.map((t) => t.name), ['mcp_tool_search']);
    assert.equal(visible[0].server, '');
    assert.equal(visible[0].inputSchema.type, 'object');
    assert.ok(Object.hasOwn(visible[0].inputSchema.properties, 'query'), JSON.stringify(visible[0].inputSchema));
    assert.match(visible[0].description, /\S/);
    // The deferred tools for a system prompt, one "name: summary" line each.
    const lines = rt.catalogText().trim().split('\n');
    assert.equal(lines.length, 12, rt.catalogText());
    assert.ok(lines.some((l) => l.includes('mcp_other_word_count') && l.includes('Counts the words')), rt.catalogText());
  });

  test('SearchTools_RanksAnExactNameFirstThenKeywordsAndTakesSelectNamesInOrder', async () => {
    const rt = await loaded({ toolSearch: 'on' });
    const exact = rt.searchTools('mcp_other_add');
    assert.equal(exact[0].name, 'mcp_other_add');
    assert.equal(exact[0].match, 'exact-name');
    assert.equal(exact[0].server, 'other');
    assert.equal(exact[0].summary, 'Adds two numbers and returns the sum as text and as structuredContent.');
    assert.ok(exact.slice(1).every((h) => h.match !== 'exact-name'), JSON.stringify(exact));

    // A server's label form is an exact name too.
    assert.deepEqual(rt.searchTools('other/now').map((h) => [h.name, h.match])[0], ['mcp_other_now', 'exact-name']);

    const keywords = rt.searchTools('count the words of a text', { limit: 2 });
    assert.deepEqual(keywords.map((h) => h.name).sort(), ['mcp_demo_word_count', 'mcp_other_word_count']);
    assert.ok(keywords.every((h) => h.match === 'keywords' && h.score > 0), JSON.stringify(keywords));
    assert.equal(rt.searchTools('current UTC time')[0].name.endsWith('_now'), true);

    const selected = rt.searchTools('select:mcp_other_echo,mcp_demo_now,mcp_nope_x');
    assert.deepEqual(selected.map((h) => [h.name, h.match]), [['mcp_other_echo', 'selected'], ['mcp_demo_now', 'selected']]);
    assert.deepEqual(rt.searchTools('zzqx nothing like this'), []);
    // A search alone loads nothing.
    assert.deepEqual(rt.loadedTools(), []);
    assert.deepEqual(rt.visibleTools().map((t) => t.name), ['mcp_tool_search']);
    assert.throws(() => rt.searchTools('add', { limit: -1 }), TypeError);
  });

  test('CallToolSearch_LoadsTheHitGrowsTheVisibleSetAndFiresToolsChanged', async () => {
    const rt = await loaded({ toolSearch: 'on' });
    const seen = [];
    rt.onToolsChanged(() => seen.push(rt.visibleTools().map((t) => t.name)));
    const result = await rt.callTool('mcp_tool_search', { query: 'mcp_demo_word_count', limit: 1 });
    assert.equal(result.isError, false, result.text);
    assert.match(result.text, /mcp_demo_word_count/);
    assert.deepEqual(rt.loadedTools(), ['mcp_demo_word_count']);
    assert.deepEqual(rt.visibleTools().map((t) => t.name), ['mcp_demo_word_count', 'mcp_tool_search']);
    await waitFor(() => seen.some((v) => v.includes('mcp_demo_word_count')), 'a tools-changed event with the loaded tool');
    const loadedTool = rt.visibleTools()[0];
    assert.equal(loadedTool.server, 'demo');
    assert.equal(loadedTool.inputSchema.properties.text.type, 'string', 'the full definition');
    assert.equal(rt.catalog().find((t) => t.name === 'mcp_demo_word_count').loaded, true);
    assert.equal(rt.tools().length, 12, 'tools() is every tool either way');

    // The loaded tool is called like any other.
    const counted = await rt.callTool('mcp_demo_word_count', { text: 'one two three' });
    assert.equal(counted.isError, false, counted.text);
    assert.equal(counted.structuredContent.words, 3);

    // select: through the meta-tool loads several at once.
    await rt.callTool('mcp_tool_search', { query: 'select:mcp_other_echo,mcp_other_add' });
    assert.deepEqual(rt.loadedTools(), ['mcp_demo_word_count', 'mcp_other_add', 'mcp_other_echo']);
  });

  test('DeferredTool_CalledByNameIsLoaded_AndLoadToolsResetAndSetToolSearchChangeTheVisibleSet', async () => {
    const rt = await loaded({ toolSearch: 'on' });
    const echoed = await rt.callTool('mcp_other_echo', { message: 'deferred' });
    assert.equal(echoed.text, 'deferred');
    assert.deepEqual(rt.loadedTools(), ['mcp_other_echo'], 'a call by name loads the tool');

    assert.deepEqual(rt.loadTools(['mcp_demo_now', 'mcp_demo_nope']), ['mcp_demo_nope']);
    assert.deepEqual(rt.visibleTools().map((t) => t.name), ['mcp_demo_now', 'mcp_other_echo', 'mcp_tool_search']);
    assert.throws(() => rt.loadTools('mcp_demo_now'), TypeError);

    rt.resetLoadedTools();
    assert.deepEqual(rt.loadedTools(), []);
    assert.deepEqual(rt.visibleTools().map((t) => t.name), ['mcp_tool_search']);

    const seen = [];
    rt.onToolsChanged(() => seen.push(rt.visibleTools().length));
    rt.setToolSearch('off');
    assert.equal(rt.toolSearchActive(), false);
    assert.deepEqual(rt.visibleTools().map((t) => t.name), kAllTools);
    await waitFor(() => seen.includes(12), 'a tools-changed event after setToolSearch');
    rt.setToolSearch({ mode: 'auto', threshold: 11 });
    assert.equal(rt.toolSearchActive(), true, '12 tools are above a threshold of 11');
    assert.throws(() => rt.setToolSearch('sometimes'), TypeError);
  });

  test('InstructionsThatNameTheTools_KeepThemLoaded', async () => {
    // The demo server's own instructions: "Tools: echo, add, now, word_count, ...".
    const rt = await mcprt.createRuntime({ cache: false, logLevel: 'silent', startupGateMs: 60000, toolSearch: 'on' });
    runtimes.push(rt);
    await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
    assert.equal(rt.toolSearchActive(), true);
    assert.deepEqual(rt.visibleTools().map((t) => t.name), [...names('demo'), 'mcp_tool_search']);
    assert.ok(rt.catalog().every((t) => t.loaded));
    assert.deepEqual(rt.loadedTools(), [], 'always loaded, not by a search');
    assert.equal(rt.catalogText().trim(), '', 'nothing is deferred');
  });

  test('Off_AndAutoBelowTheThreshold_KeepEveryToolVisible', async () => {
    for (const toolSearch of ['off', undefined, 'auto', { mode: 'auto', threshold: 30 }]) {
      const rt = await loaded(toolSearch === undefined ? {} : { toolSearch });
      assert.equal(rt.toolSearchActive(), false, JSON.stringify(toolSearch));
      assert.deepEqual(rt.visibleTools().map((t) => t.name), kAllTools);
      assert.deepEqual(rt.visibleTools(), rt.tools());
      assert.ok(rt.catalog().every((t) => t.loaded), 'every tool is given to the model');
      await assert.rejects(rt.callTool('mcp_tool_search', { query: 'add' }), /no tool named "mcp_tool_search"/);
      rt.dispose();
    }
    const low = await loaded({ toolSearch: { threshold: 6 } });
    assert.equal(low.toolSearchActive(), true, '12 tools are above a threshold of 6');
    const budget = await loaded({ toolSearch: { mode: 'auto', tokenBudget: 50 } });
    assert.equal(budget.toolSearchActive(), true, "12 tools' definitions are more than 50 tokens");
    await assert.rejects(mcprt.createRuntime({ toolSearch: 'sometimes' }), TypeError);
    await assert.rejects(mcprt.createRuntime({ toolSearch: { mode: 'on', threshold: -1 } }), TypeError);
  });

  test('Catalog_AndSearchWorkFromTheCacheBeforeTheServerAnswers', async () => {
    const proxy = await startInstructionlessProxy(demo.url);
    try {
      const cache = { database: 'mcprt-tool-search-test', store: 'tools' };
      const servers = { demo: { url: proxy.url('/mcp'), reconnect: false } };  // one config: the cache key
      const first = await mcprt.createRuntime({ cache, logLevel: 'silent', startupGateMs: 60000 });
      await first.discoverAndLoad({ servers });
      assert.equal(first.catalog().length, 6);
      first.dispose();

      proxy.state.hold = true;
      const second = await mcprt.createRuntime({ cache, logLevel: 'silent', startupGateMs: 50, toolSearch: 'on' });
      runtimes.push(second);
      await second.discoverAndLoad({ servers });
      assert.equal(second.status('demo').status, 'connecting');
      assert.deepEqual(second.catalog().map((t) => t.name), names('demo'));
      assert.ok(second.tools().every((t) => t.deferred), 'every tool is from the cache');
      assert.equal(second.searchTools('count the words')[0].name, 'mcp_demo_word_count');
      const found = await second.callTool('mcp_tool_search', { query: 'echo' });
      assert.equal(found.isError, false, found.text);
      assert.deepEqual(second.loadedTools(), ['mcp_demo_echo']);
      assert.deepEqual(second.visibleTools().map((t) => t.name), ['mcp_demo_echo', 'mcp_tool_search']);
      assert.equal(second.visibleTools()[0].deferred, true, 'still the cached definition');
    } finally {
      await proxy.close();
    }
  });
});
