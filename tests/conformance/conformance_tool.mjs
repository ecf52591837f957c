// The bookkeeping around the official conformance suite (run_conformance.sh runs the suite
// itself), with no dependencies beyond Node:
//
//   judge        one scenario's verdict: reads the checks.json the suite wrote, decides
//                pass / fail, holds it against expected-failures-<version>.yml (an expected
//                failure that passes is a stale entry and fails too), writes verdict.json
//   check-lists  scenarios-<version>.txt against the suite's own `list --client` (every
//                scenario classified, the must-run sets run) and the expected-failures file
//                against the list (every entry a run scenario with a reason)
//   table        the pass/fail table (scenario[@wire] x suite version x client) from the
//                verdict.json files under one or more results directories
//
//   node conformance_tool.mjs judge --suite-version V --client native|wasm --scenario S
//        --result-dir DIR --harness-exit N --expected FILE [--spec-version W] [--label L]
//        [--wall-ms N]
//   node conformance_tool.mjs check-lists --suite-version V --suite <dist/index.js>
//        --scenarios FILE --expected FILE      (run with Node >= 22: it starts the suite)
//   node conformance_tool.mjs table [--markdown] <results-dir>...
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const kClients = ['native', 'wasm'];

function fail(message) {
  console.error(`conformance_tool: ${message}`);
  process.exit(2);
}

function parseOptions(argv, known) {
  const options = {};
  const rest = [];
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      rest.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (known.flags?.includes(name)) {
      options[name] = true;
    } else if (known.values?.includes(name)) {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`);
      options[name] = argv[++i];
    } else {
      fail(`unknown option ${arg}`);
    }
  }
  for (const name of known.required ?? []) {
    if (options[name] === undefined) fail(`--${name} is required`);
  }
  return { options, rest };
}

// ---------------------------------------------------------------------------------------
// expected-failures-<version>.yml: a strict subset of YAML, read line by line so that every
// entry's reason (its trailing comment) is kept and required.
//
//   client:                      # both clients (the suite's own --expected-failures key)
//     - auth/dpop                # reason (at every wire the scenario runs at)
//     - tools_call@2026-07-28    # reason (only the run at wire 2026-07-28)
//   native:                      # the native client only (the suite ignores this key)
//   wasm:                        # the wasm client only
export function readExpectedFailures(file) {
  const text = readFileSync(file, 'utf8');
  const sections = { client: new Map(), native: new Map(), wasm: new Map() };
  const problems = [];
  let section = null;
  text.split('\n').forEach((raw, index) => {
    const where = `${file}:${index + 1}`;
    const line = raw.replace(/\s+$/, '');
    if (line === '' || /^\s*#/.test(line)) return;
    const key = /^([A-Za-z0-9_-]+):\s*(?:#.*)?$/.exec(line);
    if (key) {
      if (!(key[1] in sections)) {
        problems.push(`${where}: unknown key "${key[1]}" (expected client, native or wasm)`);
        section = null;
      } else {
        section = key[1];
      }
      return;
    }
    const entry = /^\s+-\s+(\S+)\s*(?:#\s*(.*))?$/.exec(line);
    if (!entry) {
      problems.push(`${where}: not a "key:" line or a "  - <scenario>  # reason" entry: ${line}`);
      return;
    }
    if (!section) {
      problems.push(`${where}: entry "${entry[1]}" is not under client:, native: or wasm:`);
      return;
    }
    const reason = (entry[2] ?? '').trim();
    if (!reason) problems.push(`${where}: "${entry[1]}" has no reason (a trailing "# why" comment)`);
    for (const [other, entries] of Object.entries(sections)) {
      if (entries.has(entry[1]) && (other === section || other === 'client' || section === 'client')) {
        problems.push(`${where}: "${entry[1]}" is listed twice (also under ${other}:)`);
      }
    }
    sections[section].set(entry[1], reason);
  });
  return { sections, problems };
}

// The reason a scenario (run at `wire`, when given) is expected to fail for a client, or
// undefined: an entry for that wire (`scenario@wire`) first, then one for every wire.
function expectedReason(expected, client, scenario, wire) {
  const lookup = (key) => expected.sections.client.get(key) ?? expected.sections[client]?.get(key);
  return (wire ? lookup(`${scenario}@${wire}`) : undefined) ?? lookup(scenario);
}

// "name@wire" -> {name, wire}; "name" -> {name, wire: undefined}.
function splitWire(entry) {
  const at = entry.lastIndexOf('@');
  return at > 0 ? { name: entry.slice(0, at), wire: entry.slice(at + 1) } : { name: entry, wire: undefined };
}

const kWirePattern = /^\d{4}-\d{2}-\d{2}$/;

// ---------------------------------------------------------------------------------------
// scenarios-<version>.txt: every client scenario of the suite version on one line.
//
//   spec-version 2025-11-25        (optional) the wire of a `run` line that names none
//                                  (--spec-version ... --force); without it the suite picks
//   must-run requirements 2025-11-25   every scenario of the suite's frozen client set for
//                                      that revision must be `run` at that revision's wire
//   must-run requirements 2026-07-28 except auth/*  # why
//                                      ... those matching the pattern may run at any wire
//   must-run auth/*                    every scenario matching the pattern must be `run`
//   must-run initialize                this scenario must be `run`
//   run <scenario>                     one run, at the spec-version wire
//   run <scenario> @<wire> [@<wire>]   one run per wire named (a scenario that belongs to
//                                      two revisions runs once on each wire)
//   skip <scenario>  # why
//
// `runs` maps each run scenario to its wires (null: the suite's own pick).
export function readScenarioList(file) {
  const problems = [];
  const run = [];
  const runs = new Map();
  const skip = new Map();
  const mustRun = [];
  let specVersion;
  const lines = readFileSync(file, 'utf8').split('\n');
  // spec-version applies to every run line, wherever it stands.
  for (const raw of lines) {
    const m = /^\s*spec-version\s+(\S+)/.exec(raw);
    if (m) specVersion = m[1];
  }
  lines.forEach((raw, index) => {
    const where = `${file}:${index + 1}`;
    const comment = raw.indexOf('#');
    const body = (comment >= 0 ? raw.slice(0, comment) : raw).trim();
    const why = comment >= 0 ? raw.slice(comment + 1).trim() : '';
    if (body === '') return;
    const words = body.split(/\s+/);
    const seen = (name) => runs.has(name) || skip.has(name);
    switch (words[0]) {
      case 'spec-version':
        if (words.length !== 2) problems.push(`${where}: spec-version takes one version`);
        else if (!kWirePattern.test(words[1])) problems.push(`${where}: spec-version ${words[1]} is not a dated version`);
        break;
      case 'must-run':
        if (words[1] === 'requirements' && (words.length === 3 || (words.length === 5 && words[3] === 'except'))) {
          const rule = { requirements: words[2] };
          if (words.length === 5) {
            rule.except = words[4];
            if (!why) problems.push(`${where}: "except ${words[4]}" needs a reason (a trailing "# why" comment)`);
          }
          mustRun.push(rule);
        } else if (words.length === 2 && words[1] !== 'requirements') {
          mustRun.push({ pattern: words[1] });
        } else {
          problems.push(`${where}: must-run takes a scenario, a pattern ending in * or ` +
                        '"requirements <rev> [except <pattern>]"');
        }
        break;
      case 'run': {
        const wires = words.slice(2);
        if (words.length < 2) {
          problems.push(`${where}: run takes a scenario and optional @<wire>s`);
        } else if (seen(words[1])) {
          problems.push(`${where}: "${words[1]}" is listed twice`);
        } else if (wires.some((w) => !w.startsWith('@') || !kWirePattern.test(w.slice(1)))) {
          problems.push(`${where}: after the scenario, run takes only @<dated version> wires (got ${wires.join(' ')})`);
        } else if (new Set(wires).size !== wires.length) {
          problems.push(`${where}: "${words[1]}" names a wire twice`);
        } else {
          run.push(words[1]);
          runs.set(words[1], wires.length ? wires.map((w) => w.slice(1)) : [specVersion ?? null]);
        }
        break;
      }
      case 'skip':
        if (words.length !== 2) {
          problems.push(`${where}: skip takes one scenario`);
        } else if (seen(words[1])) {
          problems.push(`${where}: "${words[1]}" is listed twice`);
        } else {
          if (!why) problems.push(`${where}: skip "${words[1]}" needs a reason (a trailing "# why" comment)`);
          skip.set(words[1], why);
        }
        break;
      default:
        problems.push(`${where}: unknown directive "${words[0]}"`);
    }
  });
  return { run, runs, skip, mustRun, specVersion, problems };
}

// ---------------------------------------------------------------------------------------
// judge

function findChecksFiles(dir) {
  const found = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name === 'checks.json') found.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

function judge(argv) {
  const { options } = parseOptions(argv, {
    values: ['suite-version', 'client', 'scenario', 'result-dir', 'harness-exit', 'expected',
             'spec-version', 'label', 'wall-ms'],
    required: ['suite-version', 'client', 'scenario', 'result-dir', 'harness-exit', 'expected'],
  });
  const { scenario, client } = options;
  if (!kClients.includes(client)) fail(`--client must be one of ${kClients.join(', ')}`);
  const expected = readExpectedFailures(options.expected);
  if (expected.problems.length) fail(expected.problems.join('\n'));
  const wire = options['spec-version'] || undefined;
  const reason = expectedReason(expected, client, scenario, wire);
  // The scenario's row in the table: "<scenario>@<wire>" for a run at another wire than the
  // list's default one (run_conformance.sh --label).
  const label = options.label || scenario;
  const harnessExit = Number(options['harness-exit']);

  const files = findChecksFiles(options['result-dir']);
  let checks = [];
  let outcome;
  let why;
  if (files.length !== 1) {
    // No checks at all: the suite crashed, skipped the scenario or was killed by the outer
    // timeout. That is a broken run, never an expected failure of mcprt.
    outcome = 'error';
    why = files.length === 0
      ? `the suite wrote no checks.json (exit ${harnessExit}): see ${path.join(options['result-dir'], 'harness.log')}`
      : `the suite wrote ${files.length} checks.json files; expected one`;
  } else {
    checks = JSON.parse(readFileSync(files[0], 'utf8'));
    const successes = checks.filter((c) => c.status === 'SUCCESS').length;
    // The suite's exit status already folds in FAILURE and WARNING checks, a client that
    // timed out and a client that exited non-zero; a pass also needs one check that passed
    // (a scenario that checked nothing proves nothing).
    if (harnessExit === 0 && successes > 0) {
      outcome = 'pass';
    } else {
      outcome = 'fail';
      why = harnessExit === 0 ? 'no check passed' : `the suite reported a failure (exit ${harnessExit})`;
    }
  }
  const count = (status) => checks.filter((c) => c.status === status).length;
  const verdict = {
    suiteVersion: options['suite-version'],
    client,
    scenario,
    label,
    specVersion: wire ?? null,
    outcome,
    expectedFailure: reason ?? null,
    checks: { success: count('SUCCESS'), failure: count('FAILURE'), warning: count('WARNING') },
    harnessExit,
    wallMs: options['wall-ms'] ? Number(options['wall-ms']) : null,
  };

  const title = `${label} (${client}, conformance ${options['suite-version']})`;
  console.log(`checks: ${verdict.checks.success} passed, ${verdict.checks.failure} failed, ` +
              `${verdict.checks.warning} warnings`);
  for (const c of checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
    console.log(`  ${c.status} ${c.id}: ${c.errorMessage || c.description}`);
  }
  let ok;
  if (outcome === 'error') {
    ok = false;
    console.log(`ERROR ${title}: ${why}`);
  } else if (outcome === 'pass' && reason === undefined) {
    ok = true;
    console.log(`PASS ${title}`);
  } else if (outcome === 'fail' && reason !== undefined) {
    ok = true;
    console.log(`EXPECTED FAILURE ${title}: ${why}; listed because: ${reason}`);
  } else if (outcome === 'pass') {
    ok = false;
    console.log(`STALE ENTRY ${title}: it passes now; remove it from ${path.basename(options.expected)} ` +
                `(listed because: ${reason})`);
  } else {
    ok = false;
    console.log(`FAIL ${title}: ${why} (not in ${path.basename(options.expected)})`);
  }
  verdict.testPassed = ok;
  writeFileSync(path.join(options['result-dir'], 'verdict.json'), `${JSON.stringify(verdict, null, 2)}\n`);
  if (!ok) {
    for (const f of files) {
      for (const stream of ['stdout.txt', 'stderr.txt']) {
        const p = path.join(path.dirname(f), stream);
        if (!existsSync(p)) continue;
        const text = readFileSync(p, 'utf8').trim();
        if (text) console.log(`--- client ${stream} (last 40 lines)\n${text.split('\n').slice(-40).join('\n')}`);
      }
    }
  }
  process.exit(ok ? 0 : 1);
}

// ---------------------------------------------------------------------------------------
// check-lists

function listScenarios(suite, args) {
  const r = spawnSync(process.execPath, [suite, 'list', '--client', ...args], { encoding: 'utf8' });
  if (r.status !== 0) fail(`${suite} list --client ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  // Only the "Client scenarios" section; with --requirements the output also lists server
  // scenarios and the ones "run and reported, but never scored".
  const names = [];
  let inClient = false;
  for (const line of r.stdout.split('\n')) {
    if (/^Client scenarios/.test(line)) inClient = true;
    else if (inClient && line.trim() === '') inClient = false;
    else if (inClient) {
      const m = /^\s+-\s+(\S+)/.exec(line);
      if (m) names.push(m[1]);
    }
  }
  if (names.length === 0) fail(`${suite} list --client ${args.join(' ')} printed no client scenarios`);
  return names;
}

function checkLists(argv) {
  const { options } = parseOptions(argv, {
    values: ['suite-version', 'suite', 'scenarios', 'expected'],
    required: ['suite-version', 'suite', 'scenarios', 'expected'],
  });
  const version = options['suite-version'];
  const pkg = JSON.parse(readFileSync(path.join(path.dirname(options.suite), '..', 'package.json'), 'utf8'));
  const problems = [];
  if (pkg.version !== version) problems.push(`${options.suite} is version ${pkg.version}, not ${version}`);

  const list = readScenarioList(options.scenarios);
  problems.push(...list.problems);
  const all = listScenarios(options.suite, []);
  const file = path.basename(options.scenarios);
  for (const name of all) {
    if (!list.run.includes(name) && !list.skip.has(name)) {
      problems.push(`${name}: in \`list --client\` of ${version} but not in ${file}: add it as run or skip (with why)`);
    }
  }
  for (const name of [...list.run, ...list.skip.keys()]) {
    if (!all.includes(name)) problems.push(`${file}: ${name} is not a client scenario of ${version}`);
  }
  const runsAt = (name, wire) => (list.runs.get(name) ?? []).includes(wire);
  const matches = (pattern, name) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern);
  for (const rule of list.mustRun) {
    let required;
    let what;
    if (rule.requirements) {
      required = listScenarios(options.suite, ['--requirements', rule.requirements]);
      what = `requirements ${rule.requirements}`;
      // A frozen set is measured at its own revision's wire: each scenario runs there
      // (one that belongs to two revisions runs once on each), except what `except` names.
      for (const name of required) {
        if (!list.run.includes(name)) continue;  // reported below
        if (rule.except && matches(rule.except, name)) continue;
        if (!runsAt(name, rule.requirements)) {
          problems.push(`${file}: ${name} must be run at wire ${rule.requirements} (must-run ${what}) ` +
                        `but runs at ${list.runs.get(name).map((w) => w ?? "the suite's pick").join(', ')}`);
        }
      }
      if (rule.except && !required.some((n) => matches(rule.except, n))) {
        problems.push(`${file}: must-run ${what} except ${rule.except}: the pattern matches no scenario of the set`);
      }
    } else if (rule.pattern.endsWith('*')) {
      required = all.filter((n) => matches(rule.pattern, n));
      what = rule.pattern;
    } else {
      required = [rule.pattern];
      what = rule.pattern;
    }
    if (required.length === 0) problems.push(`${file}: must-run ${what} matches no scenario`);
    for (const name of required) {
      if (!list.run.includes(name)) problems.push(`${file}: ${name} must be run (must-run ${what}) but is not`);
    }
  }

  const expected = readExpectedFailures(options.expected);
  problems.push(...expected.problems);
  for (const [section, entries] of Object.entries(expected.sections)) {
    for (const entry of entries.keys()) {
      const { name, wire } = splitWire(entry);
      if (!list.run.includes(name)) {
        problems.push(`${path.basename(options.expected)}: ${section}: ${name} is not a scenario ${file} runs`);
      } else if (wire !== undefined && !runsAt(name, wire)) {
        problems.push(`${path.basename(options.expected)}: ${section}: ${entry}: ${file} does not run ${name} at wire ${wire}`);
      }
    }
  }

  if (problems.length) {
    console.log(`conformance ${version}: ${problems.length} problem(s):`);
    for (const p of problems) console.log(`  ${p}`);
    process.exit(1);
  }
  const runList = [...list.runs].flatMap(([name, wires]) => wires.map((wire) => ({ name, wire })));
  const expectedCount = (c) => runList.filter(({ name, wire }) => expectedReason(expected, c, name, wire) !== undefined).length;
  const wires = [...new Set(runList.map((r) => r.wire ?? "the suite's pick"))].sort();
  const perWire = wires.map((w) => `${runList.filter((r) => (r.wire ?? "the suite's pick") === w).length} at ${w}`);
  console.log(`conformance ${version}: ${all.length} client scenarios; ${list.run.length} run ` +
              `(${runList.length} runs: ${perWire.join(', ')}), ${list.skip.size} skipped (with reasons); ` +
              'expected failures: ' + kClients.map((c) => `${c} ${expectedCount(c)}`).join(', '));
}

// ---------------------------------------------------------------------------------------
// table

function table(argv) {
  const { options, rest } = parseOptions(argv, { flags: ['markdown'] });
  if (rest.length === 0) fail('table needs one or more results directories');
  const verdicts = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name === 'verdict.json') verdicts.push(JSON.parse(readFileSync(p, 'utf8')));
    }
  };
  for (const dir of rest) {
    if (!existsSync(dir)) fail(`${dir} does not exist`);
    walk(dir);
  }
  const versions = [...new Set(verdicts.map((v) => v.suiteVersion))].sort();
  const columns = versions.flatMap((v) => kClients.map((c) => ({ v, c })));
  // One row per scenario and wire: a run at another wire than its list's default is its own
  // row, "<scenario>@<wire>" (the verdict's label).
  const rowOf = (v) => v.label ?? v.scenario;
  const byKey = new Map(verdicts.map((v) => [`${v.suiteVersion}|${v.client}|${rowOf(v)}`, v]));
  const scenarios = [...new Set(verdicts.map(rowOf))].sort((a, b) => {
    const auth = (s) => (s.startsWith('auth/') ? 1 : 0);
    return auth(a) - auth(b) || a.localeCompare(b);
  });
  const cell = (v) => {
    if (!v) return '';
    const mark = v.outcome === 'pass' ? 'pass' : v.outcome === 'fail' ? 'FAIL' : 'ERROR';
    return v.testPassed ? mark : `${mark}!`;  // "!": the ctest failed (unexpected or stale)
  };
  const header = ['scenario', ...columns.map(({ v, c }) => `${v} ${c}`)];
  const rows = scenarios.map((s) => [s, ...columns.map(({ v, c }) => cell(byKey.get(`${v}|${c}|${s}`)))]);
  const totals = ['passing', ...columns.map(({ v, c }) => {
    const mine = verdicts.filter((x) => x.suiteVersion === v && x.client === c);
    return `${mine.filter((x) => x.outcome === 'pass').length}/${mine.length}`;
  })];
  if (options.markdown) {
    const line = (cells) => `| ${cells.join(' | ')} |`;
    console.log(line(header));
    console.log(line(header.map(() => '---')));
    for (const r of [...rows, totals]) console.log(line(r));
  } else {
    const widths = header.map((h, i) => Math.max(h.length, ...[...rows, totals].map((r) => r[i].length)));
    const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
    console.log(line(header));
    for (const r of [...rows, totals]) console.log(line(r));
  }
  console.log('\npass / FAIL: the scenario\'s outcome; "!": its ctest failed (an unexpected failure, ' +
              'a stale expected-failure entry, or ERROR: the suite itself did not finish); empty: not run');
}

const [command, ...args] = process.argv.slice(2);
switch (command) {
  case 'judge': judge(args); break;
  case 'check-lists': checkLists(args); break;
  case 'table': table(args); break;
  default: fail('usage: conformance_tool.mjs judge|check-lists|table ... (see the top of this file)');
}
