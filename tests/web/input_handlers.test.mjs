// The JS package's input handlers (SPEC §15, §3.4): createRuntime({onElicit, onSample,
// roots}) against the native demo server's test tools over HTTP (loopback), in each wire
// the demo serves: 2025-11-25 (the server sends elicitation/create, sampling/createMessage,
// roots/list) and 2026-07-28 (input_required results, MRTR). ask_name asks a form
// {name: string default "World", excited: boolean default false}; ask_model asks the
// client's model and returns its text; list_roots returns the client's roots as JSON.
import 'fake-indexeddb/auto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { startProcess, stopProcess } from './support/harness.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const mcprt = await import(pathToFileURL(packageEntry).href);

// The demo server with its test tools (--protocol <mode> lists them) on a free port.
async function startDemo(mode) {
  const bin = process.env.MCPRT_DEMO_SERVER;
  if (!bin || !existsSync(bin)) {
    throw new Error(`the native demo server is missing (MCPRT_DEMO_SERVER=${bin}); configure this wasm tree ` +
                    'with -DMCPRT_WEB_TEST_DEMO_SERVER=<native build>/demo/mcprt-demo-server');
  }
  const { child, match } = await startProcess(bin, ['--http', '0', '--host', '127.0.0.1', '--protocol', mode], {},
                                              /listening on (http:\/\/[^\s]+)/, `mcprt-demo-server --protocol ${mode}`);
  const base = match[1].replace(/\/mcp$/, '').replace(/\/$/, '');
  return { url: `${base}/mcp`, stop: () => stopProcess(child) };
}

// Bounds a promise so that a handler the runtime never calls fails the test instead of
// hanging it.
function within(promise, what, ms = 20000) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms); }),
  ]);
}

for (const mode of ['legacy', '2026']) {
  describe(`input handlers against the demo server (--protocol ${mode})`, () => {
    let demo;
    const runtimes = [];
    const runtime = async (options = {}) => {
      const rt = await mcprt.createRuntime({ cache: false, logLevel: 'silent', ...options });
      runtimes.push(rt);
      const loaded = await rt.discoverAndLoad({ servers: { demo: { url: demo.url } } });
      assert.deepEqual(loaded.errors, []);
      assert.deepEqual(loaded.connectedServers, ['demo']);
      return rt;
    };
    const call = (rt, tool, args = {}) => within(rt.callTool(`mcp_demo_${tool}`, args), tool);
    before(async () => { demo = await startDemo(mode); });
    after(async () => {
      for (const rt of runtimes) rt.dispose();
      await demo?.stop();
    });

    test('OnElicit_Accept_TheServerGetsTheAnswer', async () => {
      const requests = [];
      const rt = await runtime({
        onElicit: async (request) => {
          requests.push(request);
          return { action: 'accept', content: { name: 'Ada', excited: true } };
        },
      });
      const result = await call(rt, 'ask_name');
      assert.equal(result.isError, false, result.text);
      assert.equal(result.text, 'Hello, Ada!!');
      assert.equal(requests.length, 1);
      const [request] = requests;
      assert.equal(request.server, 'demo');
      assert.equal(request.mode, 'form');
      assert.equal(typeof request.message, 'string');
      assert.ok(request.message.length > 0);
      assert.equal(request.requestedSchema.properties.name.default, 'World');
      assert.equal(request.requestedSchema.properties.excited.default, false);
      assert.equal(request.url, undefined);
    });

    test('OnElicit_AcceptLeavingPropertiesOut_TheSchemaDefaultsAreApplied', async () => {
      const answers = [{ action: 'accept', content: {} }, { action: 'accept', content: { excited: true } },
                       { action: 'accept' }];
      const rt = await runtime({ onElicit: async () => answers.shift() });
      assert.equal((await call(rt, 'ask_name')).text, 'Hello, World!');
      assert.equal((await call(rt, 'ask_name')).text, 'Hello, World!!');
      assert.equal((await call(rt, 'ask_name')).text, 'Hello, World!');
    });

    test('OnElicit_DeclineAndCancel_ReachTheServer', async () => {
      const answers = [{ action: 'decline' }, { action: 'cancel' }];
      const rt = await runtime({ onElicit: async () => answers.shift() });
      assert.equal((await call(rt, 'ask_name')).text, 'No name given (declined).');
      assert.equal((await call(rt, 'ask_name')).text, 'No name given (cancelled).');
    });

    test('OnElicit_RejectedPromiseOrBadAnswer_Declines', async () => {
      const handlers = [async () => { throw new Error('the user closed the dialog'); },
                        async () => ({ action: 'maybe' }),
                        () => 'not an object'];
      const rt = await runtime({ onElicit: (request) => handlers.shift()(request) });
      for (let i = 0; i < 3; ++i) assert.equal((await call(rt, 'ask_name')).text, 'No name given (declined).');
    });

    test('OnElicit_AnswersLate_AfterOtherCalls', async () => {
      let release;
      const gate = new Promise((resolve) => { release = resolve; });
      const rt = await runtime({
        onElicit: async () => {
          await gate;
          return { action: 'accept', content: { name: 'Late' } };
        },
      });
      const asked = call(rt, 'ask_name');
      // The runtime keeps working while the user thinks.
      assert.equal((await call(rt, 'echo', { message: 'meanwhile' })).text, 'meanwhile');
      release();
      assert.equal((await asked).text, 'Hello, Late!');
    });

    test('NoOnElicit_ElicitationIsNotOffered', async () => {
      const rt = await runtime();
      const result = await call(rt, 'ask_name');
      assert.equal(result.isError, true);
      assert.match(result.text, /does not support elicitation/);
    });

    test('OnSample_TheModelsTextComesBack', async () => {
      const requests = [];
      const rt = await runtime({
        onSample: async (request) => {
          requests.push(request);
          return { role: 'assistant', content: { type: 'text', text: 'Hello from the test model' },
                   model: 'test-model', stopReason: 'endTurn' };
        },
      });
      const result = await call(rt, 'ask_model');
      assert.equal(result.isError, false, result.text);
      assert.match(result.text, /Hello from the test model/);
      assert.equal(requests.length, 1);
      assert.equal(requests[0].server, 'demo');
      assert.ok(Array.isArray(requests[0].params.messages), JSON.stringify(requests[0].params));
      assert.equal(typeof requests[0].params.maxTokens, 'number');
    });

    test('OnSample_Rejected_TheToolSeesAnError', async () => {
      const rt = await runtime({ onSample: async () => { throw new Error('no model today'); } });
      const result = await call(rt, 'ask_model');
      assert.equal(result.isError, true);
      assert.doesNotMatch(result.text, /Hello from/);
    });

    test('NoOnSample_SamplingIsNotOffered', async () => {
      const rt = await runtime({ onElicit: async () => ({ action: 'decline' }) });
      const result = await call(rt, 'ask_model');
      assert.equal(result.isError, true);
      assert.match(result.text, /does not support sampling/);
    });

    test('Roots_AreAnswered_AndNotOfferedByDefault', async () => {
      const withRoots = await runtime({ roots: [{ uri: 'file:///work/my%20project', name: 'my project' }] });
      const listed = await call(withRoots, 'list_roots');
      assert.equal(listed.isError, false, listed.text);
      const roots = JSON.parse(listed.text);
      assert.deepEqual(roots.map((r) => r.uri), ['file:///work/my%20project']);
      assert.equal(roots[0].name, 'my project');

      const without = await runtime();
      const refused = await call(without, 'list_roots');
      assert.equal(refused.isError, true);
      assert.match(refused.text, /does not support roots/);
    });
  });
}

describe('createRuntime option checks', () => {
  test('BadHandlersAndRoots_AreTypeErrors', async () => {
    await assert.rejects(mcprt.createRuntime({ cache: false, onElicit: 'yes' }), TypeError);
    await assert.rejects(mcprt.createRuntime({ cache: false, onSample: {} }), TypeError);
    await assert.rejects(mcprt.createRuntime({ cache: false, roots: 'file:///x' }), TypeError);
    await assert.rejects(mcprt.createRuntime({ cache: false, roots: [{ uri: 'https://example.com/x' }] }),
                         /roots\[0\]: the uri must be a file:/);
  });
});
