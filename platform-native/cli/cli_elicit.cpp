// The CLI's elicitation handler: the terminal form and the URL consent (cli_elicit.hpp).
#include "cli_elicit.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mcprt/native/authorizer.hpp"
#include "mcprt/url.hpp"

extern char** environ;

namespace mcprt::cli {
namespace {

// Each field is asked again after a bad answer at most this many times in all; then the
// whole form is cancelled (a script typing into the terminal cannot loop it forever).
constexpr int kMaxAttempts = 5;
// A form with more properties than this is declined: nobody answers 200 questions.
constexpr std::size_t kMaxFields = 32;
constexpr std::size_t kMaxLineBytes = 4096;    // one answer; the rest of a longer line is dropped
constexpr std::size_t kMaxMessageBytes = 2000;  // the server's message as shown
constexpr std::size_t kMaxLabelBytes = 200;     // a title, a choice, a default as shown
constexpr std::size_t kMaxDescriptionBytes = 600;
constexpr std::size_t kMaxChoices = 50;


// The byte length of the UTF-8 sequence at s[i], or 0 when it is not a valid one
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_length(std::string_view s, std::size_t i, unsigned* code_point) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n;
  unsigned cp;
  if (b < 0x80) {
    *code_point = b;
    return 1;
  } else if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
    cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    cp = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return n;
}

// Code points that change how the rest of a line reads without being visible: C1
// controls, the bidirectional embeddings, overrides and isolates, the line and paragraph
// separators.
bool is_invisible_control(unsigned cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F || cp == 0x061C ||
         cp == 0x2028 || cp == 0x2029;
}

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    unsigned cp = 0;
    std::size_t len = utf8_length(s, i, &cp);
    i += len == 0 ? 1 : len;
    ++n;
  }
  return n;
}

void say(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

// One line from the terminal, read byte by byte so nothing a later reader (the REPL) wants
// is buffered away here. nullopt at end of input (Ctrl-D at the start of a line) or on an
// error.
std::optional<std::string> read_answer() {
  std::string line;
  bool any = false;
  char c;
  while (true) {
    ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!any) return std::nullopt;
      break;
    }
    any = true;
    if (c == '\n') break;
    if (line.size() < kMaxLineBytes) line.push_back(c);
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.pop_back();
  }
  std::size_t b = line.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : line.substr(b);
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::string quoted(const std::string& server) { return "\"" + terminal_safe(server, kMaxLabelBytes) + "\""; }

// A JSON value as the user reads it: strings without quotes, everything else as JSON.
std::string shown(const json& value) {
  if (value.is_string()) return terminal_safe(value.get_ref<const std::string&>(), kMaxLabelBytes);
  return terminal_safe(value.dump(-1, ' ', false, json::error_handler_t::replace), kMaxLabelBytes);
}

std::string string_member(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// One choice of an enum: the value sent and the label shown.
struct Choice {
  json value;
  std::string label;
};

// `enum` (with the legacy `enumNames`), or `oneOf`/`anyOf` of {const, title}.
std::vector<Choice> choices_of(const json& schema) {
  std::vector<Choice> out;
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
    const json* names = nullptr;
    if (auto n = schema.find("enumNames"); n != schema.end() && n->is_array() && n->size() == e->size()) {
      names = &*n;
    }
    for (std::size_t i = 0; i < e->size() && out.size() < kMaxChoices; ++i) {
      std::string label = shown((*e)[i]);
      if (names && (*names)[i].is_string()) label = shown((*names)[i]) + " (" + label + ")";
      out.push_back({(*e)[i], label});
    }
    return out;
  }
  for (const char* key : {"oneOf", "anyOf"}) {
    auto list = schema.find(key);
    if (list == schema.end() || !list->is_array()) continue;
    for (const auto& option : *list) {
      if (out.size() >= kMaxChoices) break;
      if (!option.is_object() || !option.contains("const")) continue;
      std::string label = shown(option["const"]);
      std::string title = string_member(option, "title");
      if (!title.empty()) label = terminal_safe(title, kMaxLabelBytes) + " (" + label + ")";
      out.push_back({option["const"], label});
    }
    if (!out.empty()) return out;
  }
  return out;
}

// A choice picked by its number (1-based) or its value as written.
std::optional<json> pick(const std::vector<Choice>& choices, const std::string& answer) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(answer.c_str(), &end, 10);
  if (!answer.empty() && end && *end == '\0' && errno == 0 && n >= 1 &&
      n <= static_cast<long>(choices.size())) {
    return choices[static_cast<std::size_t>(n - 1)].value;
  }
  for (const auto& c : choices) {
    if ((c.value.is_string() && c.value.get_ref<const std::string&>() == answer) ||
        (!c.value.is_string() && c.value.dump() == answer)) {
      return c.value;
    }
  }
  return std::nullopt;
}

enum class Outcome { value, skipped, cancelled, failed };

struct FieldAnswer {
  Outcome outcome = Outcome::skipped;
  json value;
};

// Checks one typed answer against the property's schema: the value, or why not.
Result<json> convert(const std::string& type, const json& schema, const std::string& answer,
                     const std::vector<Choice>& choices) {
  auto bad = [](std::string why) { return Error::make(ErrorCode::invalid_argument, std::move(why)); };
  if (type == "boolean") {
    const std::string a = lower(answer);
    if (a == "y" || a == "yes" || a == "true") return json(true);
    if (a == "n" || a == "no" || a == "false") return json(false);
    return bad("answer y or n");
  }
  if (type == "array") {
    json list = json::array();
    std::size_t start = 0;
    while (start <= answer.size()) {
      std::size_t comma = answer.find(',', start);
      std::string part = answer.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      while (!part.empty() && part.back() == ' ') part.pop_back();
      part.erase(0, part.find_first_not_of(' ') == std::string::npos ? part.size() : part.find_first_not_of(' '));
      if (!part.empty()) {
        auto v = pick(choices, part);
        if (!v) return bad("\"" + terminal_safe(part, kMaxLabelBytes) + "\" is not one of the choices");
        if (std::find(list.begin(), list.end(), *v) == list.end()) list.push_back(*v);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (auto min = schema.find("minItems"); min != schema.end() && min->is_number_unsigned() &&
                                            list.size() < min->get<std::size_t>()) {
      return bad("choose at least " + std::to_string(min->get<std::size_t>()));
    }
    if (auto max = schema.find("maxItems"); max != schema.end() && max->is_number_unsigned() &&
                                            list.size() > max->get<std::size_t>()) {
      return bad("choose at most " + std::to_string(max->get<std::size_t>()));
    }
    return list;
  }
  if (!choices.empty()) {
    auto v = pick(choices, answer);
    if (!v) return bad("answer one of the choices (its number or its value)");
    return *v;
  }
  if (type == "integer" || type == "number") {
    const char* begin = answer.c_str();
    char* end = nullptr;
    errno = 0;
    json value;
    if (type == "integer") {
      long long n = std::strtoll(begin, &end, 10);
      if (end == begin || *end != '\0' || errno == ERANGE) return bad("answer a whole number, e.g. 42");
      value = n;
    } else {
      double d = std::strtod(begin, &end);
      if (end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(d)) {
        return bad("answer a number, e.g. 3.5");
      }
      value = d;
    }
    const double d = value.get<double>();
    if (auto min = schema.find("minimum"); min != schema.end() && min->is_number() && d < min->get<double>()) {
      return bad("the smallest allowed value is " + min->dump());
    }
    if (auto max = schema.find("maximum"); max != schema.end() && max->is_number() && d > max->get<double>()) {
      return bad("the largest allowed value is " + max->dump());
    }
    return value;
  }
  // string (and anything untyped)
  const std::size_t length = code_points(answer);
  if (auto min = schema.find("minLength"); min != schema.end() && min->is_number_unsigned() &&
                                           length < min->get<std::size_t>()) {
    return bad("at least " + std::to_string(min->get<std::size_t>()) + " characters");
  }
  if (auto max = schema.find("maxLength"); max != schema.end() && max->is_number_unsigned() &&
                                           length > max->get<std::size_t>()) {
    return bad("at most " + std::to_string(max->get<std::size_t>()) + " characters");
  }
  return json(answer);
}

// Asks one property until the answer fits (at most kMaxAttempts answers).
FieldAnswer ask_field(const std::string& name, const json& schema, bool required) {
  const std::string type = string_member(schema, "type");
  std::vector<Choice> choices = choices_of(schema);
  if (type == "array") {
    auto items = schema.find("items");
    choices = items != schema.end() && items->is_object() ? choices_of(*items) : std::vector<Choice>{};
  }
  const bool supported = type.empty() || type == "string" || type == "boolean" || type == "integer" ||
                         type == "number" || (type == "array" && !choices.empty());
  const std::string title = string_member(schema, "title");
  std::string head = "\n  " + (title.empty() ? terminal_safe(name, kMaxLabelBytes)
                                            : terminal_safe(title, kMaxLabelBytes) + " [" +
                                                  terminal_safe(name, kMaxLabelBytes) + "]");
  head += " (" + (type.empty() ? std::string("string") : terminal_safe(type, kMaxLabelBytes));
  const std::string format = string_member(schema, "format");
  if (!format.empty()) head += ", " + terminal_safe(format, kMaxLabelBytes);
  if (required) head += ", required";
  head += ")\n";
  const std::string description = string_member(schema, "description");
  if (!description.empty()) head += "    " + terminal_safe(description, kMaxDescriptionBytes, "    ") + "\n";
  if (!supported) {
    say(head + "    (a " + terminal_safe(type, kMaxLabelBytes) +
        " cannot be entered here; it is left out)\n");
    return {Outcome::skipped, nullptr};
  }
  for (std::size_t i = 0; i < choices.size(); ++i) {
    head += "    " + std::to_string(i + 1) + ") " + choices[i].label + "\n";
  }
  const auto def = schema.find("default");
  const bool has_default = def != schema.end() && !def->is_null();
  std::string prompt = "  " + terminal_safe(name, kMaxLabelBytes);
  if (type == "boolean") prompt += " (y/n)";
  if (type == "array") prompt += " (numbers or values, comma-separated)";
  if (!choices.empty() && type != "array") prompt += " (number or value)";
  if (has_default) {
    std::string d = type == "boolean" && def->is_boolean() ? (def->get<bool>() ? "y" : "n") : shown(*def);
    if (def->is_array()) {
      d.clear();
      for (const auto& v : *def) d += (d.empty() ? "" : ",") + shown(v);
    }
    prompt += " [" + d + "]";
  }
  prompt += " > ";
  say(head);
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    say(prompt);
    auto line = read_answer();
    if (!line) return {Outcome::cancelled, nullptr};
    if (line->empty()) {
      if (has_default) return {Outcome::value, *def};
      if (!required) return {Outcome::skipped, nullptr};
      say("    a value is required\n");
      continue;
    }
    auto value = convert(type, schema, *line, choices);
    if (value.ok()) return {Outcome::value, std::move(value.value())};
    say("    " + value.error().message + "\n");
  }
  return {Outcome::failed, nullptr};
}

ElicitAnswer run_form(const Elicitation& e) {
  const json& schema = e.requested_schema;
  const json empty = json::object();
  auto props_it = schema.find("properties");
  const json& props = props_it != schema.end() && props_it->is_object() ? *props_it : empty;
  std::vector<std::string> required;
  if (auto r = schema.find("required"); r != schema.end() && r->is_array()) {
    for (const auto& name : *r) {
      if (name.is_string()) required.push_back(name.get<std::string>());
    }
  }
  say("\nmcprt: server " + quoted(e.server) + " asks for input:\n  " +
      terminal_safe(e.message, kMaxMessageBytes) + "\n");
  if (props.size() > kMaxFields) {
    say("mcprt: the form has " + std::to_string(props.size()) + " fields (at most " +
        std::to_string(kMaxFields) + " are asked here); declined\n");
    return ElicitAnswer::decline();
  }
  say("  (Enter takes the [default]; Ctrl-D cancels)\n");
  json content = json::object();
  for (const auto& [name, prop] : props.items()) {
    const bool is_required = std::find(required.begin(), required.end(), name) != required.end();
    FieldAnswer a = ask_field(name, prop.is_object() ? prop : empty, is_required);
    if (a.outcome == Outcome::cancelled) {
      say("\nmcprt: cancelled; nothing was sent to " + quoted(e.server) + "\n");
      return ElicitAnswer::cancel();
    }
    if (a.outcome == Outcome::failed) {
      say("mcprt: no valid answer for \"" + terminal_safe(name, kMaxLabelBytes) +
          "\" after " + std::to_string(kMaxAttempts) + " tries; cancelled\n");
      return ElicitAnswer::cancel();
    }
    if (a.outcome == Outcome::value) content[name] = std::move(a.value);
  }
  std::string summary = "\n";
  for (const auto& [name, value] : content.items()) {
    summary += "  " + terminal_safe(name, kMaxLabelBytes) + ": " + shown(value) + "\n";
  }
  if (content.empty()) summary += "  (no values)\n";
  say(summary);
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    say("Send this to " + quoted(e.server) + "? [A]ccept / [d]ecline / [c]ancel > ");
    auto line = read_answer();
    if (!line) break;
    const std::string a = lower(*line);
    if (a.empty() || a == "a" || a == "accept" || a == "y" || a == "yes") {
      return ElicitAnswer::accept_with(std::move(content));
    }
    if (a == "d" || a == "decline" || a == "n" || a == "no") return ElicitAnswer::decline();
    if (a == "c" || a == "cancel") break;
    say("  answer a, d or c\n");
  }
  say("mcprt: cancelled; nothing was sent to " + quoted(e.server) + "\n");
  return ElicitAnswer::cancel();
}

bool has_display() {
  const char* x = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (w && *w);
}

// The fragment as it may be shown and passed on: bytes outside printable ASCII
// percent-encoded (the URL parser drops fragments; a page may need its own).
std::string encoded_fragment(const std::string& url) {
  auto hash = url.find('#');
  if (hash == std::string::npos) return {};
  std::string out = "#";
  static const char* kHex = "0123456789ABCDEF";
  for (std::size_t i = hash + 1; i < url.size(); ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    if (c <= 0x20 || c >= 0x7F || c == '"' || c == '<' || c == '>' || c == '`') {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

ElicitAnswer run_url(const Elicitation& e) {
  say("\nmcprt: server " + quoted(e.server) + " asks you to open a web page:\n  " +
      terminal_safe(e.message, kMaxMessageBytes) + "\n");
  auto parsed = parse_http_url_checked(e.url);
  if (!parsed.ok()) {
    say("  It sent a URL that is not an http(s) URL (" + terminal_safe(parsed.error().message, kMaxLabelBytes) +
        "): " + terminal_safe(e.url, kMaxMessageBytes) + "\nmcprt: declined\n");
    return ElicitAnswer::decline();
  }
  // The serialized form: percent-encoded, so nothing in it can act on the terminal.
  const std::string url = parsed->to_string() + encoded_fragment(e.url);
  say("  URL:  " + url + "\n  Site: " + parsed->origin() + "\n");
  const bool display = has_display();
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    say(std::string(display ? "Open it in your browser" : "Will you open it") + "? [y/N] > ");
    auto line = read_answer();
    if (!line) {
      say("\nmcprt: cancelled\n");
      return ElicitAnswer::cancel();
    }
    const std::string a = lower(*line);
    if (a.empty() || a == "n" || a == "no") {
      say("mcprt: declined; the page was not opened\n");
      return ElicitAnswer::decline();
    }
    if (a == "c" || a == "cancel") {
      say("mcprt: cancelled\n");
      return ElicitAnswer::cancel();
    }
    if (a == "y" || a == "yes") {
      if (!display) {
        say("mcprt: no display ($DISPLAY, $WAYLAND_DISPLAY): open the URL above yourself\n");
      } else if (const int err = native::start_detached({"xdg-open", url}); err != 0) {
        say("mcprt: xdg-open did not start (" + std::string(std::strerror(err)) +
            "): open the URL above yourself\n");
      } else {
        say("mcprt: opened with xdg-open\n");
      }
      return ElicitAnswer::accept();
    }
    say("  answer y or n (c cancels)\n");
  }
  return ElicitAnswer::cancel();
}

void note_declined(const Elicitation& e) {
  std::string what = terminal_safe(e.message, 120, " ");
  std::fprintf(stderr,
               "mcprt: server %s asked for input (\"%s\"); declined: stdin and stderr are not "
               "both a terminal (answer it on a terminal, or pass --elicit=accept-defaults to "
               "accept a form's defaults)\n",
               quoted(e.server).c_str(), what.c_str());
  std::fflush(stderr);
}

}  // namespace

std::optional<ElicitPolicy> parse_elicit_policy(std::string_view text) {
  if (text == "ask") return ElicitPolicy::ask;
  if (text == "decline") return ElicitPolicy::decline;
  if (text == "accept-defaults") return ElicitPolicy::accept_defaults;
  return std::nullopt;
}

std::string terminal_safe(std::string_view text, std::size_t max_bytes, std::string_view indent) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    unsigned cp = 0;
    const std::size_t n = utf8_length(text, i, &cp);
    if (n == 0) {  // invalid UTF-8: one byte dropped
      ++i;
      continue;
    }
    if (cp == '\n') {
      out += '\n';
      out += indent;
    } else if (cp == '\t') {
      out += ' ';
    } else if (cp >= 0x20 && cp != 0x7F && !is_invisible_control(cp)) {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

InputHandlers cli_input_handlers(ElicitPolicy policy) {
  InputHandlers h;
  h.elicit = [policy](const Elicitation& e, ElicitReply reply) {
    switch (policy) {
      case ElicitPolicy::decline:
        return reply(ElicitAnswer::decline());
      case ElicitPolicy::accept_defaults:
        // No values of its own: the core applies the schema's defaults to the answer.
        return reply(e.mode == Elicitation::Mode::form ? ElicitAnswer::accept_with(json::object())
                                                       : ElicitAnswer::decline());
      case ElicitPolicy::ask:
        break;
    }
    if (!can_prompt()) {
      note_declined(e);
      return reply(ElicitAnswer::decline());
    }
    reply(e.mode == Elicitation::Mode::form ? run_form(e) : run_url(e));
  };
  return h;
}

bool can_prompt() { return ::isatty(STDIN_FILENO) == 1 && ::isatty(STDERR_FILENO) == 1; }

}  // namespace mcprt::cli
