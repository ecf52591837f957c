// The `mcprt` package as npm users get it (SPEC §18), under Node without IndexedDB (no
// fake-indexeddb here): the entry points its `exports` give bundlers, the tarball's files,
// the wasmUrl option and the module init shared per URL, a host app whose own crash stays
// its own (no process-wide handlers from the module), quiet-by-default logging, and the
// tool cache without IndexedDB (off unless asked for, then in memory).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { closedPort, startDemoServer, startForwardingProxy, startLoopbackServer } from './support/harness.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const packageDir = path.dirname(packageEntry);
const wasmFile = path.join(packageDir, 'mcprt.wasm');
const mcprt = await import(pathToFileURL(packageEntry).href);

const scratch = mkdtempSync(path.join(os.tmpdir(), 'mcprt-package-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let scratchCounter = 0;
const scratchDir = () => {
  const dir = path.join(scratch, String(++scratchCounter));
  mkdirSync(dir);
  return dir;
};

// Runs `source` as an ES module in a fresh Node; resolves with {code, stdout, stderr}.
function runNode(source, limitMs = 30000) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the Node app did not exit in ${limitMs} ms; stderr: ${stderr.slice(-2000)}`));
    }, limitMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, stdout, stderr });
    });
  });
}

// console.* calls while `body` runs (node:test's own output does not go through console).
async function consoleDuring(body) {
  const lines = [];
  const methods = ['debug', 'info', 'log', 'warn', 'error'];
  const saved = Object.fromEntries(methods.map((m) => [m, console[m]]));
  for (const m of methods) console[m] = (...args) => lines.push({ method: m, text: args.map(String).join(' ') });
  try {
    await body();
  } finally {
    Object.assign(console, saved);
  }
  return lines;
}

describe('the package as npm ships it', () => {
  test('Exports_ResolveTheRuntimeTheModuleTheWasmAndTheCallbackPage', () => {
    // An app with the package installed: node_modules/mcprt, as `npm install` links a file: dependency.
    const app = scratchDir();
    mkdirSync(path.join(app, 'node_modules'));
    symlinkSync(packageDir, path.join(app, 'node_modules/mcprt'), 'dir');
    const require = createRequire(path.join(app, 'app.js'));
    const resolved = (specifier) => realpathSync(require.resolve(specifier));
    const inPackage = (file) => realpathSync(path.join(packageDir, file));
    assert.equal(resolved('mcprt'), inPackage('index.js'));
    assert.equal(resolved('mcprt/mcprt.wasm'), inPackage('mcprt.wasm'));
    assert.equal(resolved('mcprt/mcprt.mjs'), inPackage('mcprt.mjs'));
    assert.equal(resolved('mcprt/oauth-callback.html'), inPackage('oauth-callback.html'));
    // Everything else stays private to the package.
    assert.throws(() => require.resolve('mcprt/index.d.ts'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
  });

  test('Tarball_HoldsTheReadmeTheLicenseTheTypesAndTheModule', () => {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'],
                                           { cwd: packageDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    const files = packed[0].files.map((f) => f.path).sort();
    assert.deepEqual(files, ['LICENSE', 'README.md', 'index.d.ts', 'index.js', 'mcprt.mjs', 'mcprt.wasm',
                             'oauth-callback.html', 'package.json']);
    const readme = readFileSync(path.join(packageDir, 'README.md'), 'utf8');
    assert.match(readme, /import \{ createRuntime \} from 'mcprt'/);
    assert.match(readme, /wasmUrl/);
  });
});

describe('wasmUrl and the module init', () => {
  test('WasmUrl_LoadsTheModuleFromTheGivenFileOncePerUrl', async () => {
    const dir = scratchDir();
    const file = path.join(dir, 'renamed.wasm');
    copyFileSync(wasmFile, file);
    const byUrl = await mcprt.createRuntime({ wasmUrl: pathToFileURL(file) });
    assert.deepEqual(byUrl.tools(), []);
    byUrl.dispose();
    const byPath = await mcprt.createRuntime({ wasmUrl: file });  // a plain path, in Node
    byPath.dispose();
    // The module of that URL is loaded already: the file is not read again.
    rmSync(file);
    const again = await mcprt.createRuntime({ wasmUrl: pathToFileURL(file) });
    assert.equal(again.disposed, false);
    again.dispose();
  });

  test('WasmUrl_AMissingFileRejectsNamingItAndALaterCallRetries', async () => {
    const file = path.join(scratchDir(), 'later.wasm');
    const url = pathToFileURL(file);
    const lines = await consoleDuring(async () => {
      await assert.rejects(mcprt.createRuntime({ wasmUrl: url }), (error) => {
        assert.ok(error.message.includes(url.href), error.message);
        assert.match(error.message, /ENOENT/);
        return true;
      });
    });
    assert.deepEqual(lines, []);
    copyFileSync(wasmFile, file);
    const rt = await mcprt.createRuntime({ wasmUrl: url });
    rt.dispose();
  });

  test('WasmUrl_AnHttpUrlIsFetchedOnceForAllItsRuntimes', async () => {
    const wasm = readFileSync(wasmFile);
    const server = await startLoopbackServer((req, res) => {
      if (req.url !== '/assets/mcprt-1234.wasm') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/wasm' }).end(wasm);
    });
    try {
      const url = server.url('/assets/mcprt-1234.wasm');
      const runtimes = await Promise.all([mcprt.createRuntime({ wasmUrl: url }), mcprt.createRuntime({ wasmUrl: url })]);
      assert.deepEqual(server.requests.map((r) => `${r.method} ${r.url}`), ['GET /assets/mcprt-1234.wasm']);
      for (const rt of runtimes) rt.dispose();
      // An http URL that fails rejects (quietly) and names it.
      const missing = server.url('/assets/missing.wasm');
      const lines = await consoleDuring(async () => {
        await assert.rejects(mcprt.createRuntime({ wasmUrl: missing }), (error) => error.message.includes(missing));
      });
      assert.deepEqual(lines, []);
    } finally {
      await server.close();
    }
  });
});

describe('a Node host keeps its process', () => {
  const app = (tail) => `
    import { createRuntime } from ${JSON.stringify(pathToFileURL(packageEntry).href)};
    const rt = await createRuntime();
    ${tail}
  `;

  test('Node_AnUnhandledRejectionOfTheHostExits1WithItsOwnMessage', async () => {
    const { code, stdout, stderr } = await runNode(app(`Promise.reject(new Error('host app: unhandled 42'));`));
    assert.equal(code, 1, stderr.slice(0, 2000));
    assert.match(stderr, /host app: unhandled 42/);
    // Not the module's minified line (it was ~60 KB) nor its frames.
    assert.ok(stderr.length < 4096, `stderr is ${stderr.length} bytes: ${stderr.slice(0, 500)}`);
    assert.doesNotMatch(stderr, /mcprt\.mjs/);
    assert.equal(stdout, '');
  });

  test('Node_AnUncaughtExceptionOfTheHostExits1WithItsOwnMessage', async () => {
    const { code, stderr } = await runNode(app(`setTimeout(() => { throw new Error('host app: uncaught 43'); }, 0);`));
    assert.equal(code, 1, stderr.slice(0, 2000));
    assert.match(stderr, /host app: uncaught 43/);
    assert.ok(stderr.length < 4096, `stderr is ${stderr.length} bytes: ${stderr.slice(0, 500)}`);
    assert.doesNotMatch(stderr, /mcprt\.mjs/);
  });

  test('Node_TheHostsExitCodeIsItsOwn', async () => {
    const { code, stderr } = await runNode(app(`rt.dispose(); process.exitCode = 3;`));
    assert.equal(code, 3, stderr);
  });
});

describe('quiet by default in Node', () => {
  let demo;
  let gone;
  before(async () => {
    demo = await startDemoServer();
    gone = `http://127.0.0.1:${await closedPort()}/mcp`;
  });
  after(async () => {
    await demo?.stop();
  });
  const servers = () => ({ demo: { url: demo.url }, gone: { url: gone, reconnect: false } });

  // Connects to the demo server and to one that refuses connections, calls a tool, disposes.
  async function session(options) {
    const rt = await mcprt.createRuntime(options);
    try {
      const { tools, errors } = await rt.discoverAndLoad({ servers: servers() });
      assert.ok(tools.some((t) => t.name === 'mcp_demo_add'), JSON.stringify(tools.map((t) => t.name)));
      assert.deepEqual(errors.map((e) => e.server), ['gone']);
      const result = await rt.callTool('mcp_demo_add', { a: 2, b: 3 });
      assert.equal(result.text, '5');
    } finally {
      rt.dispose();
    }
  }

  test('Quiet_NothingOnTheConsoleByDefault', async () => {
    assert.equal(globalThis.indexedDB, undefined, 'this test runs without IndexedDB');
    const lines = await consoleDuring(() => session({}));
    assert.deepEqual(lines, []);
  });

  test('Quiet_LogLevelBringsBackTheWarningsButNoIndexedDbOnes', async () => {
    const lines = await consoleDuring(() => session({ logLevel: 'warn' }));
    const warnings = lines.filter((l) => l.method === 'warn');
    assert.ok(warnings.some((l) => l.text.startsWith('[mcprt] ') && l.text.includes('gone')), JSON.stringify(lines));
    assert.deepEqual(lines.filter((l) => /IndexedDB/.test(l.text)), []);
  });

  test('Cache_WithoutIndexedDbOffByDefaultAndInMemoryWhenAsked', async () => {
    // The demo server behind a proxy that, in the second round, parks every request: then
    // only a cache lists its tools (at the startup gate, as deferred tools).
    let hold = false;
    const parked = [];
    const proxy = await startForwardingProxy(demo.url, (req, res) => {
      if (hold) parked.push(res);
      return hold;
    });
    const config = { servers: { held: { url: proxy.url } } };
    const round = async (options) => {
      // Held: discoverAndLoad returns at the gate with what a cache has, without waiting.
      const rt = await mcprt.createRuntime({ waitForUncached: !hold, ...options });
      try {
        const { tools } = await rt.discoverAndLoad(config);
        if (!hold) await rt.callTool('mcp_held_echo', { message: 'settled' });  // the cache write is done
        return hold ? tools : rt.tools();
      } finally {
        rt.dispose();
      }
    };
    try {
      const lines = await consoleDuring(async () => {
        assert.ok((await round({})).some((t) => t.name === 'mcp_held_add'));
        assert.ok((await round({ cache: true })).some((t) => t.name === 'mcp_held_add'));
        hold = true;
        assert.deepEqual(await round({}), [], 'nothing was cached by default');
        const cached = await round({ cache: true });
        assert.ok(cached.some((t) => t.name === 'mcp_held_add' && t.deferred), JSON.stringify(cached));
      });
      assert.deepEqual(lines, []);
    } finally {
      for (const res of parked) res.destroy();
      await proxy.close();
    }
  });

  test('Log_GetsEachLineWithItsLevelInsteadOfTheConsole', async () => {
    const got = [];
    const lines = await consoleDuring(() => session({ log: (level, message) => got.push({ level, message }) }));
    assert.deepEqual(lines, []);
    assert.ok(got.some((l) => l.level === 'warn' && l.message.includes('gone')), JSON.stringify(got));
    assert.ok(got.every((l) => l.level === 'warn' || l.level === 'error'), 'the default level with log is warn');
    const debug = [];
    await session({ log: (level, message) => debug.push({ level, message }), logLevel: 'debug' });
    assert.ok(debug.some((l) => l.level === 'debug'), JSON.stringify(debug));
  });

  test('Log_MustBeAFunction', async () => {
    await assert.rejects(mcprt.createRuntime({ log: 'yes' }), TypeError);
  });
});
