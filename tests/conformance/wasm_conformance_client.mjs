// The mcprt web target (the `mcprt` JS package: index.js over the wasm module) as driven
// by the official conformance suite:
//
//   conformance client --command "node <this file>" --scenario <name>
//
// The suite appends the server URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO; the package is found through MCPRT_JS_PACKAGE (the assembled
// <wasm build>/mcprt-js/index.js; ctest sets it) or `--package <index.js>`.
//
// What the suite says about the run goes into the server's config entry:
//   MCP_CONFORMANCE_PROTOCOL_VERSION  `protocol` (SPEC §14: 2026-07-28 pins the stateless
//                                     wire, a 2025-era version the initialize handshake
//                                     offering it first; the suite's default, 2025-11-25,
//                                     when unset: 0.1.x versions do not set it)
//   MCP_CONFORMANCE_CONTEXT           JSON; client_id, client_secret, private_key_pem and
//                                     signing_algorithm become `oauth: {clientId,
//                                     clientSecret, privateKey, signingAlg}` (SPEC §13: the
//                                     pre-registered client, the client_credentials key);
//                                     the names of fields with no config counterpart are
//                                     reported on stderr (never their values: they hold
//                                     secrets and keys)
//   MCP_CONFORMANCE_SCENARIO          auth/client-credentials-*: `oauth.grant` is
//                                     client_credentials
// The context's `toolCalls` (http-custom-headers) is no config: it names the calls to make.
//
// Elicitation (SPEC §15): onElicit accepts every request with no values of its own, so the
// core's schema defaults make the answer (2025: elicitation/create; 2026: MRTR).
//
// OAuth (SPEC §13): the runtime's user step (onAuthorize) follows the authorization URL's
// redirect itself, as the suite expects of a client: a GET with fetch `redirect: "manual"`
// (Node shows the 3xx and its Location; a browser would hide them), answered with the
// Location resolved against the URL. The redirect URI is a loopback callback nothing
// listens on (the suite's authorization server only redirects to it). Credentials live in
// an in-memory IndexedDB (fake-indexeddb) for the run.
//
//   initialize   discoverAndLoad (connect, tools/list), disconnect
//   tools_call   the same, then call every tool (add_numbers gets {a: 5, b: 3}), disconnect
//   http-custom-headers  the calls the context's toolCalls name, with their arguments
//   json-schema-2020-12-preservation  json_schema_echo {schema: <the inputSchema listed for
//                json_schema_2020_12_tool>}
//   json-schema-ref-no-deref  list only (the scenario's server has no tools/call)
//   sep-2322-client-request-state  every tool called at once (parallel MRTR rounds)
//   (other)      like tools_call, every other tool called with {}
// (The JS API has no resources or prompts calls: http-standard-headers checks tools only.)
//
// `--print-entry` prints that entry as JSON (secret values as their length only) and exits
// without loading the package (wasm_client_env.test.mjs checks the mapping with it).
//
// Exit status: 0 when every step succeeded, 1 otherwise (the suite judges the wire); 2 for
// bad arguments or environment.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const kStepLimitMs = 30000;
const kRedirectUri = 'http://127.0.0.1:33418/callback';
const kServer = 'conformance';

function usage(message) {
  console.error(`wasm_conformance_client: ${message}`);
  console.error('usage: node wasm_conformance_client.mjs [--package <mcprt-js/index.js>] <server-url>');
  process.exit(2);
}

function parseArgs(argv) {
  const args = argv.slice(2);
  let packageEntry = process.env.MCPRT_JS_PACKAGE;
  let printEntry = false;
  const rest = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--print-entry') {
      printEntry = true;
    } else if (args[i] === '--package') {
      if (i + 1 >= args.length) usage('--package needs a path');
      packageEntry = args[++i];
    } else if (args[i].startsWith('--package=')) {
      packageEntry = args[i].slice('--package='.length);
    } else {
      rest.push(args[i]);
    }
  }
  if (rest.length === 0) usage('the server URL is missing (the last argument)');
  if (!packageEntry && !printEntry) usage('MCPRT_JS_PACKAGE (or --package) must name the mcprt package index.js');
  return { packageEntry, printEntry, url: rest[rest.length - 1] };
}

const kDefaultProtocolVersion = '2025-11-25';
// MCP_CONFORMANCE_CONTEXT fields and the `oauth` config field each becomes.
const kContextToOauth = {
  client_id: 'clientId',
  client_secret: 'clientSecret',
  private_key_pem: 'privateKey',
  signing_algorithm: 'signingAlg',
};

// The server's config entry for this run, from the suite's environment.
function serverEntry(url, scenario) {
  const entry = { url };
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION || kDefaultProtocolVersion;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(version)) {
    usage(`MCP_CONFORMANCE_PROTOCOL_VERSION must be a dated protocol version (got ${JSON.stringify(version)})`);
  }
  entry.protocol = version;

  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (raw !== undefined && raw !== '') {
    let context;
    try {
      context = JSON.parse(raw);
    } catch {
      // Not the parser's message: V8 quotes the text around the error, which may be a secret.
      usage(`MCP_CONFORMANCE_CONTEXT is not JSON (${raw.length} characters)`);
    }
    if (context === null || typeof context !== 'object' || Array.isArray(context)) {
      usage('MCP_CONFORMANCE_CONTEXT must be a JSON object');
    }
    const oauth = {};
    const unmapped = [];
    for (const [key, value] of Object.entries(context)) {
      if (key === 'name' || key === 'toolCalls') continue;  // the scenario's name; calls to make
      if (key in kContextToOauth && typeof value === 'string') oauth[kContextToOauth[key]] = value;
      else unmapped.push(key);
    }
    if (Object.keys(oauth).length > 0) entry.oauth = oauth;
    if (unmapped.length > 0) {
      console.error(`wasm_conformance_client: context fields with no config counterpart: ${unmapped.join(', ')}`);
    }
  }
  if (scenario.startsWith('auth/client-credentials')) {
    entry.oauth = { ...entry.oauth, grant: 'client_credentials' };
  }
  return entry;
}

// The user step: GET the authorization URL without following it; its redirect's Location
// is where the authorization server sends the browser (code, state, iss).
async function followAuthorizationRedirect(url, { signal }) {
  const response = await fetch(url, { redirect: 'manual', signal });
  const location = response.headers.get('location');
  await response.body?.cancel();
  if (response.status < 300 || response.status > 399 || !location) {
    throw new Error(`the authorization endpoint ${new URL(url).origin} answered ${response.status} without a redirect`);
  }
  return new URL(location, url).href;
}

function argumentsFor(tool) {
  if (tool.tool === 'add_numbers') return { a: 5, b: 3 };
  return {};
}

// MCP_CONFORMANCE_CONTEXT as an object ({} when unset or not an object; serverEntry has
// already refused a broken one).
function contextFromEnv() {
  try {
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
    return context !== null && typeof context === 'object' && !Array.isArray(context) ? context : {};
  } catch {
    return {};
  }
}

// The tools/call requests the scenario expects: [{tool, arguments}] over the listed tools
// (ToolInfo: tool = the server's name, inputSchema) and the context. Throws when the
// scenario cannot be played.
export function plannedCalls(scenario, tools, context) {
  if (scenario === 'initialize' || scenario === 'json-schema-ref-no-deref') return [];
  if (scenario === 'http-custom-headers') {
    const calls = context.toolCalls;
    if (!Array.isArray(calls) || calls.length === 0) throw new Error('MCP_CONFORMANCE_CONTEXT names no toolCalls');
    return calls.map((call) => {
      if (call === null || typeof call !== 'object' || typeof call.name !== 'string') {
        throw new Error(`a toolCalls entry has no name: ${JSON.stringify(call)}`);
      }
      return { tool: call.name, arguments: call.arguments ?? {} };
    });
  }
  if (scenario === 'json-schema-2020-12-preservation') {
    const focal = tools.find((t) => t.tool === 'json_schema_2020_12_tool');
    if (!focal?.inputSchema) throw new Error('tools/list has no json_schema_2020_12_tool with an inputSchema');
    return [{ tool: 'json_schema_echo', arguments: { schema: focal.inputSchema } }];
  }
  return tools.map((t) => ({ tool: t.tool, arguments: argumentsFor(t) }));
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
  const { packageEntry, printEntry, url } = parseArgs(process.argv);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const entry = serverEntry(url, scenario);
  if (printEntry) {
    const shown = { ...entry };
    if (entry.oauth) {
      shown.oauth = { ...entry.oauth };
      for (const secret of ['clientSecret', 'privateKey']) {
        if (entry.oauth[secret] !== undefined) shown.oauth[secret] = `<${entry.oauth[secret].length} characters>`;
      }
    }
    console.log(JSON.stringify(shown));
    return true;
  }
  // OAuth credentials need IndexedDB, which Node lacks: an in-memory one for this run.
  await import('fake-indexeddb/auto').catch((error) => {
    console.error(`wasm_conformance_client: fake-indexeddb is missing (run scripts/bootstrap): ${error?.message ?? error}`);
    process.exit(2);
  });
  const { createRuntime } = await import(pathToFileURL(packageEntry).href);

  // No tool cache: every run must reach the server.
  const rt = await createRuntime({
    cache: false,
    clientName: 'mcprt-conformance-client',
    logLevel: 'warn',
    timeoutMs: kStepLimitMs,
    onAuthorize: followAuthorizationRedirect,
    // Accept every form with no values: the core fills in the schema's defaults.
    onElicit: async (request) => {
      console.log(`elicitation (${request?.mode ?? 'form'}): ${request?.message ?? ''} → accept`);
      return { action: 'accept', content: {} };
    },
    redirectUri: kRedirectUri,
    // The client ID metadata document URL the suite's CIMD scenario expects (as the native client).
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  });
  let ok = true;
  try {
    const loaded = await bounded(rt.discoverAndLoad({ servers: { [kServer]: entry } }), 'connect');
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

    let calls = [];
    try {
      calls = plannedCalls(scenario, tools, contextFromEnv());
    } catch (error) {
      console.error(`wasm_conformance_client: ${scenario}: ${error.message}`);
      ok = false;
    }
    const call = async ({ tool, arguments: args }) => {
      const info = tools.find((t) => t.tool === tool);
      if (!info) {
        console.error(`${tool} failed: not among the listed tools`);
        ok = false;
        return;
      }
      try {
        const result = await bounded(rt.callTool(info.name, args), `${tool} call`);
        console.log(`${tool} → ${JSON.stringify(result.content)}${result.isError ? ' (isError)' : ''}`);
      } catch (error) {
        console.error(`${tool} failed: ${error?.message ?? error}`);
        ok = false;
      }
    };
    if (scenario === 'sep-2322-client-request-state') {
      // Parallel calls: each has its own MRTR rounds.
      await Promise.all(calls.map(call));
    } else {
      for (const c of calls) await call(c);
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

// Run only as a program (wasm_client_env.test.mjs imports plannedCalls).
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().then((ok) => process.exit(ok ? 0 : 1),
              (error) => {
                console.error(`wasm_conformance_client: ${error?.stack ?? error}`);
                process.exit(1);
              });
}
