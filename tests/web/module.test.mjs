// The wasm ES module loads unchanged in Node and exposes the core through embind.
// Run by ctest in the wasm build: MCPRT_WASM_MODULE points at build/.../mcprt.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

const modulePath = process.env.MCPRT_WASM_MODULE;
assert.ok(modulePath, 'MCPRT_WASM_MODULE must name the built mcprt.mjs');
const { default: createMcprtModule } = await import(pathToFileURL(modulePath).href);
const mcprt = await createMcprtModule();

test('module reports its version and the supported protocol versions, newest first', () => {
  assert.match(mcprt.version(), /^\d+\.\d+\.\d+$/);
  assert.deepEqual(JSON.parse(mcprt.protocolVersionsJson()),
                   ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
});

test('config parsing in the browser build rejects stdio servers with a clear message', () => {
  const out = JSON.parse(mcprt.parseConfigJson(JSON.stringify({
    mcpServers: { remote: { url: 'http://127.0.0.1:9/mcp' }, local: { command: 'npx' } },
  }), 'page-config'));
  assert.deepEqual(out.servers.map((s) => [s.name, s.type]), [['remote', 'http']]);
  assert.equal(out.errors.length, 1);
  assert.equal(out.errors[0].server, 'local');
  assert.match(out.errors[0].message, /Server "local": stdio servers are not available in the browser/);
});

test('invalid JSON reports line and column', () => {
  const out = JSON.parse(mcprt.parseConfigJson('{\n  "mcpServers": {\n    "a": }\n}', 'bad.json'));
  assert.equal(out.servers.length, 0);
  assert.equal(out.errors.length, 1);
  assert.equal(out.errors[0].line, 3);
  assert.ok(out.errors[0].column > 0);
});

test('config hash is the same as the native build computes (key order independent)', () => {
  const a = JSON.parse(mcprt.parseConfigJson('{"mcpServers":{"s":{"url":"http://h/","headers":{"A":"1","B":"2"}}}}', 'x'));
  const b = JSON.parse(mcprt.parseConfigJson('{"mcpServers":{"s":{"headers":{"B":"2","A":"1"},"url":"http://h/"}}}', 'x'));
  assert.equal(a.servers[0].configHash, b.servers[0].configHash);
  assert.match(a.servers[0].configHash, /^[0-9a-f]{16}$/);
});
