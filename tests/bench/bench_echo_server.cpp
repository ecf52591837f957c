// mcprt_bench_echo_server: the minimal stdio MCP server every client of the benchmarks
// (mcprt, the TypeScript SDK v1 and v2 clients, the raw baselines) talks to, so that they
// are measured against the same server doing the same (small) work.
//
//   mcprt_bench_echo_server [--tools N] [--init-delay-ms D]
//
//  - newline-delimited JSON-RPC on stdin/stdout, one thread, blocking I/O; exits on EOF;
//  - `initialize` is answered D ms after it arrived (a server that is slow to start);
//    the protocol version asked for is agreed when it is one of 2024-11-05 … 2025-11-25;
//  - `tools/list` lists N synthetic tools `tool_000`… with realistic definitions (a
//    description and an input schema of a few hundred bytes: properties of several types,
//    an enum, a nested array, `required`), rendered once at start;
//  - `tools/call` of any listed tool answers one text block: the `message` argument (or
//    the arguments' JSON when there is none);
//  - `ping` answers {}; any other request (e.g. the 2026-07-28 `server/discover` probe)
//    gets -32601 at once; notifications are ignored.

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace {

using json = nlohmann::json;

bool write_all(const std::string& s) {
  const char* p = s.data();
  std::size_t n = s.size();
  while (n > 0) {
    ssize_t w = ::write(STDOUT_FILENO, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Tool i's definition: about 450 bytes of JSON, shaped like real tools (a file-system or
// issue-tracker tool), distinct per index so nothing can be shared by accident.
json tool_definition(int i) {
  char name[32];
  std::snprintf(name, sizeof name, "tool_%03d", i);
  const std::string n = std::to_string(i);
  return {
      {"name", name},
      {"description", "Synthetic benchmark tool " + n + ": searches the records of collection " +
                          n + " and returns the matching entries, newest first."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"query", {{"type", "string"}, {"description", "Text to search for in collection " + n}}},
          {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}, {"default", 20}}},
          {"order", {{"type", "string"}, {"enum", {"newest", "oldest", "relevance"}}}},
          {"fields",
           {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"description", "Fields to return"}}},
          {"message", {{"type", "string"}, {"description", "Echoed back by tools/call"}}}}},
        {"required", {"query"}},
        {"additionalProperties", false}}},
      {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}}};
}

std::string reply(const json& id, const json& result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump() + "\n";
}

std::string error_reply(const json& id, int code, const std::string& message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}}
             .dump() +
         "\n";
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "mcprt_bench_echo_server: %s\n"
               "usage: mcprt_bench_echo_server [--tools N] [--init-delay-ms D]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int tools = 1;
  long delay_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value for " + a).c_str());
    const char* v = argv[++i];
    if (a == "--tools") {
      tools = std::atoi(v);
    } else if (a == "--init-delay-ms") {
      delay_ms = std::atol(v);
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  if (tools < 0 || delay_ms < 0) usage("negative value");

  // The tools/list result, rendered once: `{"tools":[...]}`.
  json list = json::array();
  for (int i = 0; i < tools; ++i) list.push_back(tool_definition(i));
  const std::string list_result = json{{"tools", std::move(list)}}.dump();

  std::string buf;
  std::size_t pos = 0;
  char chunk[65536];
  for (;;) {
    const std::size_t nl = buf.find('\n', pos);
    if (nl == std::string::npos) {
      buf.erase(0, pos);
      pos = 0;
      ssize_t r = ::read(STDIN_FILENO, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return 0;  // EOF: the client is gone
      buf.append(chunk, static_cast<std::size_t>(r));
      continue;
    }
    const json msg = json::parse(buf.begin() + static_cast<std::ptrdiff_t>(pos),
                                 buf.begin() + static_cast<std::ptrdiff_t>(nl), nullptr, false);
    pos = nl + 1;
    if (!msg.is_object()) continue;
    auto id_it = msg.find("id");
    auto method_it = msg.find("method");
    if (id_it == msg.end() || method_it == msg.end() || !method_it->is_string()) continue;
    const json& id = *id_it;
    const std::string& method = method_it->get_ref<const std::string&>();
    const json params = msg.value("params", json::object());

    std::string out;
    if (method == "initialize") {
      if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      std::string version = "2025-11-25";
      const json asked = params.is_object() ? params.value("protocolVersion", json()) : json();
      for (const char* known : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}) {
        if (asked == known) version = known;
      }
      out = reply(id, {{"protocolVersion", version},
                       {"capabilities", {{"tools", json::object()}}},
                       {"serverInfo", {{"name", "mcprt-bench-echo"}, {"version", "1.0.0"}}}});
    } else if (method == "tools/list") {
      out = "{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() + ",\"result\":" + list_result + "}\n";
    } else if (method == "tools/call") {
      const json args = params.is_object() ? params.value("arguments", json::object()) : json();
      std::string text;
      if (args.is_object() && args.contains("message") && args["message"].is_string()) {
        text = args["message"].get<std::string>();
      } else {
        text = args.dump();
      }
      out = reply(id, {{"content", json::array({{{"type", "text"}, {"text", text}}})}});
    } else if (method == "ping") {
      out = reply(id, json::object());
    } else {
      out = error_reply(id, -32601, "Method not found: " + method);
    }
    if (!write_all(out)) return 0;
  }
}
