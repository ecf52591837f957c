// A Node agent on mcprt: connects to one MCP server over Streamable HTTP, lists its tools
// and calls one (the demo server's `add`).
//
//   node agent.mjs [server-url]      default http://127.0.0.1:8787/mcp
//
// Start the demo server first: `mcprt-demo-server --http 8787` (build/native/demo), or
// pass the URL of another server and change the call below.
import { createRuntime } from 'mcprt';

const url = process.argv[2] ?? 'http://127.0.0.1:8787/mcp';

// Quiet by default in Node; `log` routes the runtime's warnings to our stderr.
const rt = await createRuntime({ log: (level, message) => console.error(`[mcprt ${level}] ${message}`) });
try {
  const { tools, errors } = await rt.discoverAndLoad({ servers: { demo: { url } } });
  for (const error of errors) console.error(`${error.server || error.path}: ${error.error}`);
  if (errors.length) process.exitCode = 1;

  console.log(`${tools.length} tools from ${url}:`);
  for (const tool of tools) console.log(`  ${tool.name}  ${tool.description}`);

  const result = await rt.callTool('mcp_demo_add', { a: 2, b: 3 }, { signal: AbortSignal.timeout(10000) });
  console.log(`mcp_demo_add {"a":2,"b":3} → ${result.text}${result.isError ? ' (error)' : ''}`);
  if (result.isError) process.exitCode = 1;
} finally {
  rt.dispose();
}
