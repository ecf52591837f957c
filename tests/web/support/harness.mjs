// Shared helpers for the Node web tests: loopback HTTP servers, the demo server process,
// server-everything, bounded waits. Every server listens on 127.0.0.1 only.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const SOURCE_DIR = process.env.MCPRT_SOURCE_DIR ||
  path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');

// Loads an Emscripten ES module factory named by an env var and instantiates it.
export async function loadWasmModule(envName) {
  const file = process.env[envName];
  if (!file) throw new Error(`${envName} must name a built .mjs (ctest sets it)`);
  const { default: factory } = await import(pathToFileURL(file).href);
  return factory();
}

// Resolves when `predicate()` is true; rejects with `what` after `limitMs` (a bound that
// keeps a broken test from hanging, not a timing assertion).
export async function waitFor(predicate, what, limitMs = 10000) {
  const start = Date.now();
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// A scriptable HTTP server on 127.0.0.1: `handler(req, res, body)` per request.
export async function startLoopbackServer(handler) {
  const requests = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    url: (p = '/') => `http://127.0.0.1:${port}${p}`,
    requests,
    // Drops every open connection (streams included) and keeps listening.
    cut() {
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// A loopback proxy at `url` that forwards every request to `state.target` (changeable)
// unless `intercept(req, res, body)` returns true: it has answered the request itself, or
// leaves it unanswered (a server that stopped answering). cut() drops every connection
// through it, the session's streams included.
export async function startForwardingProxy(target, intercept = () => false) {
  const state = { target };
  const server = await startLoopbackServer((req, res, body) => {
    if (intercept(req, res, body)) return;
    const upstream = http.request(state.target, { method: req.method, headers: { ...req.headers, host: new URL(state.target).host } },
                                  (answer) => {
                                    res.writeHead(answer.statusCode, answer.headers);
                                    answer.pipe(res);
                                  });
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });
  return { url: server.url('/mcp'), state, cut: () => server.cut(), close: () => server.close() };
}

// A port that nothing listens on (bound, then released).
export async function closedPort() {
  const s = net.createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

// Starts a process and resolves with {child, match, output()} once its stdout or stderr
// matches `readyPattern`; rejects if it exits first or takes over 30 s.
export function startProcess(command, args, env, readyPattern, label) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`${label} did not start in 30 s; output: ${output.slice(-2000)}`));
    }, 30000);
    const onData = (d) => {
      output += d.toString();
      const m = output.match(readyPattern);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({ child, match: m, output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code ?? signal}) before it was ready: ${output.slice(-2000)}`));
    });
  });
}

// SIGTERM, then SIGKILL after `killAfterMs`; resolves with the exit code (null when a
// signal ended it).
export async function stopProcess(child, killAfterMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

// The native demo server in --http mode on a free loopback port; `args` are more of its
// options (e.g. ['--ticker-ms', '50']).
export async function startDemoServer({ args = [] } = {}) {
  const bin = process.env.MCPRT_DEMO_SERVER;
  if (!bin || !existsSync(bin)) {
    throw new Error(`the native demo server is missing (MCPRT_DEMO_SERVER=${bin}); build it in a native ` +
                    'tree first (scripts/test builds build/native), or configure this wasm tree with ' +
                    '-DMCPRT_WEB_TEST_DEMO_SERVER=<native build>/demo/mcprt-demo-server');
  }
  const { child, match } = await startProcess(bin, ['--http', '0', '--host', '127.0.0.1', ...args], {},
                                              /listening on (http:\/\/[^\s]+)/, 'mcprt-demo-server');
  const base = match[1].replace(/\/mcp$/, '').replace(/\/$/, '');
  return { url: `${base}/mcp`, child, stop: () => stopProcess(child) };
}

// server-everything (npm) in streamableHttp or sse mode, bound to 127.0.0.1 by the
// loopback preload.
export async function startServerEverything(mode) {
  const script = path.join(SOURCE_DIR, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  if (!existsSync(script)) {
    throw new Error(`${script} is missing: run scripts/bootstrap (or npm install) first`);
  }
  const port = await closedPort();
  const preload = path.join(SOURCE_DIR, 'tests/fixtures/loopback.mjs');
  const started = startProcess(process.execPath, ['--import', preload, script, mode], { PORT: String(port) },
                               /./, `server-everything ${mode}`);
  const { child } = await started;
  // Its log line comes before listen(); wait until the port accepts.
  const start = Date.now();
  while (!(await portAccepts(port))) {
    if (Date.now() - start > 30000) {
      await stopProcess(child);
      throw new Error(`server-everything ${mode} did not open 127.0.0.1:${port} in 30 s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, base: `http://127.0.0.1:${port}`, child, stop: () => stopProcess(child) };
}

function portAccepts(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('connect', () => { s.destroy(); resolve(true); });
    s.on('error', () => { s.destroy(); resolve(false); });
  });
}

// A loopback proxy in front of an MCP server (`target`) that answers as a server without
// `instructions` (the demo server's name each of its tools, and instructions that name a
// tool keep it loaded under tool search: SPEC §16), and leaves every new request unanswered while
// `state.hold` is set (a server that stopped answering). Paths and queries go through, so
// `/mcp?second` is a second server.
export async function startInstructionlessProxy(target) {
  const state = { hold: false };
  const origin = new URL(target).origin;
  const server = await startLoopbackServer((req, res, body) => {
    if (state.hold) return;
    // (No accept-encoding: the answer is read as it comes.)
    const { 'accept-encoding': _, ...headers } = req.headers;
    const upstream = http.request(new URL(req.url, origin), { method: req.method, headers: { ...headers, host: new URL(origin).host } },
                                  (answer) => {
                                    if (!String(answer.headers['content-type']).startsWith('application/json')) {
                                      res.writeHead(answer.statusCode, answer.headers);
                                      answer.pipe(res);
                                      return;
                                    }
                                    const chunks = [];
                                    answer.on('data', (c) => chunks.push(c));
                                    answer.on('end', () => {
                                      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
                                      if (message?.result) delete message.result.instructions;
                                      const text = JSON.stringify(message);
                                      const { 'transfer-encoding': __, ...answerHeaders } = answer.headers;
                                      res.writeHead(answer.statusCode, { ...answerHeaders, 'content-length': String(Buffer.byteLength(text)) });
                                      res.end(text);
                                    });
                                  });
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });
  return { url: (p) => server.url(p), state, close: () => server.close() };
}
