// strtod for the web build, converted by JS's Number (correctly rounded, like musl's).
//
// Why: the only strtod caller in the module is nlohmann's lexer (a JSON number with a
// fraction or an exponent), and musl's strtod works in 128-bit long double, which wasm
// emulates in software: decfloat, fmodl, scalbnl and the __*tf3 routines were 9.9 KB of
// the module. This file defines the whole family of musl's strtod.o (libc++'s locale code
// names strtof_l), and its archive comes ahead of libc in the link, so libc's is never
// linked. The float and long double forms go through the double conversion: nothing in
// the module calls them.
//
// Scope: the C decimal form — optional whitespace and sign, digits with an optional '.',
// an optional exponent — which covers every JSON number. Hexadecimal floats, "inf" and
// "nan" are not converted (0, *end = s), as nothing in the module parses them.
#include <emscripten/emscripten.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <locale.h>

EM_JS(double, mcprt_js_parse_decimal, (const char* text, int size), {
  return Number(UTF8ToString(text, size));
});

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

}  // namespace

extern "C" double strtod(const char* s, char** end) {
  const char* p = s;
  while (is_space(*p)) ++p;
  const char* start = p;
  if (*p == '+' || *p == '-') ++p;
  bool digits = false;
  bool nonzero = false;
  for (; is_digit(*p); ++p) digits = true, nonzero |= *p != '0';
  if (*p == '.') {
    for (++p; is_digit(*p); ++p) digits = true, nonzero |= *p != '0';
  }
  if (!digits) {
    if (end) *end = const_cast<char*>(s);
    return 0.0;
  }
  if (*p == 'e' || *p == 'E') {
    const char* q = p + 1;
    if (*q == '+' || *q == '-') ++q;
    if (is_digit(*q)) {
      while (is_digit(*q)) ++q;
      p = q;
    }
  }
  if (end) *end = const_cast<char*>(p);
  const double value = mcprt_js_parse_decimal(start, static_cast<int>(p - start));
  if (std::isinf(value) || (value == 0.0 && nonzero)) errno = ERANGE;
  return value;
}

extern "C" float strtof(const char* s, char** end) { return static_cast<float>(strtod(s, end)); }
extern "C" long double strtold(const char* s, char** end) { return strtod(s, end); }
extern "C" double strtod_l(const char* s, char** end, locale_t) { return strtod(s, end); }
extern "C" float strtof_l(const char* s, char** end, locale_t) { return strtof(s, end); }
extern "C" long double strtold_l(const char* s, char** end, locale_t) { return strtold(s, end); }
