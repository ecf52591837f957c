// SPEC §12: the web module's wasm stays ≤ 600 KB raw and ≤ 200 KB gzip (level 9).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

test('Size_WasmModuleIsWithinTheBudget', (t) => {
  const wasmPath = path.join(path.dirname(process.env.MCPRT_JS_PACKAGE ?? ''), 'mcprt.wasm');
  const wasm = readFileSync(wasmPath);
  const gzip = gzipSync(wasm, { level: 9 }).length;
  t.diagnostic(`mcprt.wasm: ${wasm.length} bytes, ${gzip} gzip`);
  assert.ok(wasm.length <= 600 * 1024, `mcprt.wasm is ${wasm.length} bytes (budget 614400)`);
  assert.ok(gzip <= 200 * 1024, `mcprt.wasm gzips to ${gzip} bytes (budget 204800)`);
});
