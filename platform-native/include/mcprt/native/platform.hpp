#pragma once
// NativePlatform: the native seams this folder provides, built together in the right
// order for hosts that want "just make it work" (the CLI, examples, integration tests).
//
//   auto platform = mcprt::native::make_platform();          // logger level from MCPRT_LOG_LEVEL
//   ConnectServices services;
//   services.executor = &platform->executor;
//   services.process_launcher = &platform->processes;
//   services.logger = &platform->logger;   // http_client: a NativeHttpClient next to it
//   ... start work ...
//   platform->executor.run_until([&] { return done; }, Millis(30000));
//
// Holds:
//  [x] executor   — NativeExecutor (asio); pump it yourself or start_thread()
//  [x] logger     — SpdlogLogger (stderr)
//  [x] processes  — NativeProcessLauncher (Boost.Process), logging to `logger`
//  [ ] HTTP client, key-value store, file reader, shell runner: other native files provide
//      them; a host adds them next to this object
//
// Members are declared in dependency order (the launcher refers to the executor and the
// logger), so they are destroyed in the right order too. Not movable: create it with
// make_platform() or as a local. Destroy everything that uses it (sessions, streams)
// first.

#include <memory>

#include "mcprt/native/executor.hpp"
#include "mcprt/native/logger.hpp"
#include "mcprt/native/process_launcher.hpp"

namespace mcprt::native {

struct NativePlatformOptions {
  SpdlogLoggerOptions log;
  NativeProcessOptions process;
};

struct NativePlatform {
  explicit NativePlatform(NativePlatformOptions options = {})
      : logger(std::move(options.log)), processes(executor, &logger, options.process) {}
  NativePlatform(const NativePlatform&) = delete;
  NativePlatform& operator=(const NativePlatform&) = delete;

  NativeExecutor executor;
  SpdlogLogger logger;
  NativeProcessLauncher processes;
};

inline std::unique_ptr<NativePlatform> make_platform(NativePlatformOptions options = {}) {
  return std::make_unique<NativePlatform>(std::move(options));
}

}  // namespace mcprt::native
