// mcprt::parse_json: JSON text → json value, the one parser of the core and the platforms.
//
// Why not nlohmann's own parser: its lexer reads one character at a time through an input
// adapter and copies every character of every string into a token buffer, which made it
// most of the cost of a large tools/list (SPEC §12: 2,000 tools within 1.5× of Node's
// JSON.parse). This one scans strings a run at a time (a table lookup per byte, one append
// per run), converts integers itself, and builds the same DOM nlohmann would: the same
// types (unsigned for non-negative integers, integer for negative ones, float when there is
// a fraction or an exponent or the integer does not fit), the last of duplicate keys wins,
// a UTF-8 byte order mark is skipped. It accepts and refuses what nlohmann's strict parser
// does (the fuzz target fuzz_json_text checks the two against each other), but for a NUL
// byte outside a string, which ends nlohmann's input (it takes "1\0x" for 1) and is an
// invalid literal here. Its error messages use nlohmann's words, without the quoted input
// nlohmann adds ("last read").
//
// It is iterative (a stack of open containers), so a deep text costs heap, never stack.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mcprt/json_text.hpp"

#include "framing/utf8.hpp"
#include "jsonrpc/raw_json.hpp"

namespace mcprt {
namespace {

enum class Token {
  literal_true,
  literal_false,
  literal_null,
  string,
  number,
  begin_array,
  begin_object,
  end_array,
  end_object,
  name_separator,
  value_separator,
  parse_error,
  end_of_input,
  literal_or_value,  // only as what was expected
};

const char* token_name(Token t) {
  switch (t) {
    case Token::literal_true: return "true literal";
    case Token::literal_false: return "false literal";
    case Token::literal_null: return "null literal";
    case Token::string: return "string literal";
    case Token::number: return "number literal";
    case Token::begin_array: return "'['";
    case Token::begin_object: return "'{'";
    case Token::end_array: return "']'";
    case Token::end_object: return "'}'";
    case Token::name_separator: return "':'";
    case Token::value_separator: return "','";
    case Token::parse_error: return "<parse error>";
    case Token::end_of_input: return "end of input";
    case Token::literal_or_value: return "'[', '{', or a literal";
  }
  return "unknown token";
}

// Bytes a string may hold as they are: printable ASCII but the quote and the backslash.
// Control characters must be escaped; bytes from 0x80 start a UTF-8 sequence to check.
struct PlainBytes {
  bool table[256] = {};
  constexpr PlainBytes() {
    for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
  }
};
constexpr PlainBytes kPlain;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// nlohmann's message for a raw control character in a string.
const char* control_character_message(unsigned char c) {
  static const char* const kMessages[0x20] = {
#define MCPRT_CONTROL(hex, name, escape) \
  "invalid string: control character U+00" #hex " (" name ") must be escaped to \\u00" #hex escape
      MCPRT_CONTROL(00, "NUL", ""), MCPRT_CONTROL(01, "SOH", ""), MCPRT_CONTROL(02, "STX", ""),
      MCPRT_CONTROL(03, "ETX", ""), MCPRT_CONTROL(04, "EOT", ""), MCPRT_CONTROL(05, "ENQ", ""),
      MCPRT_CONTROL(06, "ACK", ""), MCPRT_CONTROL(07, "BEL", ""), MCPRT_CONTROL(08, "BS", " or \\b"),
      MCPRT_CONTROL(09, "HT", " or \\t"), MCPRT_CONTROL(0A, "LF", " or \\n"), MCPRT_CONTROL(0B, "VT", ""),
      MCPRT_CONTROL(0C, "FF", " or \\f"), MCPRT_CONTROL(0D, "CR", " or \\r"), MCPRT_CONTROL(0E, "SO", ""),
      MCPRT_CONTROL(0F, "SI", ""), MCPRT_CONTROL(10, "DLE", ""), MCPRT_CONTROL(11, "DC1", ""),
      MCPRT_CONTROL(12, "DC2", ""), MCPRT_CONTROL(13, "DC3", ""), MCPRT_CONTROL(14, "DC4", ""),
      MCPRT_CONTROL(15, "NAK", ""), MCPRT_CONTROL(16, "SYN", ""), MCPRT_CONTROL(17, "ETB", ""),
      MCPRT_CONTROL(18, "CAN", ""), MCPRT_CONTROL(19, "EM", ""), MCPRT_CONTROL(1A, "SUB", ""),
      MCPRT_CONTROL(1B, "ESC", ""), MCPRT_CONTROL(1C, "FS", ""), MCPRT_CONTROL(1D, "GS", ""),
      MCPRT_CONTROL(1E, "RS", ""), MCPRT_CONTROL(1F, "US", ""),
#undef MCPRT_CONTROL
  };
  return kMessages[c];
}

// The parser's stack of open containers: the first 32 levels without a heap allocation
// (a message's usual depth), deeper ones on the heap.
class OpenContainers {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  json* at(std::size_t i) const { return i < kInline ? inline_[i] : deeper_[i - kInline]; }
  json* back() const { return size_ <= kInline ? inline_[size_ - 1] : deeper_.back(); }
  void push_back(json* container) {
    if (size_ < kInline) {
      inline_[size_] = container;
    } else {
      deeper_.push_back(container);
    }
    ++size_;
  }
  void pop_back() {
    if (size_ > kInline) deeper_.pop_back();
    --size_;
  }

 private:
  static constexpr std::size_t kInline = 32;
  json* inline_[kInline];
  std::vector<json*> deeper_;
  std::size_t size_ = 0;
};

class JsonParser {
 public:
  JsonParser(std::string_view text, bool allow_comments, std::size_t max_depth,
             bool raw_tool_schemas = false)
      : begin_(text.data()),
        p_(begin_),
        end_(begin_ + text.size()),
        comments_(allow_comments),
        max_depth_(max_depth),
        raw_tool_schemas_(raw_tool_schemas) {}

  json parse(JsonSyntaxError* error) {
    json result;
    if (skip_bom() && parse_document(result)) return result;
    if (error) {
      error->position = error_position_;
      error->message = std::move(error_message_);
      error->too_deep = too_deep_;
    }
    return json(json::value_t::discarded);
  }

 private:
  // ------------------------------------------------------------------------------ lexer

  bool skip_bom() {
    if (p_ == end_ || static_cast<unsigned char>(*p_) != 0xEF) return true;
    if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[1]) == 0xBB &&
        static_cast<unsigned char>(p_[2]) == 0xBF) {
      p_ += 3;
      return true;
    }
    // nlohmann reads up to the byte that is not the mark's.
    std::size_t read = 1;
    if (end_ - p_ >= 2 && static_cast<unsigned char>(p_[1]) == 0xBB) read = 2;
    error_position_ = static_cast<std::size_t>(p_ - begin_) + read + 1;
    error_message_ = "syntax error while parsing value - invalid BOM; must be 0xEF 0xBB 0xBF if given";
    return false;
  }

  // A lexer error at `at` (the offending byte): the token becomes parse_error.
  Token lex_error(const char* at, const char* message) {
    lex_message_ = message;
    lex_position_ = static_cast<std::size_t>(at - begin_) + 1;
    return Token::parse_error;
  }

  // Whitespace and, when allowed, comments. False with a lexer error in a comment.
  bool skip_space(Token* error) {
    while (p_ < end_) {
      const char c = *p_;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++p_;
      } else if (c == '/' && comments_) {
        if (p_ + 1 == end_) {
          *error = lex_error(end_, "invalid comment; expecting '/' or '*' after '/'");
          return false;
        }
        if (p_[1] == '/') {
          p_ += 2;
          // A NUL byte ends it too, and is then refused as a literal.
          while (p_ < end_ && *p_ != '\n' && *p_ != '\r' && *p_ != '\0') ++p_;
          line_comment_at_end_ = p_ == end_;
        } else if (p_[1] == '*') {
          const char* q = p_ + 2;
          while (q + 1 < end_ && *q != '\0' && !(q[0] == '*' && q[1] == '/')) ++q;
          const bool nul = q < end_ && *q == '\0';
          if (nul || q + 1 >= end_) {
            *error = lex_error(nul ? q : end_, "invalid comment; missing closing '*/'");
            return false;
          }
          p_ = q + 2;
        } else {
          *error = lex_error(p_ + 1, "invalid comment; expecting '/' or '*' after '/'");
          return false;
        }
      } else {
        break;
      }
    }
    return true;
  }

  Token next() {
    Token error = Token::parse_error;
    if (!skip_space(&error)) return error;
    token_begin_ = p_;
    if (p_ == end_) return Token::end_of_input;
    switch (*p_) {
      case '[': ++p_; return Token::begin_array;
      case ']': ++p_; return Token::end_array;
      case '{': ++p_; return Token::begin_object;
      case '}': ++p_; return Token::end_object;
      case ':': ++p_; return Token::name_separator;
      case ',': ++p_; return Token::value_separator;
      case '"': ++p_; return lex_string();
      case 't': return lex_literal("true", Token::literal_true);
      case 'f': return lex_literal("false", Token::literal_false);
      case 'n': return lex_literal("null", Token::literal_null);
      case '-':
      case '0': case '1': case '2': case '3': case '4':
      case '5': case '6': case '7': case '8': case '9':
        return lex_number();
      default:
        return lex_error(p_, "invalid literal");
    }
  }

  Token lex_literal(std::string_view word, Token token) {
    for (char c : word) {
      if (p_ == end_ || *p_ != c) return lex_error(p_, "invalid literal");
      ++p_;
    }
    return token;
  }

  // [run, p_) onto string_ as one memcpy (libc++'s append of a pointer range copies a
  // character at a time).
  // While a raw schema is checked, its strings are only scanned.
  void append_run(const char* run) {
    if (!checking_) string_.append(run, static_cast<std::size_t>(p_ - run));
  }

  // Past whole 8-byte words of plain bytes (the table's), eight at a time: a word with a
  // quote, a backslash, a control character or a byte from 0x80 stops it (a few plain
  // words next to such a byte may stop it too: the byte loop after it reads them).
  void skip_plain_words() {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    while (end_ - p_ >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p_, 8);
      const std::uint64_t quote = w ^ (kOnes * '"');
      const std::uint64_t backslash = w ^ (kOnes * '\\');
      const std::uint64_t special = (w - kOnes * 0x20) | (quote - kOnes) | (backslash - kOnes);
      if (((special & ~w) | w) & kHigh) return;
      p_ += 8;
    }
  }

  // Into string_, `p_` just past the opening quote.
  Token lex_string() {
    string_.clear();
    const char* run = p_;
    while (true) {
      skip_plain_words();
      while (p_ < end_ && kPlain.table[static_cast<unsigned char>(*p_)]) ++p_;
      if (p_ == end_) return lex_error(end_, "invalid string: missing closing quote");
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        append_run(run);
        ++p_;
        return Token::string;
      }
      if (c == '\\') {
        append_run(run);
        if (const Token t = lex_escape(); t == Token::parse_error) return t;
        run = p_;
      } else if (c < 0x20) {
        return lex_error(p_, control_character_message(c));
      } else if (const char* bad = skip_utf8_sequence()) {
        return lex_error(bad, "invalid string: ill-formed UTF-8 byte");
      }
    }
  }

  // One UTF-8 sequence at p_ (a byte from 0x80) as RFC 3629 allows it: advances past it,
  // or returns the byte where it went wrong.
  const char* skip_utf8_sequence() {
    std::size_t at = 0;
    const std::size_t n =
        detail::utf8_sequence_at(std::string_view(p_, static_cast<std::size_t>(end_ - p_)), 0, &at);
    if (n == 0) return p_ + at;
    p_ += n;
    return nullptr;
  }

  // `p_` at the backslash.
  Token lex_escape() {
    ++p_;
    if (p_ == end_) return lex_error(end_, "invalid string: forbidden character after backslash");
    const char c = *p_++;
    switch (c) {
      case '"': string_ += '"'; return Token::string;
      case '\\': string_ += '\\'; return Token::string;
      case '/': string_ += '/'; return Token::string;
      case 'b': string_ += '\b'; return Token::string;
      case 'f': string_ += '\f'; return Token::string;
      case 'n': string_ += '\n'; return Token::string;
      case 'r': string_ += '\r'; return Token::string;
      case 't': string_ += '\t'; return Token::string;
      case 'u': break;
      default: return lex_error(p_ - 1, "invalid string: forbidden character after backslash");
    }
    int cp = read_hex4();
    if (cp < 0) return Token::parse_error;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return lex_error(p_ - 1, "invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
        return lex_error(p_ < end_ && *p_ == '\\' ? p_ + 1 : p_,
                         "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
      }
      p_ += 2;
      const int low = read_hex4();
      if (low < 0) return Token::parse_error;
      if (low < 0xDC00 || low > 0xDFFF) {
        return lex_error(p_ - 1, "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(string_, static_cast<std::uint32_t>(cp));
    return Token::string;
  }

  // Four hex digits at p_ (just past "\u"), or -1 with the lexer error set.
  int read_hex4() {
    int value = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = p_ < end_ ? hex_digit(*p_) : -1;
      if (d < 0) {
        lex_error(p_, "invalid string: '\\u' must be followed by 4 hex digits");
        return -1;
      }
      value = value * 16 + d;
      ++p_;
    }
    return value;
  }

  static bool is_digit(const char* p, const char* end) { return p < end && *p >= '0' && *p <= '9'; }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? into number_, as nlohmann types it.
  Token lex_number() {
    const char* const start = p_;
    overflow_ = false;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (!is_digit(p_, end_)) return lex_error(p_, "invalid number; expected digit after '-'");
    const char* const digits = p_;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (is_digit(p_, end_)) ++p_;
    }
    const char* const digits_end = p_;
    bool is_float = false;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!is_digit(p_, end_)) return lex_error(p_, "invalid number; expected digit after '.'");
      while (is_digit(p_, end_)) ++p_;
      is_float = true;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) {
        ++p_;
        if (!is_digit(p_, end_)) return lex_error(p_, "invalid number; expected digit after exponent sign");
      } else if (!is_digit(p_, end_)) {
        return lex_error(p_, "invalid number; expected '+', '-', or digit after exponent");
      }
      while (is_digit(p_, end_)) ++p_;
      is_float = true;
    }
    if (!is_float) {
      std::uint64_t value = 0;
      bool fits = true;
      for (const char* d = digits; d < digits_end; ++d) {
        const unsigned digit = static_cast<unsigned>(*d - '0');
        if (value > (UINT64_MAX - digit) / 10) {
          fits = false;
          break;
        }
        value = value * 10 + digit;
      }
      if (fits && !negative) {
        number_ = json(static_cast<json::number_unsigned_t>(value));
        return Token::number;
      }
      if (fits && value <= static_cast<std::uint64_t>(INT64_MAX) + 1) {
        number_ = json(static_cast<json::number_integer_t>(0 - value));
        return Token::number;
      }
    }
    // strtod needs a terminated copy; JSON numbers are short.
    number_text_.assign(start, p_);
    const double value = std::strtod(number_text_.c_str(), nullptr);
    // Out of range is an error only where a value is read (nlohmann's parser checks it).
    overflow_ = !std::isfinite(value);
    number_ = json(static_cast<json::number_float_t>(value));
    return Token::number;
  }

  // ----------------------------------------------------------------------------- parser

  // The bracket just read would open a level past max_depth_ (the open containers are the
  // levels around it; an empty one counts too, as it is never pushed).
  bool too_deep() const { return open_.size() >= max_depth_; }
  bool fail_too_deep() {
    too_deep_ = true;
    error_position_ = static_cast<std::size_t>(p_ - begin_) - 1;
    return false;
  }

  // A number value out of double's range (nlohmann's out_of_range error 406).
  bool fail_overflow() {
    error_position_ = static_cast<std::size_t>(p_ - begin_);
    const std::string_view number(token_begin_, static_cast<std::size_t>(p_ - token_begin_));
    error_message_ = "number overflow parsing '";
    error_message_ += number.size() <= 40 ? number : number.substr(0, 40);
    error_message_ += number.size() <= 40 ? "'" : "...'";
    return false;
  }

  bool fail(Token got, const char* context, Token expected, bool has_expected = true) {
    error_message_ = "syntax error while parsing ";
    error_message_ += context;
    error_message_ += " - ";
    if (got == Token::parse_error) {
      error_position_ = lex_position_;
      error_message_ += lex_message_;
    } else {
      // nlohmann counts the characters read: the token and, at the end, one more (two when
      // a line comment ran to the end: it read the end once already).
      error_position_ = static_cast<std::size_t>(p_ - begin_) +
                        (got == Token::end_of_input ? 1 + (line_comment_at_end_ ? 1 : 0) : 0);
      error_message_ += "unexpected ";
      error_message_ += token_name(got);
    }
    if (has_expected) {
      error_message_ += "; expected ";
      error_message_ += token_name(expected);
    }
    return false;
  }

  // The value goes into the innermost open container (under key_ in an object), or is the
  // result. Returns where it now lives.
  json* place(json&& value, json& result) {
    if (open_.empty()) {
      result = std::move(value);
      return &result;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      auto& array = *parent.get_ptr<json::array_t*>();
      array.push_back(std::move(value));
      return &array.back();
    }
    json& slot = (*parent.get_ptr<json::object_t*>())[std::move(key_)];
    slot = std::move(value);
    return &slot;
  }

  // After '{' or ',' in an object (the innermost open container): the key, the ':', and
  // the token that starts the value.
  bool object_member(Token& t) {
    if (t != Token::string) return fail(t, "object key", Token::string);
    key_ = std::move(string_);
    // result.tools[*].inputSchema: open are the message, its result, the tools array and
    // this tool.
    // The slots stay where they are when a duplicate key gives them another value, so the
    // types are checked too (a later "result" array, a later "tools" object), and a new
    // "result" object resets tools_ (a freed tools array's address, reused by another
    // container, never counts).
    capture_next_ = raw_tool_schemas_ && !checking_ && open_.size() == 4 && tools_ != nullptr &&
                    open_.at(1) == result_ && open_.at(1)->is_object() &&
                    open_.at(2) == tools_ && open_.at(2)->is_array() && key_ == "inputSchema";
    t = next();
    if (t != Token::name_separator) return fail(t, "object separator", Token::name_separator);
    t = next();
    return true;
  }

  // ---------------------------------------------------------- raw tool schemas (raw_json.hpp)

  // Whether the container about to be placed is the message's result (an object) or its
  // tools (an array in it): where placeholders may stand.
  bool is_result_member() const {
    return raw_tool_schemas_ && open_.size() == 1 && open_.back()->is_object() && key_ == "result";
  }
  bool is_tools_member() const {
    return raw_tool_schemas_ && open_.size() == 2 && result_ != nullptr &&
           open_.back() == result_ && result_->is_object() && key_ == "tools";
  }

  // What stands on the stack of open containers for one inside a raw schema: never written,
  // shared by every parser.
  static json* checked_container(json::value_t type) {
    static json array(json::value_t::array);
    static json object(json::value_t::object);
    return type == json::value_t::array ? &array : &object;
  }

  // The schema's '{' was just read: from here to its '}', values are checked, not built.
  json* start_raw_schema() {
    checking_ = true;
    raw_depth_ = open_.size();
    raw_begin_ = token_begin_;
    return checked_container(json::value_t::object);
  }
  // Its '}' was just read: the text in between goes under the key it was read for.
  void finish_raw_schema(json& result) {
    checking_ = false;
    key_ = "inputSchema";
    place(detail::make_raw_json(std::string_view(raw_begin_, static_cast<std::size_t>(p_ - raw_begin_))),
          result);
  }

  // ----------------------------------------------------------------------------- document

  bool parse_document(json& result) {
    Token t = next();
    while (true) {
      // A value starts at `t`.
      const bool capture = capture_next_;
      capture_next_ = false;
      switch (t) {
        case Token::begin_array: {
          if (too_deep()) return fail_too_deep();
          json* array;
          if (checking_) {
            array = checked_container(json::value_t::array);
          } else {
            const bool tools = is_tools_member();
            array = place(json(json::value_t::array), result);
            if (tools) tools_ = array;
          }
          t = next();
          if (t == Token::end_array) break;
          open_.push_back(array);
          continue;
        }
        case Token::begin_object: {
          if (too_deep()) return fail_too_deep();
          json* object;
          if (capture) {
            object = start_raw_schema();
          } else if (checking_) {
            object = checked_container(json::value_t::object);
          } else {
            const bool is_result = is_result_member();
            object = place(json(json::value_t::object), result);
            if (is_result) {
              // A duplicate "result" freed the first one's members.
              result_ = object;
              tools_ = nullptr;
            }
          }
          t = next();
          if (t == Token::end_object) {
            if (capture) finish_raw_schema(result);
            break;
          }
          open_.push_back(object);
          if (!object_member(t)) return false;
          continue;
        }
        case Token::string:
          if (!checking_) place(json(std::move(string_)), result);
          break;
        case Token::number:
          if (overflow_) return fail_overflow();
          if (!checking_) place(std::move(number_), result);
          break;
        case Token::literal_true:
          if (!checking_) place(json(true), result);
          break;
        case Token::literal_false:
          if (!checking_) place(json(false), result);
          break;
        case Token::literal_null:
          if (!checking_) place(json(nullptr), result);
          break;
        case Token::parse_error: return fail(t, "value", Token::parse_error, false);
        default: return fail(t, "value", Token::literal_or_value);
      }
      // A value ended: what follows it in its container (closing any that end here).
      while (true) {
        t = next();
        if (open_.empty()) {
          return t == Token::end_of_input || fail(t, "value", Token::end_of_input);
        }
        if (open_.back()->is_array()) {
          if (t == Token::value_separator) {
            t = next();
            break;
          }
          if (t != Token::end_array) return fail(t, "array", Token::end_array);
        } else {
          if (t == Token::value_separator) {
            t = next();
            if (!object_member(t)) return false;
            break;
          }
          if (t != Token::end_object) return fail(t, "object", Token::end_object);
        }
        open_.pop_back();
        if (checking_ && open_.size() == raw_depth_) finish_raw_schema(result);
      }
    }
  }

  const char* const begin_;
  const char* p_;
  const char* const end_;
  const bool comments_;
  const std::size_t max_depth_;
  const bool raw_tool_schemas_;
  bool too_deep_ = false;
  const char* token_begin_ = nullptr;
  bool line_comment_at_end_ = false;

  std::string string_;       // the last string token
  std::string key_;          // the key of the value being read in an object
  json number_;              // the last number token
  std::string number_text_;  // its text, for strtod
  OpenContainers open_;  // the containers being filled, innermost last

  // Raw tool schemas: the message's result object and its tools array (once placed), the
  // schema being checked (and the open containers around it), and stand-ins for the
  // containers inside it, which are checked, not built (checked_container: only their type
  // is read).
  json* result_ = nullptr;
  json* tools_ = nullptr;
  bool capture_next_ = false;  // the value about to be read is a tool's inputSchema
  bool checking_ = false;
  std::size_t raw_depth_ = 0;
  const char* raw_begin_ = nullptr;

  // The last lexer error.
  const char* lex_message_ = "";
  std::size_t lex_position_ = 0;
  bool overflow_ = false;  // the last number token is out of double's range

  std::size_t error_position_ = 0;
  std::string error_message_;
};

}  // namespace

json parse_json(std::string_view text, bool allow_comments, JsonSyntaxError* error,
                std::size_t max_depth) {
  return JsonParser(text, allow_comments, max_depth).parse(error);
}

json detail::parse_json_keeping_raw_tool_schemas(std::string_view text, JsonSyntaxError* error,
                                                 std::size_t max_depth) {
  return JsonParser(text, /*allow_comments=*/false, max_depth, /*raw_tool_schemas=*/true).parse(error);
}

}  // namespace mcprt
