// The web build's snprintf (platform-web/src/web_snprintf.cpp: integer, character and string
// conversions only, instead of musl's vfprintf with its floating-point formatting): what it
// writes for the formats the module uses (nlohmann's escapes, the core's hashes, embind's
// "%p") and for the rest of its scope, truncation and the terminating NUL, the refusal of
// what is out of scope, and JSON text whose escapes go through it.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { loadWasmModule } from './support/harness.mjs';

const seams = await loadWasmModule('MCPRT_WEB_SEAMS_MODULE');
const one = (kind, fmt, arg = '', capacity = 64) =>
  JSON.parse(seams.snprintfOne(kind, fmt, String(arg), capacity));

test('Snprintf_TheFormatsTheModuleUses', () => {
  const cases = [
    ['uint', '\\u%04x', 0x1f, '\\u001f'],
    ['uint', '\\u%04x', 0xfffd, '\\ufffd'],
    ['uint', '<U+%.4X>', 0x0a, '<U+000A>'],
    ['ullong', '%016llx', 0x1234abcd, '000000001234abcd'],
    ['ullong', '%016llx', '18446744073709551615', 'ffffffffffffffff'],
    ['uint', '%08x', 3735928559, 'deadbeef'],
    ['pointer', '%p', 4096, '0x00001000'],   // musl's form: at least 8 digits on wasm32
    ['pointer', '%p', 0, '00000000'],
  ];
  for (const [kind, fmt, arg, text] of cases) {
    assert.deepEqual(one(kind, fmt, arg), { result: text.length, text, einval: false }, fmt);
  }
});

test('Snprintf_FlagsWidthPrecisionAndLengths', () => {
  const cases = [
    ['int', '[%d]', -42, '[-42]'],
    ['int', '[%5d]', 42, '[   42]'],
    ['int', '[%-5d]', 42, '[42   ]'],
    ['int', '[%05d]', -42, '[-0042]'],
    ['int', '[%+d]', 7, '[+7]'],
    ['int', '[% d]', 7, '[ 7]'],
    ['int', '[%.3d]', 7, '[007]'],
    ['int', '[%08.3d]', 7, '[     007]'],  // a precision turns the 0 flag off
    ['int', '[%.0d]', 0, '[]'],
    ['int', '[%i]', -2147483648, '[-2147483648]'],
    ['int', '[%hhd]', 255, '[-1]'],
    ['int', '[%hd]', 65535, '[-1]'],
    ['int', '[%hhu]', 257, '[1]'],
    ['llong', '[%lld]', '-9223372036854775808', '[-9223372036854775808]'],
    ['uint', '[%u]', 4294967295, '[4294967295]'],
    ['uint', '[%#x]', 255, '[0xff]'],
    ['uint', '[%#X]', 255, '[0XFF]'],
    ['uint', '[%#x]', 0, '[0]'],
    ['uint', '[%o]', 8, '[10]'],
    ['uint', '[%#o]', 8, '[010]'],
    ['uint', '[%#o]', 0, '[0]'],
    ['string', '[%s]', 'hello', '[hello]'],
    ['string', '[%8s]', 'hello', '[   hello]'],
    ['string', '[%-8s]', 'hello', '[hello   ]'],
    ['string', '[%.2s]', 'hello', '[he]'],
    ['int', '[%c]', 90, '[Z]'],
    ['int', '[%3c]', 90, '[  Z]'],
    ['none', '100%% sure', '', '100% sure'],
  ];
  for (const [kind, fmt, arg, text] of cases) {
    assert.deepEqual(one(kind, fmt, arg), { result: text.length, text, einval: false }, fmt);
  }
});

test('Snprintf_TruncatesAndAlwaysTerminates', () => {
  // The result is the whole length; the buffer keeps capacity - 1 characters and a NUL.
  assert.deepEqual(one('uint', '\\u%04x', 0x1f, 4), { result: 6, text: '\\u0', einval: false });
  assert.deepEqual(one('string', '%s', 'abcdef', 1), { result: 6, text: '', einval: false });
  // No buffer at all: only the length.
  assert.deepEqual(one('int', '%d', 12345, 0), { result: 5, text: '', einval: false });
});

test('Snprintf_RefusesWhatIsOutOfScope', () => {
  // Floating point (nothing in the module formats it) and %n: -1 and EINVAL, the text
  // before the conversion kept and terminated.
  for (const fmt of ['ab%fcd', 'ab%gcd', 'ab%ecd', 'ab%acd', 'ab%ncd', 'ab%qcd']) {
    assert.deepEqual(one('double', fmt, '1.5'), { result: -1, text: 'ab', einval: true }, fmt);
  }
  assert.deepEqual(one('string', 'x%lsy', 'w'), { result: -1, text: 'x', einval: true });
});

test('Snprintf_JsonEscapesGoThroughIt', () => {
  // nlohmann's serializer writes control characters as \u00XX with snprintf.
  const text = JSON.stringify('a\u0001b\u001fc\u007f');
  assert.equal(seams.jsonRoundTrip(text), '"a\\u0001b\\u001fc\u007f"');
  assert.equal(JSON.parse(seams.jsonRoundTrip(`[${text}]`))[0], 'a\u0001b\u001fc\u007f');
});
