// mcprt_bench_startup_client: the C++ side of tests/bench/bench_compare.mjs. Each mode
// does one measured thing and prints one JSON line on stdout; the harness runs the modes
// (and the TypeScript SDK clients, bench_ts_client.mjs) interleaved and compares them.
//
//   load --config FILE --cache-dir DIR [--no-cache]
//       mcprt's loader (NativeHost::load: discovery of FILE, connect every server in
//       parallel, tools/list, the startup gate) → {elapsedMs, cpuMs, tools, deferred,
//       connected, shutdownMs}. cpuMs is this process's user + sys time over the load
//       (the servers are other processes).
//   floor --server PATH [--tools T] [--init-delay-ms D]
//       the slowest server alone without any client library: spawn one server, hand-written
//       initialize, initialized, tools/list → {elapsedMs, tools}.
//   floor-all --server PATH --servers N [--tools T] [--init-delay-ms D]
//       the same for N servers at once, one thread and poll(2), no library: what starting
//       N processes costs this machine → {elapsedMs, tools, servers}.
//   rss --server PATH --servers N --tools T --step S --what client|runtime
//       idle RSS while 0, S, 2S, … N servers are connected in this one process:
//         client   a ClientSession per server over NativeProcessLauncher that listed its
//                  tools (the list is counted and dropped: what the client itself keeps);
//         runtime  the whole runtime: McpManager (connect_servers in batches of S), its
//                  tool cache (files under a temp dir) and a ToolRegistry bound through
//                  McpSession.
//       → {points: [[servers, rssKiB]...], slopeKiB} (slope: least squares over the points).

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcprt/client.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/file_store.hpp"
#include "mcprt/native/host.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "mcprt/session.hpp"
#include "mcprt/stdio_transport.hpp"

extern char** environ;

namespace {

using mcprt::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr mcprt::Millis kWaitLimit{120000};

[[noreturn]] void fail(const std::string& why) {
  std::cerr << "mcprt_bench_startup_client: " << why << "\n";
  std::exit(1);
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double cpu_ms() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto ms = [](const timeval& tv) { return double(tv.tv_sec) * 1e3 + double(tv.tv_usec) / 1e3; };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

// Resident set size of this process, KiB (/proc/self/statm: pages).
long rss_kib() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

struct Args {
  std::string mode;
  std::string config, cache_dir, server, what = "runtime";
  bool no_cache = false;
  int tools = 20, servers = 50, step = 10;
  long delay_ms = 0;
};

Args parse_args(int argc, char** argv) {
  if (argc < 2) fail("usage: mcprt_bench_startup_client load|floor|floor-all|rss [options]");
  Args a;
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--no-cache") {
      a.no_cache = true;
      continue;
    }
    if (i + 1 >= argc) fail("missing value for " + k);
    const std::string v = argv[++i];
    if (k == "--config")
      a.config = v;
    else if (k == "--cache-dir")
      a.cache_dir = v;
    else if (k == "--server")
      a.server = v;
    else if (k == "--what")
      a.what = v;
    else if (k == "--tools")
      a.tools = std::stoi(v);
    else if (k == "--servers")
      a.servers = std::stoi(v);
    else if (k == "--step")
      a.step = std::stoi(v);
    else if (k == "--init-delay-ms")
      a.delay_ms = std::stol(v);
    else
      fail("unknown option " + k);
  }
  return a;
}

// ---------------------------------------------------------------------------------- load

int run_load(const Args& a) {
  if (a.config.empty()) fail("load needs --config");
  mcprt::native::NativeHostOptions o;
  o.config_file = a.config;
  o.cache_dir = a.cache_dir;
  o.use_cache = !a.no_cache;
  o.log.level = mcprt::LogLevel::error;
  mcprt::native::NativeHost host(std::move(o));
  const double cpu0 = cpu_ms();
  const auto t0 = Clock::now();
  mcprt::LoadResult r = host.load(kWaitLimit);
  const double elapsed = ms_since(t0);
  const double cpu = cpu_ms() - cpu0;
  std::size_t deferred = 0;
  for (const auto& t : r.tools) deferred += t->info().deferred ? 1 : 0;
  const auto t1 = Clock::now();
  host.shutdown(mcprt::Millis(30000));
  json out{{"elapsedMs", elapsed},
           {"cpuMs", cpu},
           {"tools", r.tools.size()},
           {"deferred", deferred},
           {"connected", r.connected_servers.size()},
           {"errors", r.errors.size()},
           {"shutdownMs", ms_since(t1)}};
  std::cout << out.dump() << std::endl;
  return r.errors.empty() ? 0 : 1;
}

// --------------------------------------------------------------------------------- floor

bool write_all(int fd, const std::string& s) {
  const char* p = s.data();
  std::size_t n = s.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_line(int fd, std::string& buf, std::string& line) {
  for (;;) {
    auto nl = buf.find('\n');
    if (nl != std::string::npos) {
      line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      return true;
    }
    char chunk[65536];
    ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf.append(chunk, static_cast<std::size_t>(r));
  }
}

struct RawServer {
  pid_t pid = -1;
  int in = -1;   // its stdin
  int out = -1;  // its stdout
};

RawServer spawn_raw_server(const Args& a) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) fail("pipe2");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  const std::string tools = std::to_string(a.tools), delay = std::to_string(a.delay_ms);
  std::vector<char*> argv{const_cast<char*>(a.server.c_str()), const_cast<char*>("--tools"),
                          const_cast<char*>(tools.c_str()),    const_cast<char*>("--init-delay-ms"),
                          const_cast<char*>(delay.c_str()),    nullptr};
  pid_t pid = -1;
  if (int rc = ::posix_spawn(&pid, a.server.c_str(), &fa, nullptr, argv.data(), environ); rc != 0) {
    fail("cannot start " + a.server + ": " + std::strerror(rc));
  }
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  return {pid, in[1], out[0]};
}

const std::string kRawInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"0"}}})"
    "\n";
const std::string kRawList = R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                             "\n"
                             R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
                             "\n";

std::size_t listed_tools(const std::string& line) {
  const json listed = json::parse(line, nullptr, false);
  if (!listed.is_object() || !listed.contains("result")) return 0;
  return listed["result"].value("tools", json::array()).size();
}

void end_raw_server(const RawServer& s) {
  ::close(s.in);
  int status = 0;
  ::waitpid(s.pid, &status, 0);
  ::close(s.out);
}

int run_floor(const Args& a) {
  if (a.server.empty()) fail("floor needs --server");
  const auto t0 = Clock::now();
  const RawServer s = spawn_raw_server(a);
  std::string buf, line;
  if (!write_all(s.in, kRawInitialize) || !read_line(s.out, buf, line)) fail("initialize failed");
  if (!write_all(s.in, kRawList) || !read_line(s.out, buf, line)) fail("tools/list failed");
  const double elapsed = ms_since(t0);
  const std::size_t count = listed_tools(line);
  end_raw_server(s);
  std::cout << json{{"elapsedMs", elapsed}, {"tools", count}}.dump() << std::endl;
  return count == static_cast<std::size_t>(a.tools) ? 0 : 1;
}

// N servers at once on one thread: every answer is read as poll(2) reports it.
int run_floor_all(const Args& a) {
  if (a.server.empty()) fail("floor-all needs --server");
  const auto t0 = Clock::now();
  struct Conn {
    RawServer s;
    std::string buf;
    int answers = 0;  // 1 after initialize, 2 after tools/list
    std::size_t tools = 0;
  };
  std::vector<Conn> conns(static_cast<std::size_t>(a.servers));
  for (Conn& c : conns) {
    c.s = spawn_raw_server(a);
    if (!write_all(c.s.in, kRawInitialize)) fail("initialize failed");
  }
  std::size_t done = 0;
  std::vector<pollfd> fds;
  while (done < conns.size()) {
    fds.clear();
    for (const Conn& c : conns) fds.push_back({c.s.out, static_cast<short>(c.answers < 2 ? POLLIN : 0), 0});
    if (::poll(fds.data(), fds.size(), 60000) <= 0) fail("floor-all: no answer within 60 s");
    for (std::size_t i = 0; i < conns.size(); ++i) {
      Conn& c = conns[i];
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char chunk[65536];
      const ssize_t r = ::read(c.s.out, chunk, sizeof chunk);
      if (r <= 0) fail("floor-all: a server closed its stdout");
      c.buf.append(chunk, static_cast<std::size_t>(r));
      for (std::size_t nl; c.answers < 2 && (nl = c.buf.find('\n')) != std::string::npos;) {
        const std::string line = c.buf.substr(0, nl);
        c.buf.erase(0, nl + 1);
        if (++c.answers == 1) {
          if (!write_all(c.s.in, kRawList)) fail("tools/list failed");
        } else {
          c.tools = listed_tools(line);
          ++done;
        }
      }
    }
  }
  const double elapsed = ms_since(t0);
  std::size_t tools = 0;
  for (const Conn& c : conns) {
    tools += c.tools;
    end_raw_server(c.s);
  }
  std::cout << json{{"elapsedMs", elapsed}, {"tools", tools}, {"servers", conns.size()}}.dump() << std::endl;
  return tools == conns.size() * static_cast<std::size_t>(a.tools) ? 0 : 1;
}

// ----------------------------------------------------------------------------------- rss

json slope_of(const std::vector<std::pair<int, long>>& points) {
  double n = static_cast<double>(points.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) {
    sx += x;
    sy += static_cast<double>(y);
    sxx += double(x) * x;
    sxy += double(x) * static_cast<double>(y);
  }
  const double d = n * sxx - sx * sx;
  return d == 0 ? 0.0 : (n * sxy - sx * sy) / d;
}

std::vector<std::string> server_args(const Args& a) {
  return {"--tools", std::to_string(a.tools), "--init-delay-ms", "0"};
}

int run_rss_client(const Args& a) {
  mcprt::native::NativeExecutor ex;
  mcprt::native::NativeProcessLauncher launcher(ex);
  struct Conn {
    std::shared_ptr<mcprt::ClientSession> session;
    std::size_t tools = 0;
  };
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<std::pair<int, long>> points;
  points.emplace_back(0, rss_kib());
  for (int have = 0; have < a.servers;) {
    const int batch = std::min(a.step, a.servers - have);
    int pending = batch;
    for (int i = 0; i < batch; ++i) {
      mcprt::ProcessSpec spec;
      spec.command = a.server;
      spec.args = server_args(a);
      spec.label = "s" + std::to_string(have + i);
      auto stream = launcher.launch(spec);
      if (!stream.ok()) fail(stream.error().describe());
      mcprt::StdioTransportOptions to;
      to.server_name = spec.label;
      mcprt::ClientOptions co;
      co.server_name = spec.label;
      auto conn = std::make_unique<Conn>();
      conn->session = mcprt::ClientSession::create(
          ex, mcprt::make_stdio_transport(ex, std::move(stream).value(), to), co);
      Conn* c = conn.get();
      conn->session->connect([c, &pending, &a](mcprt::Status s) {
        if (!s.ok()) fail(s.error().describe());
        c->session->list_tools([c, &pending, &a](mcprt::Result<std::vector<json>> r) {
          if (!r.ok()) fail(r.error().describe());
          c->tools = r.value().size();
          if (c->tools != static_cast<std::size_t>(a.tools)) fail("unexpected tool count");
          --pending;
        });
      });
      conns.push_back(std::move(conn));
    }
    if (!ex.run_until([&] { return pending == 0; }, kWaitLimit)) fail("connect timed out");
    have += batch;
    points.emplace_back(have, rss_kib());
  }
  for (auto& c : conns) c->session->close();
  std::size_t closed = 0;
  ex.run_until([&] { return ++closed > 100; }, mcprt::Millis(200));
  json pts = json::array();
  for (const auto& [x, y] : points) pts.push_back({x, y});
  std::cout << json{{"points", pts}, {"slopeKiB", slope_of(points)}}.dump() << std::endl;
  return 0;
}

int run_rss_runtime(const Args& a) {
  const fs::path dir =
      fs::temp_directory_path() / ("mcprt-bench-rss-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};
  mcprt::native::NativeHostOptions o;
  o.cwd = dir.string();
  o.config_file = (dir / "empty.json").string();
  std::ofstream(o.config_file) << R"({"mcpServers":{}})";
  o.cache_dir = (dir / "cache").string();
  o.log.level = mcprt::LogLevel::error;
  // Every tool registered, whatever the count: with tool search on its default (automatic,
  // active over 30 tools) the registry would hold only mcp_tool_search past the first
  // servers, and the slope would leave out what registering a tool costs.
  o.tool_search.mode = mcprt::ToolSearchMode::off;
  mcprt::native::NativeHost host(std::move(o));
  host.load(kWaitLimit);
  auto manager = std::make_shared<mcprt::McpManager>(host.services(), mcprt::ManagerOptions{});
  host.session().bind(manager);

  std::vector<std::pair<int, long>> points;
  points.emplace_back(0, rss_kib());
  for (int have = 0; have < a.servers;) {
    const int batch = std::min(a.step, a.servers - have);
    std::vector<mcprt::ServerConfig> configs;
    for (int i = 0; i < batch; ++i) {
      mcprt::ServerConfig c;
      c.name = "s" + std::to_string(have + i);
      c.type = mcprt::TransportType::stdio;
      c.command = a.server;
      c.args = server_args(a);
      c.env["MCPRT_BENCH_SLOT"] = c.name;
      configs.push_back(std::move(c));
    }
    bool done = false;
    manager->connect_servers(std::move(configs), [&](mcprt::GateResult r) {
      if (!r.errors.empty()) fail(r.errors.begin()->second.describe());
      done = true;
    });
    if (!host.run_until([&] { return done; }, kWaitLimit)) fail("connect timed out");
    have += batch;
    // Let the cache writes and the tools-changed event land before measuring.
    host.run_until([] { return false; }, mcprt::Millis(50));
    if (host.registry().mcp_tool_count() != static_cast<std::size_t>(have * a.tools)) {
      fail("registry holds " + std::to_string(host.registry().mcp_tool_count()) + " tools, not " +
           std::to_string(have * a.tools));
    }
    points.emplace_back(have, rss_kib());
  }
  bool closed = false;
  manager->disconnect_all([&] { closed = true; });
  host.run_until([&] { return closed; }, mcprt::Millis(30000));
  host.session().unbind();
  json pts = json::array();
  for (const auto& [x, y] : points) pts.push_back({x, y});
  std::cout << json{{"points", pts}, {"slopeKiB", slope_of(points)}}.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  if (a.mode == "load") return run_load(a);
  if (a.mode == "floor") return run_floor(a);
  if (a.mode == "floor-all") return run_floor_all(a);
  if (a.mode == "rss") {
    if (a.server.empty()) fail("rss needs --server");
    return a.what == "client" ? run_rss_client(a) : run_rss_runtime(a);
  }
  fail("unknown mode " + a.mode);
}
