// examples/node (SPEC §18): the Node agent, installed as its package.json says (mcprt from
// the wasm build, which `npm install` links into node_modules for a file: dependency; here
// this tree's package is linked the same way), run against the demo server over
// Streamable HTTP. It must list the demo tools, print the call's result, exit 0 and
// write nothing to stderr (the package is quiet in Node).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { SOURCE_DIR, startDemoServer } from './support/harness.mjs';
import { DEMO_TOOLS } from './support/demo_page.mjs';

const packageEntry = process.env.MCPRT_JS_PACKAGE;
assert.ok(packageEntry, 'MCPRT_JS_PACKAGE must name the assembled package index.js (ctest sets it)');
const example = path.join(SOURCE_DIR, 'examples/node');

let work;
let demo;
before(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'mcprt-example-node-'));
  for (const file of ['package.json', 'agent.mjs']) copyFileSync(path.join(example, file), path.join(work, file));
  mkdirSync(path.join(work, 'node_modules'));
  symlinkSync(path.dirname(packageEntry), path.join(work, 'node_modules/mcprt'), 'dir');
  demo = await startDemoServer();
});
after(async () => {
  await demo?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('ExampleNode_DependsOnTheWasmBuildsPackage', () => {
  const pkg = JSON.parse(readFileSync(path.join(example, 'package.json'), 'utf8'));
  const target = pkg.dependencies.mcprt.replace(/^file:/, '');
  assert.equal(path.resolve(example, target), path.join(SOURCE_DIR, 'build/wasm/mcprt-js'));
});

test('ExampleNode_ListsTheDemoToolsAndPrintsACallResult', async () => {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['agent.mjs', demo.url],
                                                       { cwd: work, timeout: 60000 });
  const listed = [...stdout.matchAll(/^ {2}(mcp_\w+) /gm)].map((m) => m[1]);
  for (const tool of DEMO_TOOLS) assert.ok(listed.includes(tool), `${tool} is listed:\n${stdout}`);
  assert.match(stdout, /^mcp_demo_add \{"a":2,"b":3\} → 5$/m);
  assert.equal(stderr, '');
});
