// The `mcprt` JS package against the real npm server-everything, in its streamableHttp
// and legacy sse modes (bound to 127.0.0.1 by tests/fixtures/loopback.mjs): list, echo,
// a progress-reporting tool, disconnect.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

import { startServerEverything } from './support/harness.mjs';

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
  });
}
