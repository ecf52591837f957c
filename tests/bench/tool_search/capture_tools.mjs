// Captures the tool lists of real MCP servers into real_tools.json, the fixture the tool-search
// quality benchmark (tests/bench/bench_tool_search.cpp) builds its catalog from.
//
//   node tests/bench/tool_search/capture_tools.mjs [--out <file>]
//
// Each server is an npm dev dependency of package.json (exact versions, installed by
// scripts/bootstrap), started over stdio through the installed @modelcontextprotocol/sdk
// client, which lists its tools (following nextCursor) and closes it. The servers run without
// network: inside `unshare -n` with only loopback up when that is allowed (root), else with
// tests/fixtures/loopback.mjs preloaded (so nothing they bind is reachable from outside).
// Playwright's server runs headless on the system Chromium (--executable-path, no browser
// download); listing its tools does not start the browser. context7 lists its tools without
// the internet (its calls need it).
//
// The client declares roots, sampling and elicitation, as an agent would: server-everything
// offers its roots/sampling/elicitation tools only to such clients. Roots are answered with one
// temporary directory (server-filesystem serves it).
//
// Output: {"<server>": [<tool definition as the server sent it>, ...], ...}, servers and
// tools in the order below and as listed. The file is a fixture: re-running this script
// against the same package versions gives the same file (the temporary directory only
// appears as an argument, never in a tool definition; the script checks that).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const bin = (pkg, file) => path.join(root, 'node_modules', pkg, file);

let out = path.join(here, 'real_tools.json');
for (let i = 2; i < process.argv.length; ++i) {
  if (process.argv[i] === '--out' && i + 1 < process.argv.length) out = path.resolve(process.argv[++i]);
  else {
    console.error(`capture_tools: unknown argument ${process.argv[i]}`);
    process.exit(2);
  }
}

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcprt-capture-'));
const chromium = '/usr/bin/chromium';

// server name (as an mcpServers key: mcprt names the tools mcp_<server>_<tool>) -> node script + args
const SERVERS = [
  ['everything', bin('@modelcontextprotocol/server-everything', 'dist/index.js'), ['stdio']],
  ['filesystem', bin('@modelcontextprotocol/server-filesystem', 'dist/index.js'), [workDir]],
  ['memory', bin('@modelcontextprotocol/server-memory', 'dist/index.js'), []],
  ['sequential-thinking', bin('@modelcontextprotocol/server-sequential-thinking', 'dist/index.js'), []],
  ['playwright', bin('@playwright/mcp', 'cli.js'),
    ['--headless', '--isolated', '--no-sandbox', '--executable-path', chromium]],
  ['context7', bin('@upstash/context7-mcp', 'dist/index.js'), ['--transport', 'stdio']],
];

function canUnshare() {
  try {
    execFileSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const isolate = canUnshare();

function launch(script, args) {
  const env = { ...process.env, MEMORY_FILE_PATH: path.join(workDir, 'memory.jsonl') };
  if (isolate) {
    // exec keeps the node process the transport's child, so close() ends it.
    const quoted = [process.execPath, script, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`);
    return { command: 'unshare', args: ['-n', 'sh', '-c', `ip link set lo up && exec ${quoted.join(' ')}`], env };
  }
  const preload = path.join(root, 'tests/fixtures/loopback.mjs');
  return { command: process.execPath, args: ['--import', preload, script, ...args], env };
}

async function listTools(name, script, args) {
  const transport = new StdioClientTransport({ ...launch(script, args), stderr: 'pipe', cwd: workDir });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  const client = new Client(
    { name: 'mcprt-capture-tools', version: '1.0.0' },
    { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: `file://${workDir}`, name: 'work' }],
  }));
  try {
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: 60000 });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } catch (error) {
    throw new Error(`${name}: ${error.message}\n${stderr}`);
  } finally {
    await client.close();
  }
}

const result = {};
try {
  for (const [name, script, args] of SERVERS) {
    const started = Date.now();
    const tools = await listTools(name, script, args);
    if (tools.length === 0) throw new Error(`${name}: listed no tools`);
    if (JSON.stringify(tools).includes(workDir)) {
      throw new Error(`${name}: a tool definition names the temporary directory ${workDir}`);
    }
    result[name] = tools;
    console.error(`${name}: ${tools.length} tools (${Date.now() - started} ms)`);
  }
} finally {
  fs.rmSync(workDir, { recursive: true, force: true });
}
fs.writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
const total = Object.values(result).reduce((n, tools) => n + tools.length, 0);
console.error(`wrote ${out}: ${total} tools from ${Object.keys(result).length} servers${isolate ? ' (unshare -n)' : ' (loopback preload)'}`);
