#pragma once
// The umbrella header (SPEC §10): everything a host needs to embed mcprt.
//
//   #include <mcprt/mcprt.hpp>
//
//   mcprt::ToolRegistry registry(executor);
//   mcprt::McpSession session(registry, &logger);
//   mcprt::discover_and_load_tools(ctx, services, {}, [&](mcprt::LoadResult r) {
//     session.bind(r.manager);              // tools now, and whenever they change
//   });
//
// Platform pieces (executors, HTTP clients, stores) come from the platform's own headers:
// <mcprt/native/host.hpp> natively, the JS module in the browser.

#include "mcprt/abort.hpp"
#include "mcprt/client.hpp"
#include "mcprt/config.hpp"
#include "mcprt/connect.hpp"
#include "mcprt/discovery.hpp"
#include "mcprt/loader.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/mcp_command.hpp"
#include "mcprt/memory_store.hpp"
#include "mcprt/result.hpp"
#include "mcprt/session.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/tools.hpp"
#include "mcprt/version.hpp"
