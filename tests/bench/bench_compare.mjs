// Side-by-side benchmark (SPEC §12): mcprt against the official TypeScript SDK clients v1
// (`@modelcontextprotocol/sdk`) and v2 (`@modelcontextprotocol/client`) and a physical
// floor, all against one minimal C++ server (mcprt_bench_echo_server), in one run. Rounds
// are interleaved (every client once per round, in a rotating order) so that load from
// elsewhere on the machine hits every client alike; tables show medians and ratios.
//
//   node tests/bench/bench_compare.mjs [--build build/native] [--only startup,scaling,memory]
//        [--rounds 3] [--servers 50] [--tools 20] [--delay 2000] [--json FILE] [--smoke]
//        [--calls 2000] [--pipelined 20000] [--window 64] [--cpu N]  (--only calls)
//        [--path-tools 2000] [--wasm-build build/wasm]             (--only toolpath)
//
// Sections (each a function in `sections` below: it gets the context, runs its rounds and
// returns {title, rows, notes}; a new section is one more entry):
//   startup  N servers × T tools, each answering initialize after DELAY ms, every client
//            connecting to all of them in parallel and listing their tools: the slowest
//            server alone (floor: a raw client, no library), all N servers through the
//            same raw client (what starting N processes costs), mcprt cold (empty tool cache)
//            and warm (the cache the cold run filled: the loader returns at the startup
//            gate with deferred tools), the `mcprt tools --json` CLI (its elapsedMs), TS v1
//            and v2. Time to all tools, client CPU (user + sys), ratios to the floor.
//   scaling  mcprt cold over 10, 50, 200 servers × 1, 20, 50 tools (no init delay): wall
//            and CPU, CPU per server and per (server·tool); linear startup keeps CPU per
//            server flat along each row and the cost of one more tool flat down a column.
//   memory   idle RSS slope from 0 to N servers × T tools in one process: the client alone
//            (mcprt ClientSession per server, TS v1 / v2 Client per server, each having
//            listed its tools, the list dropped) and mcprt's whole runtime (manager, tool
//            cache, registry: every tool registered).
//   calls    one stdio connection, tools/call {"message":"hello"}: sequential round trips
//            (p50, p99, client CPU per call, syscalls and heap allocations per call) and
//            pipelined throughput with --window calls in flight; the raw pipe ping-pong of
//            the same bytes (the floor) and a raw client of the echo server, both measured
//            by mcprt_bench_roundtrip in the same process as mcprt, then TS v1 and v2.
//            --cpu N runs every client and its server on CPU N (taskset for the TS ones):
//            on a virtual machine, a pair on two CPUs sometimes pays for waking a halted
//            CPU on every call, whichever client it is.
//   toolpath a tools/list answer of --path-tools tools (2,000: about 5 MB) from bytes to
//            registered tools (tests/bench/tool_path.hpp), natively (mcprt_bench_tool_path)
//            and in wasm (mcprt_bench_tool_path_wasm of --wasm-build, built as the shipped
//            module is, in this Node process), against
//            JSON.parse of the same bytes in this process; natively also nlohmann's parser
//            with the same registration (the parser mcprt had before its own).
// --smoke runs every section with tiny counts (seconds; ctest bench.compare_smoke).

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

// ------------------------------------------------------------------------------ options

const opt = {
  build: path.join(root, 'build/native'),
  only: 'startup,scaling,memory,calls,toolpath',
  rounds: 3,
  servers: 50,
  tools: 20,
  delay: 2000,
  json: '',
  smoke: false,
  scalingServers: '10,50,200',
  scalingTools: '1,20,50',
  calls: 2000,
  pipelined: 20000,
  window: 64,
  cpu: -1,
  pathTools: 2000,
  wasmBuild: path.join(root, 'build/wasm'),
};
{
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    const key = a[i].replace(/^--/, '').replace(/-(.)/g, (_, c) => c.toUpperCase());
    if (!(key in opt)) throw new Error(`unknown option ${a[i]}`);
    if (typeof opt[key] === 'boolean') opt[key] = true;
    else opt[key] = typeof opt[key] === 'number' ? Number(a[++i]) : a[++i];
  }
  if (opt.smoke) {
    Object.assign(opt, { rounds: 1, servers: 2, tools: 2, delay: 0, scalingServers: '2', scalingTools: '1,2',
      calls: 50, pipelined: 200, pathTools: 20 });
  }
}

const bin = {
  client: path.join(opt.build, 'tests/bench/mcprt_bench_startup_client'),
  server: path.join(opt.build, 'tests/bench/mcprt_bench_echo_server'),
  cli: path.join(opt.build, 'platform-native/cli/mcprt'),
  roundtrip: path.join(opt.build, 'tests/bench/mcprt_bench_roundtrip'),
  toolPath: path.join(opt.build, 'tests/bench/mcprt_bench_tool_path'),
};
for (const k of ['client', 'server']) {
  if (!existsSync(bin[k])) throw new Error(`build ${bin[k]} first`);
}
const tsClient = path.join(here, 'bench_ts_client.mjs');

// Which TS SDKs are installed (a missing one is reported, not fatal).
async function has(mod) {
  try {
    await import(mod);
    return true;
  } catch {
    return false;
  }
}
const sdk = {
  v1: await has('@modelcontextprotocol/sdk/client/index.js'),
  v2: await has('@modelcontextprotocol/client'),
};

const work = mkdtempSync(path.join(tmpdir(), 'mcprt-bench-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// ------------------------------------------------------------------------------ helpers

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x, digits = 0) =>
  Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '–';
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '–');

// Runs a command that prints one JSON line; returns it parsed. A command that failed but
// still printed its line (mcprt load: some servers failed) counts, with `failed: true`.
function runJson(cmd, args, env = {}) {
  let out;
  let failed = false;
  try {
    out = execFileSync(cmd, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 256 * 1024 * 1024,
      timeout: 600_000,
    }).toString();
  } catch (e) {
    out = e.stdout ? e.stdout.toString() : '';
    if (!out.trim().startsWith('{')) throw e;
    failed = true;
  }
  const lines = out.trim().split('\n');
  return { ...JSON.parse(lines[lines.length - 1]), ...(failed ? { failed } : {}) };
}
const failures = (list) => {
  const n = list.filter((x) => x.failed || x.errors).length;
  return n ? ` (${n} run${n > 1 ? 's' : ''} with failed servers)` : '';
};

// A config of `n` echo servers with `tools` tools and `delay` ms; a distinct env per entry
// (identical endpoints would be deduplicated, SPEC §2.3).
function config(n, tools, delay) {
  const file = path.join(work, `config-${n}-${tools}-${delay}.json`);
  const servers = {};
  for (let i = 0; i < n; i++) {
    servers[`s${String(i).padStart(3, '0')}`] = {
      command: bin.server,
      args: ['--tools', String(tools), '--init-delay-ms', String(delay)],
      env: { MCPRT_BENCH_SLOT: String(i) },
    };
  }
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

let cacheSeq = 0;
const freshCache = () => path.join(work, `cache-${cacheSeq++}`);

const mcprtLoad = (cfg, cacheDir) =>
  runJson(bin.client, ['load', '--config', cfg, '--cache-dir', cacheDir]);
const tsStartup = (v, n, tools, delay) =>
  runJson(process.execPath, [tsClient, 'startup', '--sdk', v, '--server', bin.server,
    '--servers', String(n), '--tools', String(tools), '--delay', String(delay)]);

// Rounds of named measurements, interleaved: each round runs every measure once, the
// order rotating by one per round. Returns name → [samples].
function interleave(measures, rounds) {
  const names = Object.keys(measures);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      samples[name].push(measures[name]());
    }
  }
  return samples;
}
const med = (list, key) => median(list.map((x) => x[key]));

function printTable(title, header, rows, notes = []) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  console.log(`\n## ${title}\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  for (const n of notes) console.log(n);
}

// ----------------------------------------------------------------------------- sections

const sections = {
  startup() {
    const { servers: n, tools: t, delay: d } = opt;
    const cfg = config(n, t, d);
    const measures = {
      floor: () => runJson(bin.client, ['floor', '--server', bin.server, '--tools', String(t), '--init-delay-ms', String(d)]),
      // All N servers through a raw client (one thread, poll): what starting N processes
      // costs this machine, whatever the client.
      floorAll: () => runJson(bin.client, ['floor-all', '--server', bin.server, '--servers', String(n), '--tools', String(t),
                                           '--init-delay-ms', String(d)]),
      // Cold then warm on the cache the cold run filled, as one measure (warm needs it).
      mcprt: () => {
        const cache = freshCache();
        const cold = mcprtLoad(cfg, cache);
        const warm = mcprtLoad(cfg, cache);
        return { cold, warm };
      },
    };
    if (existsSync(bin.cli)) {
      measures.cli = () => {
        const cache = freshCache();
        const run = () => {
          const t0 = performance.now();
          const out = JSON.parse(execFileSync(bin.cli, ['tools', '--json', '--config', cfg], {
            env: { ...process.env, XDG_CACHE_HOME: cache, MCPRT_LOG_LEVEL: 'off' },
            stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 256 * 1024 * 1024,
          }).toString());
          return { elapsedMs: out.elapsedMs, wallMs: performance.now() - t0, tools: out.tools.length };
        };
        return { cold: run(), warm: run() };
      };
    }
    if (sdk.v1) measures.ts1 = () => tsStartup('v1', n, t, d);
    if (sdk.v2) measures.ts2 = () => tsStartup('v2', n, t, d);
    const s = interleave(measures, opt.rounds);

    const floor = med(s.floor, 'elapsedMs');
    const floorAll = med(s.floorAll, 'elapsedMs');
    const rows = [['slowest server alone (raw client, floor)', fmt(floor), '–', '1.00×', '–'],
                  [`all ${n} servers, raw client (${n} processes starting)`, fmt(floorAll), '–', ratio(floorAll, floor), '–']];
    const row = (label, list, extra = '') => {
      const e = med(list, 'elapsedMs');
      rows.push([label, fmt(e), fmt(med(list, 'cpuMs')), ratio(e, floor), extra]);
    };
    const tools = (x) => `${x.tools} tools${x.deferred ? `, ${x.deferred} deferred` : ''}`;
    const cold = s.mcprt.map((x) => x.cold), warm = s.mcprt.map((x) => x.warm);
    row('mcprt loader, cold', cold, tools(cold[0]) + failures(cold));
    row('mcprt loader, warm cache', warm, tools(warm[0]) + failures(warm));
    if (s.cli) {
      for (const k of ['cold', 'warm']) {
        const list = s.cli.map((x) => x[k]);
        rows.push([`mcprt tools --json, ${k} (elapsedMs; wall incl. exit)`, fmt(med(list, 'elapsedMs')), '–',
          ratio(med(list, 'elapsedMs'), floor), `wall ${fmt(med(list, 'wallMs'))} ms`]);
      }
    }
    if (s.ts1) row('TS SDK v1 client', s.ts1, `${s.ts1[0].tools} tools`);
    if (s.ts2) row('TS SDK v2 client', s.ts2, `${s.ts2[0].tools} tools`);
    const notes = [];
    if (!sdk.v1) notes.push('TS SDK v1 not installed (npm ci): skipped');
    if (!sdk.v2) notes.push('TS SDK v2 not installed (npm ci): skipped');
    const title = `startup: ${n} servers × ${t} tools, initialize after ${d} ms (median of ${opt.rounds})`;
    printTable(title, ['client', 'ms to all tools', 'CPU ms', '/ floor', ''], rows, notes);
    return { title, samples: s };
  },

  scaling() {
    const ns = opt.scalingServers.split(',').map(Number);
    const ts = opt.scalingTools.split(',').map(Number);
    const measures = {};
    for (const n of ns) {
      for (const t of ts) {
        const cfg = config(n, t, 0);
        measures[`${n}x${t}`] = () => mcprtLoad(cfg, freshCache());
      }
    }
    const s = interleave(measures, opt.rounds);
    const rows = [];
    for (const n of ns) {
      for (const t of ts) {
        const list = s[`${n}x${t}`];
        const cpu = med(list, 'cpuMs');
        rows.push([`${n} × ${t}${failures(list)}`, fmt(med(list, 'elapsedMs')), fmt(cpu), fmt((cpu * 1000) / n),
          fmt((cpu * 1000) / (n * t), 1)]);
      }
    }
    // The marginal cost of a tool: (CPU at the most tools − CPU at the fewest) per extra
    // server·tool, for each server count. Flat down the list = linear in servers × tools.
    const notes = [];
    if (ts.length > 1) {
      const lo = Math.min(...ts), hi = Math.max(...ts);
      for (const n of ns) {
        const extra = (med(s[`${n}x${hi}`], 'cpuMs') - med(s[`${n}x${lo}`], 'cpuMs')) * 1000 / (n * (hi - lo));
        notes.push(`${n} servers: one more tool costs ${fmt(extra, 1)} µs CPU per server (from ${lo} to ${hi} tools)`);
      }
    }
    const title = `scaling: mcprt loader, cold, no init delay (median of ${opt.rounds})`;
    printTable(title, ['servers × tools', 'wall ms', 'CPU ms', 'CPU µs / server', 'CPU µs / (server·tool)'], rows, notes);
    return { title, samples: s };
  },

  memory() {
    const n = opt.servers, t = opt.tools, step = Math.max(1, Math.round(n / 5));
    const rss = (what) => () => runJson(bin.client, ['rss', '--what', what, '--server', bin.server,
      '--servers', String(n), '--tools', String(t), '--step', String(step)]);
    const tsRss = (v) => () => runJson(process.execPath, ['--expose-gc', tsClient, 'rss', '--sdk', v,
      '--server', bin.server, '--servers', String(n), '--tools', String(t), '--step', String(step)]);
    const measures = { client: rss('client'), runtime: rss('runtime') };
    if (sdk.v1) measures.ts1 = tsRss('v1');
    if (sdk.v2) measures.ts2 = tsRss('v2');
    const s = interleave(measures, opt.rounds);
    const rows = [];
    // The slope over every point (0 → N, the SPEC's measure) and the marginal one from the
    // first batch on (without one-time costs: the first spawn, the first parse, the pools).
    const marginal = (x) => {
      const p = x.points;
      return p.length > 2 ? (p.at(-1)[1] - p[1][1]) / (p.at(-1)[0] - p[1][0]) : x.slopeKiB;
    };
    const row = (label, list, goal) => rows.push([label, fmt(med(list, 'slopeKiB'), 1),
      fmt(median(list.map(marginal)), 1), fmt(list[0].points.at(-1)[1] - list[0].points[0][1]), goal]);
    row('mcprt client (ClientSession per server)', s.client, '≤ 64');
    if (s.ts1) row('TS SDK v1 client (Client per server)', s.ts1, '');
    if (s.ts2) row('TS SDK v2 client (Client per server)', s.ts2, '');
    row('mcprt whole runtime (manager, cache, registry)', s.runtime, '≤ 256');
    const title = `idle memory: RSS slope from 0 to ${n} connected servers × ${t} tools (median of ${opt.rounds})`;
    printTable(title, ['', 'KiB / server (0→N fit)', `KiB / server (${step}→${n})`, `RSS growth 0→${n} KiB (round 1)`, 'SPEC goal'], rows);
    return { title, samples: s };
  },

  calls() {
    if (!existsSync(bin.roundtrip)) throw new Error(`build ${bin.roundtrip} first`);
    const warmup = Math.max(100, Math.round(opt.calls / 10));
    const measures = {
      // The floor, a raw client of the same server and mcprt, interleaved inside one process.
      mcprt: () => {
        const file = path.join(work, 'roundtrip.json');
        execFileSync(bin.roundtrip, ['--only', 'stdio', '--server', bin.server, '--bare-server',
          '--calls', String(opt.calls), '--warmup', String(warmup), '--pipelined', String(opt.pipelined),
          '--window', String(opt.window), '--json', file, ...(opt.cpu >= 0 ? ['--cpu', String(opt.cpu)] : [])],
          { stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
        return JSON.parse(readFileSync(file, 'utf8')).stdio;
      },
    };
    const tsArgs = (v) => [tsClient, 'calls', '--sdk', v, '--server', bin.server,
      '--calls', String(opt.calls), '--warmup', String(opt.smoke ? 20 : Math.max(1000, warmup)), '--pipelined', String(opt.pipelined),
      '--window', String(opt.window)];
    const ts = (v) => () => (opt.cpu >= 0
      ? runJson('taskset', ['-c', String(opt.cpu), process.execPath, ...tsArgs(v)])
      : runJson(process.execPath, tsArgs(v)));
    if (sdk.v1) measures.ts1 = ts('v1');
    if (sdk.v2) measures.ts2 = ts('v2');
    const s = interleave(measures, opt.rounds);
    const m = s.mcprt;
    const pick = (f) => median(m.map(f));
    const floorP50 = pick((x) => x.pipe.p50_us), floorP99 = pick((x) => x.pipe.p99_us);
    const count = (kind, who) => pick((x) => (x.counts && x.counts[kind] ? x.counts[kind][who] : NaN));
    const rows = [
      ['raw pipe ping-pong, same bytes (floor)', fmt(floorP50, 1), fmt(floorP99, 1), '1.00×',
        fmt(pick((x) => x.cpu_per_call_us.pipe), 1), fmt(count('syscalls_per_call', 'pipe'), 1),
        fmt(count('allocations_per_call', 'pipe'), 1), fmt(pick((x) => x.pipelined && x.pipelined.pipe_calls_per_s))],
      ['raw client → echo server', fmt(pick((x) => x.raw_demo.p50_us), 1), fmt(pick((x) => x.raw_demo.p99_us), 1),
        ratio(pick((x) => x.raw_demo.p50_us), floorP50), fmt(pick((x) => x.cpu_per_call_us.raw_demo), 1),
        fmt(count('syscalls_per_call', 'raw_demo'), 1), fmt(count('allocations_per_call', 'raw_demo'), 1),
        fmt(pick((x) => x.pipelined && x.pipelined.raw_demo_calls_per_s))],
      ['mcprt ClientSession → echo server', fmt(pick((x) => x.mcprt.p50_us), 1), fmt(pick((x) => x.mcprt.p99_us), 1),
        ratio(pick((x) => x.mcprt.p50_us), floorP50), fmt(pick((x) => x.cpu_per_call_us.mcprt), 1),
        fmt(count('syscalls_per_call', 'mcprt'), 1), fmt(count('allocations_per_call', 'mcprt'), 1),
        fmt(pick((x) => x.pipelined && x.pipelined.mcprt_calls_per_s))],
    ];
    const tsRow = (label, list) => rows.push([label, fmt(med(list, 'p50Us'), 1), fmt(med(list, 'p99Us'), 1),
      ratio(med(list, 'p50Us'), floorP50), fmt(med(list, 'cpuUsPerCall'), 1), '–', '–', fmt(med(list, 'pipelinedPerS'))]);
    if (s.ts1) tsRow('TS SDK v1 client', s.ts1);
    if (s.ts2) tsRow('TS SDK v2 client', s.ts2);
    const notes = [`p99 of the floor: ${fmt(floorP99, 1)} µs; mcprt's allocations include the ${fmt(count('allocations_per_call', 'mcprt_arguments'))} of the caller's arguments object`];
    if (s.ts1) notes.push(`client CPU per call, mcprt / TS v1: ${ratio(pick((x) => x.cpu_per_call_us.mcprt), med(s.ts1, 'cpuUsPerCall'))} (SPEC ≤ 0.10×)`);
    if (!sdk.v1) notes.push('TS SDK v1 not installed (npm ci): skipped');
    if (!sdk.v2) notes.push('TS SDK v2 not installed (npm ci): skipped');
    const title = `calls: tools/call over stdio, ${opt.calls} sequential, ${opt.pipelined} pipelined (window ${opt.window}), median of ${opt.rounds}${opt.cpu >= 0 ? `, all on CPU ${opt.cpu}` : ''}`;
    printTable(title, ['client', 'p50 µs', 'p99 µs', 'p50 / floor', 'CPU µs/call', 'syscalls/call', 'allocs/call', 'pipelined calls/s'], rows, notes);
    return { title, samples: s };
  },

  async toolpath() {
    if (!existsSync(bin.toolPath)) throw new Error(`build ${bin.toolPath} first`);
    const file = path.join(work, 'tools-list.json');
    runJson(bin.toolPath, ['--tools', String(opt.pathTools), '--write', file, '--iterations', '0']);
    const bytes = readFileSync(file);
    const text = bytes.toString('utf8');
    const iterations = opt.smoke ? 2 : 15;
    // Median ms of `run` (which returns how many tools it got); `after` runs untimed.
    const timed = (run, after = () => {}) => {
      const times = [];
      for (let i = 0; i < iterations; i++) {
        const t0 = performance.now();
        const count = run();
        times.push(performance.now() - t0);
        after();
        if (count !== opt.pathTools) throw new Error(`${count} tools instead of ${opt.pathTools}`);
      }
      return median(times);
    };
    const wasmModule = path.join(opt.wasmBuild, 'tests/mcprt_bench_tool_path_wasm.mjs');
    let wasm = null;
    if (existsSync(wasmModule)) wasm = await (await import(pathToFileURL(wasmModule).href)).default();
    const measures = {
      jsonParse: () => ({ ms: timed(() => JSON.parse(text).result.tools.length) }),
      native: () => runJson(bin.toolPath, ['--file', file, '--iterations', String(iterations)]),
    };
    // The bytes go into the module's memory as a fetch body does (malloc, one copy), then
    // toolPathRun parses and registers them (the set is freed outside the timed part), or
    // toolPathParse parses them alone (the message freed inside it).
    if (wasm) {
      const inModule = (entry) => () => {
        const at = wasm._malloc(bytes.length);
        wasm.HEAPU8.set(bytes, at);
        const count = entry(at, bytes.length);
        wasm._free(at);
        return count;
      };
      measures.wasm = () => ({ ms: timed(inModule(wasm.toolPathRun), () => wasm.toolPathClear()) });
      measures.wasmParse = () => ({ ms: timed(inModule(wasm.toolPathParse)) });
    }
    const s = interleave(measures, opt.rounds);
    const base = med(s.jsonParse, 'ms');
    const rows = [
      ['Node JSON.parse, same bytes (baseline)', fmt(base, 1), '1.00×', ''],
      ['mcprt native: parse + register', fmt(med(s.native, 'path_ms'), 1), ratio(med(s.native, 'path_ms'), base), '≤ 1.5×'],
      ['  of which parse_untrusted_json', fmt(med(s.native, 'parse_ms'), 1), ratio(med(s.native, 'parse_ms'), base), ''],
      ['  nlohmann json::parse + register (before)', fmt(med(s.native, 'nlohmann_path_ms'), 1),
        ratio(med(s.native, 'nlohmann_path_ms'), base), ''],
    ];
    if (s.wasm) {
      rows.push(['mcprt wasm: bytes in + parse + register', fmt(med(s.wasm, 'ms'), 1), ratio(med(s.wasm, 'ms'), base), '≤ 1.5×']);
      rows.push(['  of which bytes in + parse_untrusted_json', fmt(med(s.wasmParse, 'ms'), 1), ratio(med(s.wasmParse, 'ms'), base), '']);
    }
    const notes = [`${s.native[0].tools} tools, ${fmt(s.native[0].bytes)} bytes; medians of ${iterations} iterations per round`];
    if (!wasm) notes.push(`wasm: ${wasmModule} not built (cmake --preset wasm-release): skipped`);
    const title = `toolpath: a tools/list of ${opt.pathTools} tools from bytes to registered tools, median of ${opt.rounds}`;
    printTable(title, ['', 'ms', 'ratio', 'SPEC goal'], rows, notes);
    return { title, samples: s };
  },
};

// --------------------------------------------------------------------------------- main

const results = {};
for (const name of opt.only.split(',')) {
  if (!sections[name]) throw new Error(`unknown section ${name} (have: ${Object.keys(sections).join(', ')})`);
  results[name] = await sections[name]();
}
if (opt.json) writeFileSync(opt.json, JSON.stringify({ options: opt, sdk, results }, null, 1));
console.log(`\n${JSON.stringify({ options: opt, sdk, sections: Object.keys(results) })}`);
