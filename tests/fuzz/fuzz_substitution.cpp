// Discovery-time substitution (SPEC §2.4): ${VAR}, ${VAR:-default}, ${env:VAR} (and
// ${env:VAR:-default}) in every string field of a server config, with a fuzzed
// environment.
//
// Input: records separated by "\n----\n": the environment (NAME=VALUE lines; a name
// without '=' is set to the empty string), then the command, the args (one a line), env
// values (KEY=VALUE lines), the url, header values (Name: value lines) and the cwd.
//
// Invariants: every field equals what an independent model of the documented rules gives
// (one left-to-right pass; values are inserted as they are, never expanded again; a
// `${...}` with another colon form or an empty name stays as written; an unterminated
// `${` is literal; a default applies when the variable is unset or empty); the warnings
// name exactly the variables that were unset and had no default, each once; `raw` and the
// keys of env and headers are untouched.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "mcprt/discovery.hpp"
#include "mcprt/testing/env_map.hpp"

namespace {

using mcprt::json;

// The documented rules, written independently of substitution.cpp.
struct Model {
  const std::map<std::string, std::string>& env;
  std::set<std::string> unset;

  std::string apply(const std::string& in) {
    std::string out;
    std::size_t i = 0;
    while (i < in.size()) {
      if (in.compare(i, 2, "${") != 0) {
        out += in[i++];
        continue;
      }
      const std::size_t close = in.find('}', i + 2);
      if (close == std::string::npos) {
        out += in.substr(i);
        break;
      }
      const std::string whole = in.substr(i, close - i + 1);
      std::string inner = in.substr(i + 2, close - i - 2);
      i = close + 1;
      if (inner.rfind("env:", 0) == 0) inner = inner.substr(4);
      std::optional<std::string> fallback;
      if (auto dash = inner.find(":-"); dash != std::string::npos) {
        fallback = inner.substr(dash + 2);
        inner = inner.substr(0, dash);
      }
      if (inner.empty() || inner.find(':') != std::string::npos) {
        out += whole;
        continue;
      }
      auto it = env.find(inner);
      if (fallback && (it == env.end() || it->second.empty())) {
        out += *fallback;
      } else if (it != env.end()) {
        out += it->second;
      } else {
        unset.insert(inner);
        out += whole;
      }
    }
    return out;
  }
};

std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) out.emplace_back(mcprt::fuzz::take_line(text));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  std::vector<std::string_view> r = mcprt::fuzz::split_records(mcprt::fuzz::as_text(bytes, size), 7);
  r.resize(7);

  std::map<std::string, std::string> env;
  for (const std::string& line : lines(r[0])) {
    const std::size_t eq = line.find('=');
    env[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }

  mcprt::ServerConfig in;
  in.name = "fuzz";
  in.source.path = "/repo/.mcp.json";
  in.command = std::string(r[1]);
  in.args = lines(r[2]);
  for (const std::string& line : lines(r[3])) {
    const std::size_t eq = line.find('=');
    in.env[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  in.url = std::string(r[4]);
  for (const std::string& line : lines(r[5])) {
    const std::size_t colon = line.find(':');
    in.headers[line.substr(0, colon)] = colon == std::string::npos ? "" : line.substr(colon + 1);
  }
  in.cwd = std::string(r[6]);
  in.raw = json{{"command", "${RAW_IS_KEPT}"}};

  std::vector<mcprt::ConfigError> warnings;
  const mcprt::ServerConfig out = mcprt::substitute_variables(in, mcprt::testing::env_of(env), &warnings);

  Model m{env, {}};
  FUZZ_CHECK(out.command == m.apply(in.command));
  FUZZ_CHECK(out.args.size() == in.args.size());
  for (std::size_t i = 0; i < in.args.size(); ++i) FUZZ_CHECK(out.args[i] == m.apply(in.args[i]));
  FUZZ_CHECK(out.env.size() == in.env.size());
  for (const auto& [k, v] : in.env) FUZZ_CHECK(out.env.count(k) && out.env.at(k) == m.apply(v));
  FUZZ_CHECK(out.url == m.apply(in.url));
  FUZZ_CHECK(out.headers.size() == in.headers.size());
  for (const auto& [k, v] : in.headers) FUZZ_CHECK(out.headers.count(k) && out.headers.at(k) == m.apply(v));
  FUZZ_CHECK(out.cwd == m.apply(in.cwd));
  FUZZ_CHECK(out.raw == in.raw && out.name == in.name);

  FUZZ_CHECK(warnings.size() == m.unset.size());
  for (const mcprt::ConfigError& w : warnings) {
    FUZZ_CHECK(w.server == "fuzz" && w.path == "/repo/.mcp.json");
    bool names_one = false;
    for (const std::string& name : m.unset) {
      names_one = names_one || w.message.find("\"" + name + "\"") != std::string::npos;
    }
    FUZZ_CHECK(names_one);
  }
  return 0;
}
