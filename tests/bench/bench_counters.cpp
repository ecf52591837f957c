#include "bench_counters.hpp"

#include <execinfo.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <fstream>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_NO_MALLOC_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define BENCH_NO_MALLOC_HOOK 1
#endif
#endif

namespace {
// initial-exec: the executable's own TLS block, so reading it never allocates (a malloc
// hook that allocated would recurse).
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_allocations = 0;
// trace_allocations: 0 off, 1 on, 2 inside a trace (backtrace() may allocate once, when it
// first loads libgcc's unwinder: that allocation is not traced).
__attribute__((tls_model("initial-exec"))) thread_local int t_trace = 0;
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_traced = 0;

void trace_allocation(std::size_t size) {
  if (t_trace != 1) return;
  t_trace = 2;
  char head[64];
  const int n = std::snprintf(head, sizeof head, "-- allocation %llu: %zu bytes\n",
                              static_cast<unsigned long long>(++t_traced), size);
  if (n > 0) (void)!::write(2, head, static_cast<std::size_t>(n));
  void* frames[48];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, 48), 2);
  t_trace = 1;
}
}  // namespace

#ifndef BENCH_NO_MALLOC_HOOK
// glibc's allocator under its internal names; the wrappers below preempt the public ones
// for the whole process (libstdc++'s operator new included).
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) {
  ++t_allocations;
  trace_allocation(n);
  return __libc_malloc(n);
}
void* calloc(std::size_t count, std::size_t size) {
  ++t_allocations;
  trace_allocation(count * size);
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t n) {
  ++t_allocations;
  trace_allocation(n);
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
void* memalign(std::size_t alignment, std::size_t n) {
  ++t_allocations;
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
  ++t_allocations;
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  ++t_allocations;
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}
#endif

namespace bench {

std::uint64_t allocations() { return t_allocations; }

void trace_allocations(bool on) {
  t_trace = on ? 1 : 0;
  t_traced = 0;
}

bool allocations_counted() {
#ifdef BENCH_NO_MALLOC_HOOK
  return false;
#else
  return true;
#endif
}

namespace {

long tracepoint_id(std::string& why) {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::ifstream f(std::string(dir) + "/events/raw_syscalls/sys_enter/id");
    long id = -1;
    if (f >> id) return id;
  }
  why = "no tracefs with events/raw_syscalls/sys_enter/id (mount -t tracefs none /sys/kernel/tracing)";
  return -1;
}

}  // namespace

SyscallCounter::SyscallCounter() {
  const long id = tracepoint_id(why_);
  if (id < 0) return;
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = static_cast<std::uint64_t>(id);
  attr.disabled = 0;
  // This thread only, any CPU.
  long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) {
    why_ = std::string("perf_event_open(raw_syscalls:sys_enter): ") + std::strerror(errno) +
           " (needs root or kernel.perf_event_paranoid <= -1)";
    return;
  }
  fd_ = static_cast<int>(fd);
}

SyscallCounter::~SyscallCounter() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t SyscallCounter::read() const {
  std::uint64_t v = 0;
  if (fd_ < 0 || ::read(fd_, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return 0;
  return v;
}

}  // namespace bench
