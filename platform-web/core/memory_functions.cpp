// memcpy and memcmp for the web modules, eight bytes at a time.
//
// Linking with -Oz makes Emscripten (3.1.6) pick its size-optimised libc (libc-optz), whose
// memcpy and memcmp copy and compare one byte at a time. Every std::string append, key
// comparison in a std::map and copy of a message's bytes in the module goes through them:
// in the 2,000-tool tools/list (SPEC §12's tool path) they were a tenth of the time. These
// definitions take the place of libc's (which are weak), for a few hundred bytes of module.
// Built without LTO and without builtins (platform-web/CMakeLists.txt), so the compiler
// neither turns the loops below back into calls to themselves nor drops them as libcalls.

#include <cstddef>
#include <cstdint>

namespace {

// An unaligned 64-bit access (wasm loads and stores need no alignment).
using Word = std::uint64_t __attribute__((aligned(1), may_alias));
using Byte = unsigned char;

std::uint64_t load(const Byte* p) { return *reinterpret_cast<const Word*>(p); }
void store(Byte* p, std::uint64_t value) { *reinterpret_cast<Word*>(p) = value; }

}  // namespace

extern "C" void* memcpy(void* __restrict dest, const void* __restrict src, std::size_t n) {
  Byte* d = static_cast<Byte*>(dest);
  const Byte* s = static_cast<const Byte*>(src);
  for (; n >= 32; d += 32, s += 32, n -= 32) {
    const std::uint64_t a = load(s);
    const std::uint64_t b = load(s + 8);
    const std::uint64_t c = load(s + 16);
    const std::uint64_t e = load(s + 24);
    store(d, a);
    store(d + 8, b);
    store(d + 16, c);
    store(d + 24, e);
  }
  for (; n >= 8; d += 8, s += 8, n -= 8) store(d, load(s));
  for (; n > 0; --n) *d++ = *s++;
  return dest;
}

// The sign of the first differing byte, compared as unsigned char (C's memcmp).
extern "C" int memcmp(const void* a, const void* b, std::size_t n) {
  const Byte* p = static_cast<const Byte*>(a);
  const Byte* q = static_cast<const Byte*>(b);
  for (; n >= 8 && load(p) == load(q); p += 8, q += 8, n -= 8) {
  }
  for (; n > 0; ++p, ++q, --n) {
    if (*p != *q) return *p < *q ? -1 : 1;
  }
  return 0;
}
