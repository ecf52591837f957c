// The mcprt web target (the `mcprt` JS package: index.js over the wasm module) as driven
// by the official conformance suite:
//
//   conformance client --command "node <this file>" --scenario <name>
//
// The suite appends the server URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO; the package is found through MCPRT_JS_PACKAGE (the assembled
// <wasm build>/mcprt-js/index.js; ctest sets it) or `--package <index.js>`.
//
//   initialize   discoverAndLoad (initialize → initialized, tools/list), disconnect
//   tools_call   the same, then call every tool (add_numbers gets {a: 5, b: 3}), disconnect
//   (other)      like tools_call, every other tool called with {}
//
// Exit status: 0 when every step succeeded, 1 otherwise (the suite judges the wire).
import { pathToFileURL } from 'node:url';

const kStepLimitMs = 30000;
const kServer = 'conformance';

function usage(message) {
  console.error(`wasm_conformance_client: ${message}`);
  console.error('usage: node wasm_conformance_client.mjs [--package <mcprt-js/index.js>] <server-url>');
  process.exit(2);
}

function parseArgs(argv) {
  const args = argv.slice(2);
  let packageEntry = process.env.MCPRT_JS_PACKAGE;
  const rest = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--package') {
      if (i + 1 >= args.length) usage('--package needs a path');
      packageEntry = args[++i];
    } else if (args[i].startsWith('--package=')) {
      packageEntry = args[i].slice('--package='.length);
    } else {
      rest.push(args[i]);
    }
  }
  if (rest.length === 0) usage('the server URL is missing (the last argument)');
  if (!packageEntry) usage('MCPRT_JS_PACKAGE (or --package) must name the mcprt package index.js');
  return { packageEntry, url: rest[rest.length - 1] };
}

function argumentsFor(tool) {
  if (tool.tool === 'add_numbers') return { a: 5, b: 3 };
  return {};
}

// Every awaited step is bounded so that a hung step fails this run instead of the suite's
// own (longer) client timeout.
function bounded(promise, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish in ${kStepLimitMs} ms`)), kStepLimitMs);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

async function main() {
  const { packageEntry, url } = parseArgs(process.argv);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const { createRuntime } = await import(pathToFileURL(packageEntry).href);

  // No cache: every run must reach the server (and Node has no IndexedDB).
  const rt = await createRuntime({
    cache: false,
    clientName: 'mcprt-conformance-client',
    logLevel: 'warn',
    timeoutMs: kStepLimitMs,
  });
  let ok = true;
  try {
    const loaded = await bounded(rt.discoverAndLoad({ servers: { [kServer]: { url } } }), 'connect');
    for (const e of loaded.errors) {
      console.error(`load error${e.server ? ` (${e.server})` : ''}: ${e.error}`);
      ok = false;
    }
    if (!loaded.connectedServers.includes(kServer)) {
      const status = rt.status(kServer);
      console.error(`connect failed: ${status?.error?.message ?? `server is ${status?.phase ?? 'unknown'}`}`);
      return false;
    }
    const tools = rt.tools().filter((t) => t.server === kServer);
    console.log(`connected; tools: ${tools.length}`);

    if (scenario !== 'initialize') {
      for (const tool of tools) {
        try {
          const result = await bounded(rt.callTool(tool.name, argumentsFor(tool)), `${tool.tool} call`);
          console.log(`${tool.tool} → ${JSON.stringify(result.content)}${result.isError ? ' (isError)' : ''}`);
        } catch (error) {
          console.error(`${tool.tool} failed: ${error?.message ?? error}`);
          ok = false;
        }
      }
    }
    // A clean end of the session (DELETE for a session-ful server).
    await bounded(rt.disconnectAll(), 'disconnect');
  } catch (error) {
    console.error(`wasm_conformance_client: ${error?.message ?? error}`);
    ok = false;
  } finally {
    rt.dispose();
  }
  return ok;
}

main().then((ok) => process.exit(ok ? 0 : 1),
            (error) => {
              console.error(`wasm_conformance_client: ${error?.stack ?? error}`);
              process.exit(1);
            });
