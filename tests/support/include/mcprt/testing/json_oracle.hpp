#pragma once
// nlohmann's strict parser as the oracle for mcprt::parse_json (tests/unit/json_text_test.cpp
// and tests/fuzz/fuzz_json_text.cpp): the two must accept and refuse the same texts, build
// the same DOM with the same number types, and report an error with the same words and
// position (parse_json leaves out the input nlohmann quotes).

#include <cstddef>
#include <string>
#include <string_view>

#include "mcprt/json_text.hpp"

namespace mcprt::testing {

// nlohmann's DOM parser, keeping its error (position and message).
struct NlohmannOracle : nlohmann::detail::json_sax_dom_parser<json> {
  explicit NlohmannOracle(json& out) : json_sax_dom_parser(out, /*allow_exceptions=*/false) {}
  template <class Exception>
  bool parse_error(std::size_t at, const std::string&, const Exception& ex) {
    failed = true;
    position = at;
    message = ex.what();
    return false;
  }
  bool failed = false;
  std::size_t position = 0;
  std::string message;
};

// nlohmann's message without its prefix ("[json.exception.parse_error.101] parse error at
// line 1, column 2: ") and without the quoted input ("; last read: '...'").
inline std::string nlohmann_words(std::string s) {
  if (auto column = s.find("column "); column != std::string::npos) {
    if (auto colon = s.find(": ", column); colon != std::string::npos) s.erase(0, colon + 2);
  } else if (auto bracket = s.find("] "); bracket != std::string::npos) {
    s.erase(0, bracket + 2);
  }
  if (auto last = s.find("; last read: '"); last != std::string::npos) {
    // The quote may hold anything, "'; expected " too: what may follow it is one of the
    // tokens nlohmann names, at the very end.
    std::string expected;
    for (const char* token : {"string literal", "':'", "']'", "'}'", "end of input",
                              "'[', '{', or a literal"}) {
      const std::string tail = std::string("'; expected ") + token;
      if (s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0) {
        expected = tail.substr(1);
      }
    }
    s = s.substr(0, last) + expected;
  }
  return s;
}

// The DOM with each number's type: 1, 1u and 1.0 compare equal as json, not here.
inline std::string typed_dump(const json& v) {
  switch (v.type()) {
    case json::value_t::number_integer: return "i" + v.dump();
    case json::value_t::number_unsigned: return "u" + v.dump();
    case json::value_t::number_float: return "f" + v.dump();
    case json::value_t::array: {
      std::string s = "[";
      for (const auto& e : v) s += typed_dump(e) + ",";
      return s + "]";
    }
    case json::value_t::object: {
      std::string s = "{";
      for (const auto& [k, e] : v.items()) s += json(k).dump() + ":" + typed_dump(e) + ",";
      return s + "}";
    }
    default: return v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

// Empty when parse_json and nlohmann agree on `text`; else what differs. The one
// difference allowed: nlohmann ends its input at a NUL byte outside a string (it accepts
// "1\0x" as 1), where parse_json refuses the text, so a text holding a NUL byte must be
// refused by parse_json (a raw NUL inside a string is an error for both).
inline std::string json_parse_difference(std::string_view text, bool comments) {
  JsonSyntaxError error;
  const json ours = parse_json(text, comments, &error);
  const std::string where = "text of " + std::to_string(text.size()) + " bytes" +
                            (comments ? " (comments allowed)" : "") + ": ";
  if (text.find('\0') != std::string_view::npos) {
    return ours.is_discarded() ? std::string() : where + "parse_json accepts a NUL byte";
  }
  json theirs;
  NlohmannOracle oracle(theirs);
  json::sax_parse(text.begin(), text.end(), &oracle, json::input_format_t::json, /*strict=*/true,
                  comments);
  if (oracle.failed != ours.is_discarded()) {
    return where + "nlohmann " + (oracle.failed ? "refuses (" + oracle.message + ")" : "accepts") +
           ", parse_json " + (ours.is_discarded() ? "refuses (" + error.message + ")" : "accepts");
  }
  if (oracle.failed) {
    const std::string words = nlohmann_words(oracle.message);
    // An out-of-range number: nlohmann quotes it (a digit short at times), parse_json its
    // first 40 bytes; the words before the quote are what must match.
    const std::string overflow = "number overflow parsing '";
    const bool both_overflow = words.rfind(overflow, 0) == 0 && error.message.rfind(overflow, 0) == 0;
    // Where the input itself holds "; expected ", nlohmann's quote of it cannot be told
    // from its own words: only the position is compared.
    const bool ambiguous = text.find("; expected ") != std::string_view::npos;
    if ((words != error.message && !both_overflow && !ambiguous) || oracle.position != error.position) {
      return where + "nlohmann at " + std::to_string(oracle.position) + " \"" + words +
             "\", parse_json at " + std::to_string(error.position) + " \"" + error.message + "\"";
    }
    return {};
  }
  const std::string a = typed_dump(theirs), b = typed_dump(ours);
  if (a != b) return where + "nlohmann " + a + ", parse_json " + b;
  return {};
}

}  // namespace mcprt::testing
