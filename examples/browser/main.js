// The page: mcprt from npm (a bundler resolves 'mcprt' and its module; mcprt.wasm is
// either an asset the bundler emitted — vite — or copied next to the bundle — esbuild,
// build-esbuild.mjs). Connects to the MCP server in ?server= (default the demo server on
// 127.0.0.1:8787; it must allow CORS for this page, as the demo server does), lists its
// tools, calls mcp_demo_add.
import { createRuntime } from 'mcprt';

const server = new URLSearchParams(location.search).get('server') ?? 'http://127.0.0.1:8787/mcp';
const show = (id, text) => { document.getElementById(id).textContent = text; };

async function main() {
  const rt = await createRuntime();
  const { tools, errors } = await rt.discoverAndLoad({ servers: { demo: { url: server } } });
  const list = document.getElementById('tools');
  for (const tool of tools) {
    const item = document.createElement('li');
    item.dataset.tool = tool.name;
    item.textContent = `${tool.name} — ${tool.description}`;
    list.append(item);
  }
  show('status', errors.length ? errors.map((e) => `${e.server}: ${e.error}`).join('; ') : `${tools.length} tools from ${server}`);
  const result = await rt.callTool('mcp_demo_add', { a: 2, b: 3 }, { signal: AbortSignal.timeout(10000) });
  show('result', result.text);
}

main().catch((error) => show('status', `failed: ${error.message}`));
