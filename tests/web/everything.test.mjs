// The `mcprt` JS package against the real npm server-everything, in its streamableHttp
// and legacy sse modes (bound to 127.0.0.1 by tests/fixtures/loopback.mjs): list, echo,
// a progress-reporting tool, disconnect; its resources, templates and prompts as it lists
// them, a text and a blob read, a prompt with arguments, completions with context.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

import { startServerEverything, waitFor } from './support/harness.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const mcprt = await import(pathToFileURL(packageEntry).href);

for (const { mode, config } of [
  { mode: 'streamableHttp', config: (base) => ({ type: 'http', url: `${base}/mcp` }) },
  { mode: 'sse', config: (base) => ({ type: 'sse', url: `${base}/sse` }) },
]) {
  describe(`server-everything (${mode})`, () => {
    let server;
    let rt;
    before(async () => {
      server = await startServerEverything(mode);
      rt = await mcprt.createRuntime({ cache: false, logLevel: 'silent' });
    });
    after(async () => {
      rt?.dispose();
      await server?.stop();
    });

    test(`Everything_${mode}_ConnectsListsEchoesReportsProgressAndDisconnects`, async () => {
      const loaded = await rt.discoverAndLoad({ servers: { everything: config(server.base) } });
      assert.deepEqual(loaded.errors, []);
      assert.deepEqual(loaded.connectedServers, ['everything']);
      const names = rt.tools().map((t) => t.name);
      assert.ok(names.includes('mcp_everything_echo'), names.join(', '));
      assert.ok(names.includes('mcp_everything_trigger-long-running-operation'), names.join(', '));

      const echoed = await rt.callTool('mcp_everything_echo', { message: `hi over ${mode}` });
      assert.equal(echoed.isError, false);
      assert.equal(echoed.text, `Echo: hi over ${mode}`);

      const progress = [];
      const done = await rt.callTool('mcp_everything_trigger-long-running-operation', { duration: 0.2, steps: 2 },
                                     { onProgress: (p) => progress.push(p.progress) });
      assert.equal(done.isError, false);
      assert.match(done.text, /Long running operation completed/);
      assert.equal(progress.length, 2, 'one progress notification per step');

      await rt.disconnectServer('everything');
      assert.deepEqual(rt.tools(), []);
    });

    test(`Everything_${mode}_ListsReadsAndRendersItsResourcesTemplatesAndPrompts`, async () => {
      const loaded = await rt.discoverAndLoad({ servers: { everything: config(server.base) } });
      assert.deepEqual(loaded.errors, []);
      // The catalogs are listed after the tools (the bound only stops a broken run).
      await waitFor(() => rt.resources().length === 7 && rt.resourceTemplates().length === 2 && rt.prompts().length === 4,
                    'the catalogs of server-everything');
      const documents = ['architecture', 'extension', 'features', 'how-it-works', 'instructions', 'startup', 'structure'];
      assert.deepEqual(rt.resources().map((r) => r.uri), documents.map((d) => `demo://resource/static/document/${d}.md`));
      assert.ok(rt.resources().every((r) => r.server === 'everything' && r.mimeType === 'text/markdown'));
      assert.deepEqual(rt.resourceTemplates().map((t) => t.uriTemplate),
                       ['demo://resource/dynamic/blob/{resourceId}', 'demo://resource/dynamic/text/{resourceId}']);
      assert.deepEqual(rt.prompts().map((p) => p.name), ['args-prompt', 'completable-prompt', 'resource-prompt', 'simple-prompt']);
      const status = rt.status('everything');
      assert.deepEqual([status.resourceCount, status.resourceTemplateCount, status.promptCount], [7, 2, 4]);

      const text = await rt.readResource('demo://resource/static/document/features.md');
      assert.equal(text.contents[0].mimeType, 'text/markdown');
      assert.ok(text.contents[0].text.length > 100, text.contents[0].text);
      // A template's resource, binary (base64).
      const blob = await rt.readResource('demo://resource/dynamic/blob/3');
      assert.match(Buffer.from(blob.contents[0].blob, 'base64').toString('utf8'), /^Resource 3: This is a base64 blob created at /);

      const args = rt.prompts().find((p) => p.name === 'args-prompt');
      assert.deepEqual(args.arguments.map((a) => [a.name, a.required]), [['city', true], ['state', false]]);
      const prompt = await rt.getPrompt('args-prompt', { city: 'Lyon', state: 'Rhone' });
      assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: "What's weather in Lyon, Rhone?" } }]);

      // The second argument's values depend on the first (context).
      const names = await rt.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: 'name', value: '',
                                        context: { arguments: { department: 'Sales' } } });
      assert.deepEqual(names.values, ['David', 'Eve', 'Frank']);
      await rt.disconnectServer('everything');
    });
  });
}
