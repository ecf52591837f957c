// NativeFileStore (see mcprt/native/file_store.hpp): POSIX open/read/write/rename.

#include "mcprt/native/file_store.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "mcprt/hash.hpp"
#include "mcprt/url.hpp"

namespace mcprt::native {

namespace {

constexpr std::size_t kMaxFileName = 200;

Error io_error(const std::string& what, const std::string& path, int err) {
  return Error::make(ErrorCode::transport,
                     "Cache store: cannot " + what + " " + path + ": " + std::strerror(err));
}

Error empty_key_error() {
  return Error::make(ErrorCode::invalid_argument, "Cache store: empty key");
}

// Reads the whole file, or nullopt when it does not exist.
Result<std::optional<std::string>> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return io_error("open", path, errno);
  }
  std::string data;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return io_error("read", path, err);
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return std::optional<std::string>(std::move(data));
}

Status write_all(int fd, const std::string& data, const std::string& path) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write", path, errno);
    }
    off += static_cast<std::size_t>(n);
  }
  return {};
}

Status write_atomically(const std::string& dir, const std::string& name, const std::string& data) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Error::make(ErrorCode::transport,
                       "Cache store: cannot create directory " + dir + ": " + ec.message());
  }
  // A unique temp name per process and write; '.'-prefixed, so never an entry's name.
  static std::atomic<unsigned long long> counter{0};
  const std::string final_path = dir + "/" + name;
  const std::string temp_path = dir + "/.tmp." + std::to_string(::getpid()) + "." +
                                std::to_string(counter.fetch_add(1)) + "." + name;
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("create", temp_path, errno);
  Status s = write_all(fd, data, temp_path);
  if (::close(fd) != 0 && s) s = io_error("close", temp_path, errno);
  if (s && ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    s = io_error("replace", final_path, errno);
  }
  if (!s) ::unlink(temp_path.c_str());
  return s;
}

std::optional<std::string> env_value(const EnvLookup& env, const char* name) {
  if (env) return env(name);
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

}  // namespace

NativeFileStore::NativeFileStore(std::string dir, Executor& executor)
    : dir_(std::move(dir)), executor_(executor) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string NativeFileStore::file_name_for(const std::string& key) {
  std::string name;
  append_percent_encoded(name, key, [](unsigned char c, std::size_t i) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || (c == '.' && i > 0);
  });
  if (name.size() <= kMaxFileName) return name;
  // Keep a readable prefix (never cutting a %XX) and make it unique with the key's hash.
  std::size_t keep = kMaxFileName - 17;
  if (keep >= 1 && name[keep - 1] == '%') keep -= 1;
  else if (keep >= 2 && name[keep - 2] == '%') keep -= 2;
  static constexpr char kHex[] = "0123456789ABCDEF";
  const std::uint64_t h = fnv1a64(key);
  std::string suffix = "~";
  for (int i = 15; i >= 0; --i) suffix.push_back(kHex[(h >> (4 * i)) & 0xF]);
  return name.substr(0, keep) + suffix;
}

std::string NativeFileStore::path_for(const std::string& key) const {
  return dir_ + "/" + file_name_for(key);
}

void NativeFileStore::get(const std::string& key,
                          std::function<void(Result<std::optional<std::string>>)> done) {
  Result<std::optional<std::string>> result =
      key.empty() ? Result<std::optional<std::string>>(empty_key_error()) : read_file(path_for(key));
  executor_.post([done = std::move(done), result = std::move(result)]() mutable {
    if (done) done(std::move(result));
  });
}

void NativeFileStore::put(const std::string& key, std::string value,
                          std::function<void(Status)> done) {
  Status s = key.empty() ? Status(empty_key_error()) : write_atomically(dir_, file_name_for(key), value);
  executor_.post([done = std::move(done), s = std::move(s)]() mutable {
    if (done) done(std::move(s));
  });
}

void NativeFileStore::remove(const std::string& key, std::function<void(Status)> done) {
  Status s;
  if (key.empty()) {
    s = empty_key_error();
  } else {
    const std::string path = path_for(key);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) s = io_error("remove", path, errno);
  }
  executor_.post([done = std::move(done), s = std::move(s)]() mutable {
    if (done) done(std::move(s));
  });
}

std::string default_cache_dir(const EnvLookup& env) {
  if (auto xdg = env_value(env, "XDG_CACHE_HOME"); xdg && !xdg->empty() && (*xdg)[0] == '/') {
    return *xdg + "/mcprt";
  }
  std::optional<std::string> home = env_value(env, "HOME");
  if ((!home || home->empty()) && !env) {
    // No HOME in the environment (daemons, some containers): ask the password database.
    struct passwd pw;
    struct passwd* found = nullptr;
    char buf[4096];
    if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &found) == 0 && found && found->pw_dir) {
      home = std::string(found->pw_dir);
    }
  }
  if (!home || home->empty()) return {};
  return *home + "/.cache/mcprt";
}

}  // namespace mcprt::native
