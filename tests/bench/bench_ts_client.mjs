// The TypeScript SDK side of tests/bench/bench_compare.mjs: the official clients, v1
// (`@modelcontextprotocol/sdk`) and v2 (`@modelcontextprotocol/client`), doing what
// mcprt_bench_startup_client does, one JSON line on stdout.
//
//   node bench_ts_client.mjs startup --sdk v1|v2 --server PATH --servers N --tools T --delay D
//       N clients connect in parallel (one stdio child each), each lists its tools; time
//       from the first spawn until every list arrived → {elapsedMs, cpuMs, tools}.
//       cpuMs: process.cpuUsage() over the same span (all of Node's threads).
//   node --expose-gc bench_ts_client.mjs rss --sdk v1|v2 --server PATH --servers N --tools T --step S
//       idle RSS while 0, S, 2S, … N connected clients (each listed its tools; the list is
//       counted and dropped, as mcprt's client mode does) live in this process, after a
//       full GC at each point → {points, slopeKiB}.
//   node bench_ts_client.mjs calls --sdk v1|v2 --server PATH --calls N --warmup W --pipelined M --window K
//       one client, tools/call tool_000 {"message":"hello"}: N sequential calls after W
//       warm-up calls (p50/p99 µs, CPU µs per call from process.cpuUsage()), then M calls
//       with at most K in flight → {p50Us, p99Us, meanUs, cpuUsPerCall, pipelinedPerS}.

const args = process.argv.slice(2);
const mode = args[0];
const opt = { sdk: 'v1', server: '', servers: 1, tools: 1, delay: 0, step: 10, calls: 1000, warmup: 100,
  pipelined: 20000, window: 64 };
for (let i = 1; i < args.length; i += 2) {
  const key = args[i].replace(/^--/, '');
  if (!(key in opt)) throw new Error(`unknown option ${args[i]}`);
  opt[key] = typeof opt[key] === 'number' ? Number(args[i + 1]) : args[i + 1];
}

async function loadSdk(sdk) {
  if (sdk === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    return { Client, StdioClientTransport };
  }
  const { Client } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  return { Client, StdioClientTransport };
}

const { Client, StdioClientTransport } = await loadSdk(opt.sdk);

async function connectOne(i, delay) {
  const transport = new StdioClientTransport({
    command: opt.server,
    args: ['--tools', String(opt.tools), '--init-delay-ms', String(delay)],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-ts', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  const listed = await client.listTools();
  return { client, tools: listed.tools.length };
}

function slope(points) {
  const n = points.length;
  let sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const [x, y] of points) { sx += x; sy += y; sxx += x * x; sxy += x * y; }
  const d = n * sxx - sx * sx;
  return d === 0 ? 0 : (n * sxy - sx * sy) / d;
}

const rssKiB = () => Math.round(process.memoryUsage().rss / 1024);

if (mode === 'startup') {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const conns = await Promise.all(Array.from({ length: opt.servers }, (_, i) => connectOne(i, opt.delay)));
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const tools = conns.reduce((n, c) => n + c.tools, 0);
  await Promise.allSettled(conns.map((c) => c.client.close()));
  console.log(JSON.stringify({ elapsedMs, cpuMs: (cpu.user + cpu.system) / 1000, tools }));
} else if (mode === 'rss') {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
  const gcFull = () => { globalThis.gc(); globalThis.gc(); };
  const conns = [];
  gcFull();
  const points = [[0, rssKiB()]];
  while (conns.length < opt.servers) {
    const batch = Math.min(opt.step, opt.servers - conns.length);
    const base = conns.length;
    conns.push(...(await Promise.all(Array.from({ length: batch }, (_, i) => connectOne(base + i, 0)))));
    gcFull();
    points.push([conns.length, rssKiB()]);
  }
  await Promise.allSettled(conns.map((c) => c.client.close()));
  console.log(JSON.stringify({ points, slopeKiB: slope(points) }));
} else if (mode === 'calls') {
  const { client } = await connectOne(0, 0);
  const call = () => client.callTool({ name: 'tool_000', arguments: { message: 'hello' } });
  for (let i = 0; i < opt.warmup; i++) await call();
  const samples = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < opt.calls; i++) {
    const t0 = performance.now();
    const r = await call();
    samples.push((performance.now() - t0) * 1000);
    if (!r.content || r.content[0].text !== 'hello') throw new Error(`unexpected result ${JSON.stringify(r)}`);
  }
  const cpu = process.cpuUsage(cpu0);
  samples.sort((a, b) => a - b);
  const pct = (q) => samples[Math.min(samples.length, Math.max(1, Math.ceil(q * samples.length))) - 1];
  let pipelinedPerS = 0;
  if (opt.pipelined > 0) {
    let issued = 0;
    const t0 = performance.now();
    const worker = async () => { while (issued < opt.pipelined) { issued++; await call(); } };
    await Promise.all(Array.from({ length: Math.max(1, opt.window) }, worker));
    pipelinedPerS = opt.pipelined / ((performance.now() - t0) / 1000);
  }
  await client.close();
  console.log(JSON.stringify({
    p50Us: pct(0.5), p99Us: pct(0.99), meanUs: samples.reduce((a, b) => a + b, 0) / samples.length,
    cpuUsPerCall: (cpu.user + cpu.system) / opt.calls, pipelinedPerS,
  }));
} else {
  throw new Error(`unknown mode ${mode}`);
}
