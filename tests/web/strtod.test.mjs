// The web build's strtod (platform-web/src/web_strtod.cpp: the C decimal form, converted
// by JS's Number instead of musl's software long double): what it consumes, what it
// returns, and that JSON numbers parsed by the module's JSON parser come out as the
// nearest double — the same value JSON.parse gives — for edge cases and thousands of
// random doubles written with more digits than needed (so every rounding is exercised).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { loadWasmModule } from './support/harness.mjs';

const seams = await loadWasmModule('MCPRT_WEB_SEAMS_MODULE');
const scan = (text) => JSON.parse(seams.strtodScan(text));

test('Strtod_ConsumesTheDecimalFormAndNothingElse', () => {
  const cases = [
    ['  -12.5e3xyz', 9, '-12500.0', false],
    ['\t\n+.5', 5, '0.5', false],
    ['7.', 2, '7.0', false],
    ['1e', 1, '1.0', false],       // an exponent without digits is not part of the number
    ['1e+', 1, '1.0', false],
    ['2E-3,', 4, '0.002', false],
    ['.', 0, '0.0', false],
    ['+', 0, '0.0', false],
    ['', 0, '0.0', false],
    ['abc', 0, '0.0', false],
    ['1e400', 5, 'inf', true],
    ['-1e400', 6, '-inf', true],
    ['1e-400', 6, '0.0', true],    // underflow of a non-zero number
    ['0e-400', 6, '0.0', false],   // a zero is exact
    ['-0.0', 4, '-0.0', false],
    // Out of scope on purpose (nothing in the module parses them): musl would take these.
    ['inf', 0, '0.0', false],
    ['nan', 0, '0.0', false],
    ['0x1p3', 1, '0.0', false],
  ];
  for (const [text, consumed, value, erange] of cases) {
    assert.deepEqual(scan(text), { consumed, value, erange }, JSON.stringify(text));
  }
});

function* numberTexts() {
  yield* ['0.1', '0.2', '0.3', '1e-7', '5e-324', '2.4703282292062327e-324', '2.4703282292062328e-324',
    '2.2250738585072011e-308', '2.2250738585072014e-308', '1.7976931348623157e308',
    '1.7976931348623158e308', '9007199254740993.0', '9007199254740992.5', '0.1e1', '-0.0',
    '1E+2', '123456789012345678901234567890.5', '1e-400', '0.' + '0'.repeat(400) + '1',
    '3.' + '1415926535'.repeat(80), '1' + '0'.repeat(300) + '.5', '4.35679e-321'];
  // A fixed-seed generator: the same doubles on every run.
  let state = 0x9e3779b97f4a7c15n;
  const next = () => {
    state ^= state << 13n; state &= (1n << 64n) - 1n;
    state ^= state >> 7n;
    state ^= state << 17n; state &= (1n << 64n) - 1n;
    return state;
  };
  const view = new DataView(new ArrayBuffer(8));
  for (let i = 0; i < 3000; i++) {
    view.setBigUint64(0, next());
    const x = view.getFloat64(0);
    if (!Number.isFinite(x)) continue;
    yield String(x);
    yield x.toExponential(20);
    yield x.toPrecision(17);
  }
}

test('Strtod_JsonNumbersParseToTheNearestDouble', () => {
  let checked = 0;
  const texts = [...numberTexts()];
  // In batches: one JSON array per call.
  for (let i = 0; i < texts.length; i += 500) {
    const batch = texts.slice(i, i + 500);
    const back = JSON.parse(seams.jsonRoundTrip(`[${batch.join(',')}]`));
    assert.equal(back.length, batch.length);
    batch.forEach((text, k) => {
      assert.ok(Object.is(back[k], JSON.parse(text)), `${text}: got ${back[k]}`);
      checked++;
    });
  }
  assert.ok(checked > 9000, `checked ${checked}`);
});

test('Strtod_TheShippedModuleLinksThisStrtod', () => {
  // The module's JS glue carries the EM_JS conversion only when web_strtod.cpp is linked.
  const glue = readFileSync(process.env.MCPRT_WASM_MODULE, 'utf8');
  assert.match(glue, /mcprt_js_parse_decimal/);
});
