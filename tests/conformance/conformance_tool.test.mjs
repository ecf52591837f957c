// conformance_tool.mjs on made-up suite output: the verdicts (pass, expected failure, stale
// entry, unexpected failure, a run that checked nothing, a run that wrote no checks), the
// per-client sections and reasons of expected-failures files, the scenario-list check
// against a stand-in suite, and the table.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const kTool = path.join(path.dirname(fileURLToPath(import.meta.url)), 'conformance_tool.mjs');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'conformance-tool-'));
test.after(() => rmSync(scratch, { recursive: true, force: true }));

function tool(args) {
  const r = spawnSync(process.execPath, [kTool, ...args], { encoding: 'utf8', timeout: 30000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

let counter = 0;
function write(name, text) {
  const file = path.join(scratch, `${++counter}-${name}`);
  writeFileSync(file, text);
  return file;
}

// A result directory the way the suite leaves it: <dir>/<scenario>-<timestamp>/checks.json.
function resultDir(checks, { clientStderr = '' } = {}) {
  const dir = path.join(scratch, `result-${++counter}`);
  if (checks !== null) {
    const run = path.join(dir, 'auth', 'x-2026-12-01T00-00-00-000Z');
    mkdirSync(run, { recursive: true });
    writeFileSync(path.join(run, 'checks.json'), JSON.stringify(checks));
    writeFileSync(path.join(run, 'stderr.txt'), clientStderr);
  } else {
    mkdirSync(dir, { recursive: true });
  }
  return dir;
}

const success = { id: 'a', status: 'SUCCESS', description: 'did it' };
const failure = { id: 'b', status: 'FAILURE', description: 'did not', errorMessage: 'no token request' };
const info = { id: 'c', status: 'INFO', description: 'saw a request' };

const expected = write('expected.yml', [
  '# comment',
  'client:',
  '  - auth/both        # not built anywhere',
  'wasm:',
  '  - auth/web-only    # not built on the web',
  '',
].join('\n'));

function judge(scenario, dir, harnessExit, { client = 'native', file = expected, wire, label } = {}) {
  const r = tool(['judge', '--suite-version', '9.9.9', '--client', client, '--scenario', scenario,
                  '--result-dir', dir, '--harness-exit', String(harnessExit), '--expected', file,
                  ...(wire ? ['--spec-version', wire] : []), ...(label ? ['--label', label] : [])]);
  let verdict;
  try {
    verdict = JSON.parse(readFileSync(path.join(dir, 'verdict.json'), 'utf8'));
  } catch {
    verdict = undefined;
  }
  return { ...r, verdict };
}

test('an unlisted scenario that passes passes', () => {
  const r = judge('auth/other', resultDir([info, success]), 0);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /^PASS auth\/other \(native, conformance 9\.9\.9\)/m);
  assert.equal(r.verdict.outcome, 'pass');
  assert.deepEqual(r.verdict.checks, { success: 1, failure: 0, warning: 0 });
});

test('a listed scenario that fails is an expected failure, with its reason', () => {
  const r = judge('auth/both', resultDir([failure]), 1);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /EXPECTED FAILURE auth\/both .*listed because: not built anywhere/);
  assert.equal(r.verdict.outcome, 'fail');
  assert.equal(r.verdict.expectedFailure, 'not built anywhere');
});

test('a listed scenario that passes fails the test as a stale entry', () => {
  const r = judge('auth/both', resultDir([success]), 0);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /STALE ENTRY auth\/both .*remove it from/);
  assert.equal(r.verdict.testPassed, false);
});

test('an unlisted failure fails, with the failing checks and the client output', () => {
  const r = judge('auth/other', resultDir([success, failure], { clientStderr: 'connect failed: HTTP 401' }), 1);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /FAIL auth\/other/);
  assert.match(r.out, /FAILURE b: no token request/);
  assert.match(r.out, /connect failed: HTTP 401/);
});

test('a run that passed no check is a failure even when the suite exits 0', () => {
  const r = judge('auth/other', resultDir([info]), 0);
  assert.equal(r.status, 1, r.out);
  assert.equal(r.verdict.outcome, 'fail');
  assert.match(r.out, /no check passed/);
});

test('a run without checks.json is an error, even for a listed scenario', () => {
  const r = judge('auth/both', resultDir(null), 124);
  assert.equal(r.status, 1, r.out);
  assert.equal(r.verdict.outcome, 'error');
  assert.match(r.out, /ERROR auth\/both .*wrote no checks\.json \(exit 124\)/);
});

test('a client section applies to that client only', () => {
  assert.equal(judge('auth/web-only', resultDir([failure]), 1, { client: 'wasm' }).status, 0);
  const native = judge('auth/web-only', resultDir([failure]), 1, { client: 'native' });
  assert.equal(native.status, 1, native.out);
  assert.match(native.out, /FAIL auth\/web-only/);
});

test('an entry for one wire applies to the run at that wire only; one without a wire to every wire', () => {
  const file = write('wired.yml', 'client:\n  - x@2026-07-28  # not on the new wire yet\n  - y  # nowhere\n');
  const at2026 = judge('x', resultDir([failure]), 1, { file, wire: '2026-07-28', label: 'x@2026-07-28' });
  assert.equal(at2026.status, 0, at2026.out);
  assert.match(at2026.out, /EXPECTED FAILURE x@2026-07-28 \(native, .*listed because: not on the new wire yet/);
  assert.equal(at2026.verdict.label, 'x@2026-07-28');
  assert.equal(at2026.verdict.specVersion, '2026-07-28');
  const at2025 = judge('x', resultDir([failure]), 1, { file, wire: '2025-11-25' });
  assert.equal(at2025.status, 1, at2025.out);
  assert.match(at2025.out, /FAIL x \(native/);
  assert.equal(judge('y', resultDir([failure]), 1, { file, wire: '2026-07-28' }).status, 0);
  const stale = judge('x', resultDir([success]), 0, { file, wire: '2026-07-28', label: 'x@2026-07-28' });
  assert.equal(stale.status, 1, stale.out);
  assert.match(stale.out, /STALE ENTRY x@2026-07-28/);
});

test('an expected-failures entry without a reason, or listed twice, is refused', () => {
  const file = write('bad.yml', 'client:\n  - auth/a\n  - auth/b  # why\nnative:\n  - auth/b  # again\n');
  const r = judge('auth/a', resultDir([failure]), 1, { file });
  assert.equal(r.status, 2, r.out);
  assert.match(r.out, /:2: "auth\/a" has no reason/);
  assert.match(r.out, /:5: "auth\/b" is listed twice \(also under client:\)/);
});

// A stand-in for the suite's dist/index.js: `list --client [--requirements R]`.
function fakeSuite(version, all, required) {
  const dir = path.join(scratch, `suite-${++counter}`);
  mkdirSync(path.join(dir, 'dist'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ version }));
  const script = `
const all = ${JSON.stringify(all)}, required = ${JSON.stringify(required)};
const args = process.argv.slice(2);
if (args.includes('--requirements')) {
  console.log('Required for X:\\n\\nServer scenarios (test against a server):\\n  - server-thing\\n');
  console.log('Client scenarios (test against a client):\\n' + required.map((s) => '  - ' + s).join('\\n'));
  console.log('\\nRun and reported, but never scored:\\n  extension (1):\\n    - auth/ext [client]');
} else {
  console.log('Client scenarios (test against a client):\\n' + all.map((s) => '  - ' + s + ' [2025-11-25]').join('\\n'));
}`;
  writeFileSync(path.join(dir, 'dist', 'index.js'), script);
  return path.join(dir, 'dist', 'index.js');
}

function checkLists(suite, list, expectedText = 'client:\n') {
  return tool(['check-lists', '--suite-version', '1.0.0', '--suite', suite,
               '--scenarios', write('scenarios.txt', list), '--expected', write('e.yml', expectedText)]);
}

const suite = fakeSuite('1.0.0', ['initialize', 'auth/a', 'auth/b', 'auth/ext', 'other'], ['initialize', 'auth/a']);
const goodList = 'spec-version 2025-11-25\nmust-run requirements 2025-11-25\nmust-run auth/*\nrun initialize\nrun auth/a\nrun auth/b\n' +
                 'run auth/ext\nskip other  # not ours\n';

test('a scenario list that classifies every scenario and runs the must-run sets passes', () => {
  const r = checkLists(suite, goodList, 'native:\n  - auth/b  # not yet\n');
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /5 client scenarios; 4 run \(4 runs: 4 at 2025-11-25\), 1 skipped .*native 1, wasm 0/);
});

// The same suite with both revisions' sets: `all` names the scenarios, `required` the one
// the --requirements listing prints (whichever revision is asked for).
const wiredSuite = fakeSuite('1.0.0', ['initialize', 'tools_call', 'auth/a', 'auth/b', 'auth/ext', 'other'],
                             ['tools_call', 'auth/a']);
const wiredList = 'spec-version 2025-11-25\nmust-run requirements 2025-11-25\n' +
                  'must-run requirements 2026-07-28 except auth/*  # the flow is the same\n' +
                  'run initialize\nrun tools_call @2025-11-25 @2026-07-28\nrun auth/a\nrun auth/b @2026-07-28\n' +
                  'run auth/ext\nskip other  # not ours\n';

test('a run line names its wires; a frozen set must run at its own wire, except what it exempts', () => {
  const r = checkLists(wiredSuite, wiredList, 'client:\n  - tools_call@2026-07-28  # new wire\n');
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /5 run \(6 runs: 4 at 2025-11-25, 2 at 2026-07-28\).*native 1, wasm 1/);
});

test('a scenario of a frozen set that does not run at its wire fails the check', () => {
  const r = checkLists(wiredSuite, wiredList.replace('run tools_call @2025-11-25 @2026-07-28', 'run tools_call'));
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /tools_call must be run at wire 2026-07-28 \(must-run requirements 2026-07-28\) but runs at 2025-11-25/);
  const noExcept = checkLists(wiredSuite, wiredList.replace(' except auth/*  # the flow is the same', ''));
  assert.equal(noExcept.status, 1, noExcept.out);
  assert.match(noExcept.out, /auth\/a must be run at wire 2026-07-28/);
  assert.doesNotMatch(noExcept.out, /auth\/b must be run at wire/);
});

test('bad wires, an exemption without a reason and an entry for a wire that is not run fail', () => {
  const r = checkLists(wiredSuite, wiredList.replace('# the flow is the same', '')
                                            .replace('run auth/a', 'run auth/a 2026-07-28')
                                            .replace('run auth/ext', 'run auth/ext @2025-11-25 @2025-11-25'),
                       'wasm:\n  - tools_call@2024-11-05  # never run there\n');
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /"except auth\/\*" needs a reason/);
  assert.match(r.out, /run takes only @<dated version> wires \(got 2026-07-28\)/);
  assert.match(r.out, /"auth\/ext" names a wire twice/);
  assert.match(r.out, /wasm: tools_call@2024-11-05: .* does not run tools_call at wire 2024-11-05/);
});

test('a scenario the list does not classify fails the check', () => {
  const r = checkLists(suite, goodList.replace('skip other  # not ours\n', ''));
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /other: in `list --client` of 1\.0\.0 but not in/);
});

test('a must-run scenario that is skipped, a skip without reason and an unknown name fail', () => {
  const r = checkLists(suite, goodList.replace('run auth/b', 'skip auth/b  # later')
                                      .replace('run initialize', 'skip initialize')
                                      .replace('skip other  # not ours', 'skip other  # x\nrun gone'));
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /auth\/b must be run \(must-run auth\/\*\)/);
  assert.match(r.out, /initialize must be run \(must-run requirements 2025-11-25\)/);
  assert.match(r.out, /skip "initialize" needs a reason/);
  assert.match(r.out, /gone is not a client scenario of 1\.0\.0/);
});

test('an expected failure that the list does not run fails the check', () => {
  const r = checkLists(suite, goodList, 'wasm:\n  - other  # skipped anyway\n');
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /wasm: other is not a scenario .* runs/);
});

test('a suite of another version than the list fails the check', () => {
  const r = checkLists(fakeSuite('1.0.1', ['initialize'], ['initialize']), 'run initialize\n');
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /is version 1\.0\.1, not 1\.0\.0/);
});

test('the table has a row per scenario and a column per suite version and client', () => {
  const root = path.join(scratch, 'table');
  const put = (v, client, scenario, outcome, testPassed) => {
    const dir = path.join(root, v, client, scenario.replace('/', '_'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'verdict.json'),
                  JSON.stringify({ suiteVersion: v, client, scenario, outcome, testPassed }));
  };
  put('1.0', 'native', 'initialize', 'pass', true);
  put('1.0', 'wasm', 'initialize', 'fail', true);
  put('1.0', 'native', 'auth/a', 'pass', false);
  // A run at another wire is a row of its own (its label), beside the run at the default wire.
  const wired = path.join(root, '1.0', 'native', 'initialize@2026-07-28');
  mkdirSync(wired, { recursive: true });
  writeFileSync(path.join(wired, 'verdict.json'), JSON.stringify({
    suiteVersion: '1.0', client: 'native', scenario: 'initialize', label: 'initialize@2026-07-28',
    specVersion: '2026-07-28', outcome: 'fail', testPassed: false }));
  const r = tool(['table', '--markdown', root]);
  assert.equal(r.status, 0, r.out);
  const lines = r.out.split('\n');
  assert.equal(lines[0], '| scenario | 1.0 native | 1.0 wasm |');
  assert.ok(lines.includes('| initialize | pass | FAIL |'), r.out);
  assert.ok(lines.includes('| initialize@2026-07-28 | FAIL! |  |'), r.out);
  assert.ok(lines.includes('| auth/a | pass! |  |'), r.out);
  assert.ok(lines.includes('| passing | 2/3 | 0/1 |'), r.out);
});
