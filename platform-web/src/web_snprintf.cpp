// snprintf and vsnprintf for the web build: the integer, character and string conversions.
//
// Why: every printf-family call in the module formats integers — nlohmann's "\u%04x" escapes
// (serializer) and "<U+%.4X>" (lexer messages), the core's "%016llx" / "%08x" hashes,
// embind's "%p" (through sprintf, whose vsprintf comes here) — but
// musl's vfprintf always carries its floating-point formatting (fmt_fp, long double
// argument handling, frexp): printf_core and its helpers were 8.2 KB of the module. This
// file defines everything Emscripten's snprintf.o and vsnprintf.o define, and its archive
// comes ahead of libc in the link, so theirs (and the vfprintf they call) are never linked.
//
// Scope: the flags "-+ #0", a width and a precision (digits or '*'), the length modifiers
// hh h l ll j z t, and the conversions d i u o x X p c s % (as musl formats them). A
// floating-point (f F e E g G a A), n or wide conversion, or an unknown one, is refused as musl refuses an
// invalid one: nothing is written for it, the result is -1 and errno is EINVAL (the
// buffer holds what came before it). Nothing in the module formats those.
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace {

// Writes into the caller's buffer, keeping room for the terminating NUL, and counts
// every character the whole result would have.
struct Sink {
  char* buf;
  std::size_t cap;  // characters that fit before the NUL
  std::size_t len = 0;

  void put(char c) {
    if (len < cap) buf[len] = c;
    ++len;
  }
  void put(const char* s, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) put(s[i]);
  }
  void pad(char c, int n) {
    for (; n > 0; --n) put(c);
  }
};

enum class Length { none, hh, h, l, ll, j, z, t };

struct Spec {
  bool left = false, plus = false, space = false, alt = false, zero = false;
  int width = 0;
  int precision = -1;  // -1: none
};

// Emits `body` (n characters) with the prefix (sign, 0x) and the padding `spec` asks for;
// `zeros` leading zeros come between the prefix and the body.
void emit(Sink& out, const Spec& spec, const char* prefix, int prefix_len, int zeros,
          const char* body, int n) {
  const int total = prefix_len + zeros + n;
  const int fill = spec.width > total ? spec.width - total : 0;
  if (!spec.left && !spec.zero) out.pad(' ', fill);
  out.put(prefix, static_cast<std::size_t>(prefix_len));
  if (!spec.left && spec.zero) out.pad('0', fill);
  out.pad('0', zeros);
  out.put(body, static_cast<std::size_t>(n));
  if (spec.left) out.pad(' ', fill);
}

void emit_integer(Sink& out, Spec spec, char conv, std::uintmax_t magnitude, bool negative) {
  const unsigned base = conv == 'o' ? 8 : (conv == 'x' || conv == 'X') ? 16 : 10;
  const char* digits = conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  char body[3 * sizeof(std::uintmax_t)];
  int n = 0;
  char* end = body + sizeof body;
  for (std::uintmax_t v = magnitude; v != 0; v /= base) end[-++n] = digits[v % base];
  if (spec.precision >= 0) spec.zero = false;  // C: a precision turns the 0 flag off
  int precision = spec.precision < 0 ? 1 : spec.precision;
  char prefix[2];
  int prefix_len = 0;
  const bool is_signed = conv == 'd' || conv == 'i';
  if (is_signed) {
    if (negative) prefix[prefix_len++] = '-';
    else if (spec.plus) prefix[prefix_len++] = '+';
    else if (spec.space) prefix[prefix_len++] = ' ';
  } else if (spec.alt && base == 16 && magnitude != 0) {
    prefix[prefix_len++] = '0';
    prefix[prefix_len++] = conv;
  } else if (spec.alt && base == 8 && precision <= n) {
    precision = n + 1;  // '#' with 'o': the first digit is a 0
  }
  const int zeros = precision > n ? precision - n : 0;
  emit(out, spec, prefix, prefix_len, zeros, end - n, n);
}

// The length of the whole result, or -1 (errno set) for a conversion out of scope.
int format(Sink& out, const char* fmt, va_list ap) {
  for (const char* p = fmt; *p; ++p) {
    if (*p != '%') {
      out.put(*p);
      continue;
    }
    ++p;
    Spec spec;
    for (;; ++p) {
      if (*p == '-') spec.left = true;
      else if (*p == '+') spec.plus = true;
      else if (*p == ' ') spec.space = true;
      else if (*p == '#') spec.alt = true;
      else if (*p == '0') spec.zero = true;
      else break;
    }
    if (*p == '*') {
      const int w = va_arg(ap, int);
      if (w < 0) spec.left = true;
      spec.width = w < 0 ? (w == INT_MIN ? INT_MAX : -w) : w;
      ++p;
    } else {
      for (; *p >= '0' && *p <= '9'; ++p) {
        if (spec.width > (INT_MAX - 9) / 10) return errno = EOVERFLOW, -1;
        spec.width = spec.width * 10 + (*p - '0');
      }
    }
    if (*p == '.') {
      ++p;
      spec.precision = 0;
      if (*p == '*') {
        const int pr = va_arg(ap, int);
        spec.precision = pr < 0 ? -1 : pr;  // C: a negative precision is taken as none
        ++p;
      } else {
        for (; *p >= '0' && *p <= '9'; ++p) {
          if (spec.precision > (INT_MAX - 9) / 10) return errno = EOVERFLOW, -1;
          spec.precision = spec.precision * 10 + (*p - '0');
        }
      }
    }
    if (spec.left) spec.zero = false;
    Length length = Length::none;
    if (*p == 'h' && p[1] == 'h') {
      length = Length::hh;
      p += 2;
    } else if (*p == 'l' && p[1] == 'l') {
      length = Length::ll;
      p += 2;
    } else if (*p == 'h' || *p == 'l' || *p == 'j' || *p == 'z' || *p == 't') {
      length = *p == 'h' ? Length::h : *p == 'l' ? Length::l : *p == 'j' ? Length::j
             : *p == 'z' ? Length::z : Length::t;
      ++p;
    }
    const char conv = *p;
    switch (conv) {
      case 'd':
      case 'i': {
        std::intmax_t v;
        switch (length) {
          case Length::hh: v = static_cast<signed char>(va_arg(ap, int)); break;
          case Length::h: v = static_cast<short>(va_arg(ap, int)); break;
          case Length::l: v = va_arg(ap, long); break;
          case Length::ll: v = va_arg(ap, long long); break;
          case Length::j: v = va_arg(ap, std::intmax_t); break;
          case Length::z: v = va_arg(ap, std::ptrdiff_t); break;  // the signed size_t
          case Length::t: v = va_arg(ap, std::ptrdiff_t); break;
          default: v = va_arg(ap, int); break;
        }
        const std::uintmax_t magnitude =
            v < 0 ? std::uintmax_t{0} - static_cast<std::uintmax_t>(v) : static_cast<std::uintmax_t>(v);
        emit_integer(out, spec, conv, magnitude, v < 0);
        break;
      }
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        std::uintmax_t v;
        switch (length) {
          case Length::hh: v = static_cast<unsigned char>(va_arg(ap, unsigned)); break;
          case Length::h: v = static_cast<unsigned short>(va_arg(ap, unsigned)); break;
          case Length::l: v = va_arg(ap, unsigned long); break;
          case Length::ll: v = va_arg(ap, unsigned long long); break;
          case Length::j: v = va_arg(ap, std::uintmax_t); break;
          case Length::z: v = va_arg(ap, std::size_t); break;
          case Length::t: v = static_cast<std::uintmax_t>(va_arg(ap, std::ptrdiff_t)); break;
          default: v = va_arg(ap, unsigned); break;
        }
        emit_integer(out, spec, conv, v, false);
        break;
      }
      case 'p': {
        // As musl: at least 2 * sizeof(void*) hex digits, "0x" unless null (embind's
        // fallback type names are "%p").
        if (length != Length::none) return errno = EINVAL, -1;
        const auto v = reinterpret_cast<std::uintptr_t>(va_arg(ap, void*));
        constexpr int kPointerDigits = 2 * sizeof(void*);
        if (spec.precision < kPointerDigits) spec.precision = kPointerDigits;
        spec.alt = true;
        emit_integer(out, spec, 'x', v, false);
        break;
      }
      case 'c': {
        if (length != Length::none) return errno = EINVAL, -1;  // %lc: wide
        const char c = static_cast<char>(va_arg(ap, int));
        spec.zero = false;
        emit(out, spec, nullptr, 0, 0, &c, 1);
        break;
      }
      case 's': {
        if (length != Length::none) return errno = EINVAL, -1;  // %ls: wide
        const char* s = va_arg(ap, const char*);
        if (!s) s = "(null)";
        int n = 0;
        while (s[n] && (spec.precision < 0 || n < spec.precision)) ++n;
        spec.zero = false;
        emit(out, spec, nullptr, 0, 0, s, n);
        break;
      }
      case '%':
        out.put('%');
        break;
      default:
        return errno = EINVAL, -1;  // floating point, %p, %n, or not a conversion
    }
    if (out.len > static_cast<std::size_t>(INT_MAX)) return errno = EOVERFLOW, -1;
  }
  return static_cast<int>(out.len);
}

// Always NUL-terminates a non-empty buffer, after a refused conversion too.
int format(char* buf, std::size_t size, const char* fmt, va_list ap) {
  Sink out{buf, size > 0 ? size - 1 : 0};
  const int n = format(out, fmt, ap);
  if (size > 0) buf[out.len < out.cap ? out.len : out.cap] = '\0';
  return n;
}

}  // namespace

extern "C" int vsnprintf(char* buf, std::size_t size, const char* fmt, va_list ap) {
  return format(buf, size, fmt, ap);
}

// Emscripten's vsnprintf.o also defines these two (its integer-only and "small" forms,
// which its vsprintf.o calls: embind's sprintf reaches them), so they are defined here
// too and that object is never linked.
extern "C" int vsniprintf(char* buf, std::size_t size, const char* fmt, va_list ap) {
  return format(buf, size, fmt, ap);
}

extern "C" int __small_vsnprintf(char* buf, std::size_t size, const char* fmt, va_list ap) {
  return format(buf, size, fmt, ap);
}

extern "C" int snprintf(char* buf, std::size_t size, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = format(buf, size, fmt, ap);
  va_end(ap);
  return n;
}
