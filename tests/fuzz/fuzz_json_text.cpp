// mcprt::parse_json against nlohmann's strict parser, the oracle (tests/support/include/
// mcprt/testing/json_oracle.hpp), and the parser's raw-tool-schema mode
// (detail::parse_json_keeping_raw_tool_schemas, jsonrpc/raw_json.hpp) against parse_json.
// Input: the first byte's low bit allows comments, its next four bits are a small depth
// limit D (0..15); the rest is the text.
//
// Invariants:
// - parse_json vs nlohmann: both accept or both refuse; an accepted text gives the same DOM
//   with the same number types (unsigned, integer, float); a refused one the same position
//   and nlohmann's words without the input it quotes.
// - raw mode vs parse_json (no comments), on the text and on the text wrapped into a
//   tools/list answer (as a tool's inputSchema, as a second "inputSchema" of a tool, as a
//   whole tool, as the tools array, as the result, as a second "tools" or "result" after a
//   listing), each without a depth limit and with a small one (D, and D + the wrapping's
//   depth): both accept or both refuse, a refusal with the same position, message and
//   too_deep; an accepted text gives a value where
//   * every binary value is a placeholder (subtype kRawJsonSubtype) standing at
//     result.tools[i].inputSchema of an object message, an object result and an array
//     tools, where parse_json has an object, and its text parses (parse_json) to that
//     object, number types included;
//   * every object at result.tools[i].inputSchema is such a placeholder (raw_json.hpp);
//   * restore_raw_tool_schemas leaves no binary value anywhere and gives parse_json's
//     value, number types included.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "fuzz_support.hpp"
#include "jsonrpc/raw_json.hpp"
#include "mcprt/json_text.hpp"
#include "mcprt/testing/json_oracle.hpp"

namespace {

using mcprt::json;
using mcprt::JsonSyntaxError;

// A member's path from the root: keys and array indices.
using PathStep = std::variant<std::string, std::size_t>;
using Path = std::vector<PathStep>;

std::string path_text(const Path& path) {
  std::string s;
  for (const PathStep& step : path) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      s += "." + json(*key).dump(-1, ' ', true, json::error_handler_t::replace);
    } else {
      s += "[" + std::to_string(std::get<std::size_t>(step)) + "]";
    }
  }
  return s.empty() ? "<root>" : s;
}

// The text, quoted with every byte outside printable ASCII escaped (short enough to read).
std::string shown(std::string_view text) {
  std::string s = "\"";
  const std::size_t shown_bytes = text.size() < 600 ? text.size() : 600;
  for (std::size_t i = 0; i < shown_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      s += '\\';
      s += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      s += hex;
    }
  }
  if (shown_bytes < text.size()) s += "...";
  return s + "\" (" + std::to_string(text.size()) + " bytes)";
}

[[noreturn]] void mismatch(std::string_view what, std::string_view text, std::size_t max_depth,
                           const std::string& detail) {
  std::fprintf(stderr, "raw tool schemas: %.*s\n  text %s\n  max_depth %s\n  %s\n",
               static_cast<int>(what.size()), what.data(), shown(text).c_str(),
               max_depth == mcprt::kNoJsonDepthLimit ? "none" : std::to_string(max_depth).c_str(),
               detail.c_str());
  std::fprintf(stderr, "FUZZ_CHECK failed: raw-tool-schema mode differs from parse_json\n");
  std::abort();
}

// Every binary value within `value`, with its path.
void find_binaries(const json& value, Path& path, std::vector<std::pair<Path, const json*>>& out) {
  if (value.is_binary()) {
    out.emplace_back(path, &value);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      path.emplace_back(i);
      find_binaries(value[i], path, out);
      path.pop_back();
    }
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      path.emplace_back(it.key());
      find_binaries(it.value(), path, out);
      path.pop_back();
    }
  }
}

bool has_binary(const json& value) {
  Path path;
  std::vector<std::pair<Path, const json*>> found;
  find_binaries(value, path, found);
  return !found.empty();
}

// The value at `path` within `value`, or null.
const json* value_at(const json& value, const Path& path) {
  const json* v = &value;
  for (const PathStep& step : path) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      if (!v->is_object()) return nullptr;
      auto it = v->find(*key);
      if (it == v->end()) return nullptr;
      v = &*it;
    } else {
      const std::size_t i = std::get<std::size_t>(step);
      if (!v->is_array() || i >= v->size()) return nullptr;
      v = &(*v)[i];
    }
  }
  return v;
}

// The value at `path` within `message` when `path` is result.tools[i].inputSchema (so the
// message and the result are objects, the tools an array and the tool an object), else null.
const json* tool_schema_at(const json& message, const Path& path) {
  if (path.size() != 4) return nullptr;
  const auto* result = std::get_if<std::string>(&path[0]);
  const auto* tools = std::get_if<std::string>(&path[1]);
  const auto* index = std::get_if<std::size_t>(&path[2]);
  const auto* schema = std::get_if<std::string>(&path[3]);
  if (!result || *result != "result" || !tools || *tools != "tools" || !index || !schema ||
      *schema != "inputSchema") {
    return nullptr;
  }
  return value_at(message, path);
}

// Raw mode against parse_json on one text and one depth limit.
void check_raw_mode(std::string_view what, std::string_view text, std::size_t max_depth) {
  JsonSyntaxError plain_error, raw_error;
  const json plain = mcprt::parse_json(text, /*allow_comments=*/false, &plain_error, max_depth);
  json raw = mcprt::detail::parse_json_keeping_raw_tool_schemas(text, &raw_error, max_depth);

  if (plain.is_discarded() != raw.is_discarded()) {
    mismatch(what, text, max_depth,
             std::string("parse_json ") +
                 (plain.is_discarded() ? "refuses (" + plain_error.message + ")" : "accepts") +
                 ", raw mode " +
                 (raw.is_discarded() ? "refuses (" + raw_error.message + ")" : "accepts"));
  }
  if (plain.is_discarded()) {
    if (plain_error.position != raw_error.position || plain_error.message != raw_error.message ||
        plain_error.too_deep != raw_error.too_deep) {
      mismatch(what, text, max_depth,
               "parse_json at " + std::to_string(plain_error.position) + " \"" +
                   plain_error.message + "\"" + (plain_error.too_deep ? " (too deep)" : "") +
                   ", raw mode at " + std::to_string(raw_error.position) + " \"" +
                   raw_error.message + "\"" + (raw_error.too_deep ? " (too deep)" : ""));
    }
    return;
  }

  // parse_json never yields a binary value (JSON text has none).
  FUZZ_CHECK(!has_binary(plain));

  // Each binary value is a placeholder standing where parse_json has an object, and its
  // text parses to that object.
  Path path;
  std::vector<std::pair<Path, const json*>> binaries;
  find_binaries(raw, path, binaries);
  for (const auto& [at, value] : binaries) {
    if (!mcprt::detail::is_raw_json(*value)) {
      mismatch(what, text, max_depth, "a binary value that is no placeholder at " + path_text(at));
    }
    const json* in_plain = value_at(plain, at);
    if (in_plain == nullptr || !in_plain->is_object()) {
      mismatch(what, text, max_depth,
               "a placeholder at " + path_text(at) + " where parse_json has " +
                   (in_plain ? mcprt::testing::typed_dump(*in_plain) : std::string("nothing")));
    }
    const std::string_view raw_text = mcprt::detail::raw_json_text(*value);
    JsonSyntaxError text_error;
    const json reparsed = mcprt::parse_json(raw_text, /*allow_comments=*/false, &text_error);
    if (reparsed.is_discarded()) {
      mismatch(what, text, max_depth,
               "the placeholder at " + path_text(at) + " holds " + shown(raw_text) +
                   ", which parse_json refuses (" + text_error.message + ")");
    }
    const std::string want = mcprt::testing::typed_dump(*in_plain);
    const std::string got = mcprt::testing::typed_dump(reparsed);
    if (want != got) {
      mismatch(what, text, max_depth,
               "the placeholder at " + path_text(at) + " holds " + shown(raw_text) + " = " + got +
                   ", parse_json has " + want);
    }
  }

  // ... and only at result.tools[i].inputSchema of a tools/list answer (an object message,
  // an object result, an array of tools, an object tool).
  for (const auto& [at, value] : binaries) {
    if (tool_schema_at(raw, at) != value) {
      mismatch(what, text, max_depth,
               "a placeholder at " + path_text(at) + ", no result.tools[i].inputSchema of a " +
                   "tools/list answer; parse_json: " + mcprt::testing::typed_dump(plain));
    }
  }

  // Every object at result.tools[i].inputSchema is a placeholder (raw_json.hpp: "with every
  // object at result.tools[*].inputSchema kept as a placeholder").
  if (plain.is_object()) {
    auto r = plain.find("result");
    if (r != plain.end() && r->is_object()) {
      auto t = r->find("tools");
      if (t != r->end() && t->is_array()) {
        for (std::size_t i = 0; i < t->size(); ++i) {
          const Path at{std::string("result"), std::string("tools"), i, std::string("inputSchema")};
          const json* in_plain = tool_schema_at(plain, at);
          if (in_plain == nullptr || !in_plain->is_object()) continue;
          const json* in_raw = tool_schema_at(raw, at);
          if (in_raw == nullptr || !mcprt::detail::is_raw_json(*in_raw)) {
            mismatch(what, text, max_depth,
                     "the object at " + path_text(at) + " is no placeholder: " +
                         (in_raw ? mcprt::testing::typed_dump(*in_raw) : std::string("missing")));
          }
        }
      }
    }
  }

  // Restored, it is parse_json's value, without a binary value left.
  mcprt::detail::restore_raw_tool_schemas(raw);
  binaries.clear();
  find_binaries(raw, path, binaries);
  if (!binaries.empty()) {
    mismatch(what, text, max_depth,
             "after restore_raw_tool_schemas a binary value is left at " +
                 path_text(binaries.front().first) + ": " + mcprt::testing::typed_dump(raw));
  }
  const std::string want = mcprt::testing::typed_dump(plain);
  const std::string got = mcprt::testing::typed_dump(raw);
  if (want != got || !(raw == plain)) {
    mismatch(what, text, max_depth, "restored " + got + ", parse_json " + want);
  }
}

// The text as it is and wrapped into a tools/list answer, each with its depth levels
// around the text (a wrapping's containers count toward the limit).
struct Wrapping {
  const char* name;
  std::string_view before;
  std::string_view after;
  std::size_t levels;  // containers open where the text stands
};

constexpr Wrapping kWrappings[] = {
    {"text", "", "", 0},
    {"as a tool's inputSchema", R"({"result":{"tools":[{"name":"t","inputSchema":)", "}]}}", 4},
    {"as a second inputSchema",
     R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"inputSchema":)",
     R"(},{"name":"u","inputSchema":{}}]}})", 4},
    {"as a whole tool", R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},)",
     R"(,{"name":"b","inputSchema":{"x":[1]}}]}})", 3},
    {"as the tools", R"({"id":1,"result":{"tools":)", R"(,"nextCursor":"c"}})", 2},
    {"as the result", R"({"jsonrpc":"2.0","id":1,"result":)", "}", 1},
    // After a first listing (the parser notes where the result and its tools are):
    {"as a second tools", R"({"id":1,"result":{"tools":[{"name":"a","inputSchema":{}}],"tools":)",
     "}}", 2},
    {"as a second result", R"({"id":1,"result":{"tools":[{"name":"a","inputSchema":{}}]},"result":)",
     "}", 1},
};

void check_raw_modes(std::string_view input, std::size_t small_depth) {
  std::string text;
  for (const Wrapping& w : kWrappings) {
    text.assign(w.before);
    text.append(input);
    text.append(w.after);
    check_raw_mode(w.name, text, mcprt::kNoJsonDepthLimit);
    check_raw_mode(w.name, text, small_depth);
    if (w.levels != 0) check_raw_mode(w.name, text, small_depth + w.levels);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  const bool comments = (bytes[0] & 1) != 0;
  const std::size_t small_depth = (bytes[0] >> 1) & 0x0f;
  const std::string_view text = mcprt::fuzz::as_text(bytes + 1, size - 1);
  const std::string difference = mcprt::testing::json_parse_difference(text, comments);
  if (!difference.empty()) std::fprintf(stderr, "%s\n", difference.c_str());
  FUZZ_CHECK(difference.empty());
  check_raw_modes(text, small_depth);
  return 0;
}
