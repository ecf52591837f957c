// The native DiscoveryContext: home and XDG dirs from the environment, getenv lookups,
// NativeFileSystem, toml++. What it fills is listed in mcprt/native/discovery.hpp.

#include "mcprt/native/discovery.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "mcprt/native/file_system.hpp"

namespace mcprt::native {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string home_dir() {
  std::string home = env_or_empty("HOME");
  if (!home.empty()) return home;
  // No $HOME (a service, a stripped environment): the passwd entry.
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  if (size <= 0) size = 16384;
  std::vector<char> buf(static_cast<std::size_t>(size));
  struct passwd pw {};
  struct passwd* result = nullptr;
  if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &result) == 0 && result && result->pw_dir) {
    return result->pw_dir;
  }
  return {};
}

}  // namespace

EnvLookup native_env_lookup() {
  return [](std::string_view name) -> std::optional<std::string> {
    const std::string key(name);
    const char* v = std::getenv(key.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

std::string real_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) real = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return {};
  std::string out = real.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

DiscoveryContext make_native_discovery_context(std::string cwd, FileSystem& fs, std::string app_name) {
  DiscoveryContext ctx;
  ctx.cwd = std::move(cwd);
  ctx.home = home_dir();
  // XDG: a relative XDG_CONFIG_HOME is invalid and must be ignored.
  if (std::string xdg = env_or_empty("XDG_CONFIG_HOME"); !xdg.empty() && xdg.front() == '/') {
    ctx.xdg_config_home = std::move(xdg);
  }
  ctx.fs = &fs;
  ctx.env = native_env_lookup();
  ctx.app_name = app_name;
  ctx.app_display_name = std::move(app_name);
  ctx.parse_toml = parse_toml;
  ctx.real_path = real_path;
  return ctx;
}

DiscoveryContext make_native_discovery_context(std::string cwd, std::string app_name) {
  // Stateless, so one shared instance is as good as one per context and needs no owner.
  static NativeFileSystem shared_fs;
  return make_native_discovery_context(std::move(cwd), shared_fs, std::move(app_name));
}

}  // namespace mcprt::native
