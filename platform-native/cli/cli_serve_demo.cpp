// `mcprt serve-demo [--port N] [--demo-startup-delay-ms N]`: the web demo on 127.0.0.1.
// Serves the page (demo/web), the `mcprt` JS package (index.js, mcprt.mjs, mcprt.wasm and
// oauth-callback.html, the sign-in popup's redirect page, under /mcprt/) and /config.json (the demo server's URL, which the page pre-fills), and
// runs the demo MCP server as a child (`mcprt-demo-server --http 0`, with the startup
// delay when one is asked). Ctrl-C (SIGINT) or SIGTERM stops both; the child also gets
// SIGTERM if this process dies (PR_SET_PDEATHSIG).
//
// Where the files come from (first match): the option, the environment variable, the
// default relative to this binary's directory (the build-tree layout of scripts/test:
// build/native/platform-native/cli/mcprt next to build/wasm):
//   page         --web-dir DIR      MCPRT_DEMO_WEB_DIR   <bin>/../../../../demo/web
//   JS package   --js-dir DIR       MCPRT_JS_DIR         <bin>/../../../wasm/mcprt-js
//   demo server  --demo-server EXE  MCPRT_DEMO_SERVER    <bin>/../../demo/mcprt-demo-server
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_commands.hpp"

namespace mcprt::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kDemoServerStartLimitMs = 15000;
constexpr int kChildStopLimitMs = 5000;

fs::path binary_dir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

// The option, else the environment variable, else the default under the binary's dir.
fs::path resolve(const std::string& option, const char* env, const fs::path& fallback) {
  if (!option.empty()) return fs::path(option);
  if (const char* value = std::getenv(env); value && *value) return fs::path(value);
  std::error_code ec;
  auto canonical = fs::weakly_canonical(binary_dir() / fallback, ec);
  return ec ? binary_dir() / fallback : canonical;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const char* mime_type(const fs::path& path) {
  const auto ext = path.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".wasm") return "application/wasm";
  if (ext == ".json") return "application/json";
  return "text/plain; charset=utf-8";
}

// The demo MCP server as a child process; its stderr comes through a pipe, first for the
// "listening on <url>" line, then forwarded to ours so it never blocks on a full pipe.
class DemoServerChild {
 public:
  ~DemoServerChild() { stop(); }

  // Starts it and waits for its URL. Returns the URL, or an empty string with `error`.
  std::string start(const fs::path& executable, int startup_delay_ms, std::string& error) {
    int fds[2];
    if (::pipe(fds) != 0) {
      error = "cannot create a pipe for the demo server";
      return {};
    }
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
      error = "cannot start the demo server (fork failed)";
      ::close(fds[0]);
      ::close(fds[1]);
      return {};
    }
    if (pid == 0) {
      // Child: die with the parent; undo the parent's blocked stop signals (the mask
      // survives exec).
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
      sigset_t all;
      sigemptyset(&all);
      ::sigprocmask(SIG_SETMASK, &all, nullptr);
      ::dup2(fds[1], STDERR_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      const std::string exe = executable.string();
      const std::string delay = std::to_string(startup_delay_ms);
      char* argv[] = {const_cast<char*>(exe.c_str()),
                      const_cast<char*>("--http"),
                      const_cast<char*>("0"),
                      const_cast<char*>("--quiet"),
                      const_cast<char*>("--startup-delay-ms"),
                      const_cast<char*>(delay.c_str()),
                      nullptr};
      ::execv(exe.c_str(), argv);
      const std::string msg = "cannot run " + exe + "\n";
      ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
      (void)ignored;
      ::_exit(127);
    }
    ::close(fds[1]);
    pid_ = pid;
    fd_ = fds[0];

    const std::string marker = "listening on ";
    std::string buffer;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDemoServerStartLimitMs);
    for (;;) {
      auto nl = buffer.find('\n');
      while (nl != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        if (auto at = line.find(marker); at != std::string::npos) {
          start_forwarding(std::move(buffer));
          return line.substr(at + marker.size());
        }
        std::fprintf(stderr, "demo server: %s\n", line.c_str());
        nl = buffer.find('\n');
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        error = "the demo server (" + executable.string() + ") did not print its URL within " +
                std::to_string(kDemoServerStartLimitMs / 1000) + " s";
        return {};
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[512];
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n <= 0) {
        error = "the demo server (" + executable.string() + ") exited before it listened" +
                (buffer.empty() ? std::string() : ": " + buffer);
        return {};
      }
      buffer.append(chunk, static_cast<size_t>(n));
    }
  }

  // SIGTERM, then SIGKILL if it has not exited within kChildStopLimitMs; always reaped.
  void stop() {
    stopping_ = true;
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      bool reaped = false;
      for (int waited = 0; waited < kChildStopLimitMs; waited += 10) {
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          reaped = true;
          break;
        }
        ::usleep(10 * 1000);
      }
      if (!reaped) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
      pid_ = -1;
    }
    if (forwarder_.joinable()) forwarder_.join();  // the pipe reached EOF with the child
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

 private:
  void start_forwarding(std::string pending) {
    forwarder_ = std::thread([this, pending = std::move(pending)] {
      if (!pending.empty()) std::fprintf(stderr, "demo server: %s", pending.c_str());
      char chunk[512];
      for (;;) {
        ssize_t n = ::read(fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        std::fwrite(chunk, 1, static_cast<size_t>(n), stderr);
      }
      // The child ended on its own: stop everything (the main thread waits in sigwait).
      if (!stopping_) {
        std::fprintf(stderr, "mcprt serve-demo: the demo server exited\n");
        ::kill(::getpid(), SIGTERM);
      }
    });
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::thread forwarder_;
  std::atomic<bool> stopping_{false};
};

}  // namespace

int run_serve_demo(const ServeDemoOptions& options) {
  const fs::path web_dir = resolve(options.web_dir, "MCPRT_DEMO_WEB_DIR", "../../../../demo/web");
  const fs::path js_dir = resolve(options.js_dir, "MCPRT_JS_DIR", "../../../wasm/mcprt-js");
  const fs::path demo_server = resolve(options.demo_server, "MCPRT_DEMO_SERVER", "../../demo/mcprt-demo-server");

  std::error_code ec;
  if (!fs::is_regular_file(web_dir / "index.html", ec)) {
    std::fprintf(stderr, "mcprt serve-demo: no demo page at %s (set --web-dir or MCPRT_DEMO_WEB_DIR)\n",
                 (web_dir / "index.html").c_str());
    return kExitUsage;
  }
  for (const char* file : {"index.js", "mcprt.mjs", "mcprt.wasm", "oauth-callback.html"}) {
    if (!fs::is_regular_file(js_dir / file, ec)) {
      std::fprintf(stderr,
                   "mcprt serve-demo: no %s in %s (build the wasm tree's mcprt_js_package; set "
                   "--js-dir or MCPRT_JS_DIR to its mcprt-js directory)\n",
                   file, js_dir.c_str());
      return kExitUsage;
    }
  }
  if (::access(demo_server.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "mcprt serve-demo: the demo server %s is not an executable (set --demo-server or "
                 "MCPRT_DEMO_SERVER)\n",
                 demo_server.c_str());
    return kExitUsage;
  }

  // Before any thread or child exists: SIGINT/SIGTERM are taken by sigwait() below only.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  DemoServerChild child;
  std::string error;
  const std::string demo_url = child.start(demo_server, options.demo_startup_delay_ms, error);
  if (demo_url.empty()) {
    std::fprintf(stderr, "mcprt serve-demo: %s\n", error.c_str());
    return kExitFailed;
  }

  httplib::Server server;
  auto serve_file = [](const fs::path& path) {
    return [path](const httplib::Request&, httplib::Response& res) {
      auto body = read_file(path);
      if (!body) {
        res.status = 404;
        res.set_content("not found: " + path.string() + "\n", "text/plain; charset=utf-8");
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      // Sent as a sized content provider, not set_content(): httplib would otherwise
      // brotli-compress text for a browser that accepts it, at the slowest quality, which
      // costs more than 100 ms per JS file on loopback, where compression saves nothing.
      auto bytes = std::make_shared<const std::string>(std::move(*body));
      res.set_content_provider(
          bytes->size(), mime_type(path),
          [bytes](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            return sink.write(bytes->data() + offset, std::min(length, bytes->size() - offset));
          });
    };
  };
  server.Get("/", serve_file(web_dir / "index.html"));
  for (const char* file : {"index.html", "app.js", "style.css"}) {
    server.Get(std::string("/") + file, serve_file(web_dir / file));
  }
  for (const char* file : {"index.js", "index.d.ts", "mcprt.mjs", "mcprt.wasm", "oauth-callback.html"}) {
    server.Get(std::string("/mcprt/") + file, serve_file(js_dir / file));
  }
  const std::string config = nlohmann::json{{"demoServerUrl", demo_url}}.dump();
  server.Get("/config.json", [config](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(config, "application/json");
  });

  int port = options.port;
  if (port == 0) {
    port = server.bind_to_any_port("127.0.0.1");
  } else if (!server.bind_to_port("127.0.0.1", port)) {
    port = -1;
  }
  if (port <= 0) {
    std::fprintf(stderr, "mcprt serve-demo: cannot listen on 127.0.0.1:%d\n", options.port);
    return kExitFailed;
  }
  std::atomic<bool> http_done{false};
  std::thread http([&] {
    if (!server.listen_after_bind()) ::kill(::getpid(), SIGTERM);
    http_done = true;
  });
  // httplib's stop() does nothing before the accept loop runs: wait for it (bounded).
  for (int i = 0; i < 5000 && !server.is_running() && !http_done; ++i) ::usleep(1000);

  std::printf("mcprt demo page: http://127.0.0.1:%d/\n", port);
  std::printf("demo MCP server: %s\n", demo_url.c_str());
  std::printf("Ctrl-C stops both.\n");
  std::fflush(stdout);

  int sig = 0;
  ::sigwait(&stop_signals, &sig);
  server.stop();
  http.join();
  child.stop();
  std::fprintf(stderr, "mcprt serve-demo: stopped\n");
  return kExitOk;
}

}  // namespace mcprt::cli
