#pragma once
// Per-call counters for the benchmarks (SPEC §12: "≤ 3 syscalls and ≤ 12 heap allocations
// per call"), read around a measured block on the calling thread:
//
//  - heap allocations: bench_counters.cpp replaces malloc, calloc, realloc and the aligned
//    forms in the benchmark binary (only there: libmcprt is not touched) with counting
//    wrappers over glibc's own (__libc_malloc ...). Every C++ allocation goes through
//    them (libstdc++'s operator new calls malloc). The count is per thread. Not available
//    in sanitizer builds (the sanitizer owns malloc): allocations_counted() is false.
//  - syscalls: a perf counter on the tracepoint raw_syscalls:sys_enter for this thread
//    (perf_event_open; needs root or kernel.perf_event_paranoid ≤ -1, and tracefs at
//    /sys/kernel/tracing or /sys/kernel/debug/tracing). The same number, from outside:
//    `perf stat -e raw_syscalls:sys_enter --per-thread -p PID`. When it cannot be opened
//    the reason is printed and the column is absent.

#include <cstdint>
#include <string>

namespace bench {

// Allocations made by this thread so far (malloc, calloc, realloc, aligned forms).
std::uint64_t allocations();
bool allocations_counted();

// While on, every allocation of this thread writes "-- allocation N: B bytes" and its
// backtrace (glibc's backtrace_symbols_fd: "binary(+0xOFFSET)" frames, which
// `addr2line -f -C -i -e BINARY OFFSET` names) to stderr, allocating nothing itself.
void trace_allocations(bool on);

class SyscallCounter {
 public:
  SyscallCounter();
  ~SyscallCounter();
  SyscallCounter(const SyscallCounter&) = delete;
  SyscallCounter& operator=(const SyscallCounter&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string& why_not() const { return why_; }
  // Syscalls this thread entered so far, this read included.
  std::uint64_t read() const;

 private:
  int fd_ = -1;
  std::string why_;
};

}  // namespace bench
