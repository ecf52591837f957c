// examples/browser (SPEC §18): the page bundled by esbuild (build-esbuild.mjs) and by vite
// (vite.config.js), with mcprt linked into its node_modules as `npm install` links the
// file: dependency (esbuild and vite from this checkout's node_modules, the versions the
// example pins), each served from a loopback static server and run in headless Chromium
// against the demo server: the page must list the demo tools and show the call's result.
// The bundles' sizes are reported (t.diagnostic).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync,
         symlinkSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

import { SOURCE_DIR, startDemoServer } from './support/harness.mjs';
import { DEMO_TOOLS, launchBrowser } from './support/demo_page.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const example = path.join(SOURCE_DIR, 'examples/browser');
const run = promisify(execFile);

const kTypes = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };

// Serves `root` on 127.0.0.1 (GET only, no directory listing, nothing outside root).
async function startStaticServer(root) {
  const server = http.createServer((req, res) => {
    const file = path.join(root, path.normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    if (!file.startsWith(root + path.sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': kTypes[path.extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// Every file under `dir`, with its size and gzip -9 size.
function sizes(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { recursive: true })) {
    const file = path.join(dir, entry);
    if (!statSync(file).isFile()) continue;
    const bytes = readFileSync(file);
    out.push({ file: entry, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });
  }
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

let work;
let demo;
let site;
let browser;
before(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'mcprt-example-browser-'));
  for (const file of ['package.json', 'index.html', 'main.js', 'build-esbuild.mjs', 'vite.config.js']) {
    copyFileSync(path.join(example, file), path.join(work, file));
  }
  mkdirSync(path.join(work, 'node_modules'));
  symlinkSync(path.dirname(packageEntry), path.join(work, 'node_modules/mcprt'), 'dir');
  for (const tool of ['esbuild', 'vite']) {
    const installed = path.join(SOURCE_DIR, 'node_modules', tool);
    assert.ok(existsSync(installed), `${installed} is missing: run scripts/bootstrap`);
    symlinkSync(installed, path.join(work, 'node_modules', tool), 'dir');
  }
  demo = await startDemoServer();
});
after(async () => {
  await browser?.close();
  await site?.close();
  await demo?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('examples/browser', () => {
  test('ExampleBrowser_BuildsWithEsbuildWithoutWarnings', async (t) => {
    const { stdout, stderr } = await run(process.execPath, ['build-esbuild.mjs'], { cwd: work, timeout: 60000 });
    assert.equal(stderr + stdout, '');
    const files = sizes(path.join(work, 'dist/esbuild'));
    for (const f of files) t.diagnostic(`esbuild ${f.file}: ${f.bytes} bytes, ${f.gzip} gzip`);
    assert.deepEqual(files.map((f) => f.file), ['index.html', 'main.js', 'mcprt.wasm']);
  });

  test('ExampleBrowser_BuildsWithViteAndEmitsTheWasm', async (t) => {
    const vite = path.join(work, 'node_modules/vite/bin/vite.js');
    const { stderr } = await run(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: work, timeout: 120000 });
    assert.equal(stderr, '');
    const files = sizes(path.join(work, 'dist/vite'));
    for (const f of files) t.diagnostic(`vite ${f.file}: ${f.bytes} bytes, ${f.gzip} gzip`);
    assert.equal(files.filter((f) => f.file.endsWith('.wasm')).length, 1, JSON.stringify(files));
    assert.equal(files.filter((f) => f.file.endsWith('.js')).length, 1, JSON.stringify(files));
  });

  for (const bundler of ['esbuild', 'vite']) {
    test(`ExampleBrowser_${bundler}PageListsTheDemoToolsAndShowsACallResult`, async () => {
      assert.ok(existsSync(path.join(work, 'dist', bundler, 'index.html')), `the ${bundler} build ran first`);
      site ??= await startStaticServer(path.join(work, 'dist'));
      browser ??= await launchBrowser();
      const { page, logs } = browser;
      logs.length = 0;
      await page.goto(`${site.url}/${bundler}/index.html?server=${encodeURIComponent(demo.url)}`);
      await page.waitForFunction(() => document.getElementById('result').textContent !== '' ||
                                       document.getElementById('status').textContent.startsWith('failed'),
                                 null, { timeout: 30000 });
      const shown = await page.evaluate(() => ({
        status: document.getElementById('status').textContent,
        tools: [...document.querySelectorAll('#tools li')].map((li) => li.dataset.tool),
        result: document.getElementById('result').textContent,
      }));
      for (const tool of DEMO_TOOLS) assert.ok(shown.tools.includes(tool), `${tool} is listed: ${JSON.stringify(shown)}`);
      assert.equal(shown.result, '5', JSON.stringify(shown));
      // (The browser's console shows the 400 with which the demo server refuses the MCP probe: not an error of the page.)
      assert.deepEqual(logs.filter((l) => l.type === 'pageerror'), []);
    });
  }
});
