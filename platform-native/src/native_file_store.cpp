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

Error io_error(const std::string& label, const std::string& what, const std::string& path,
               int err) {
  return Error::make(ErrorCode::transport,
                     label + ": cannot " + what + " " + path + ": " + std::strerror(err));
}

Error empty_key_error(const std::string& label) {
  return Error::make(ErrorCode::invalid_argument, label + ": empty key");
}

// Reads the whole file, or nullopt when it does not exist.
Result<std::optional<std::string>> read_file(const std::string& label, const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return io_error(label, "open", path, errno);
  }
  std::string data;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return io_error(label, "read", path, err);
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return std::optional<std::string>(std::move(data));
}

Status write_all(const std::string& label, int fd, const std::string& data,
                 const std::string& path) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(label, "write", path, errno);
    }
    off += static_cast<std::size_t>(n);
  }
  return {};
}

Status make_directory(const std::string& dir, const NativeFileStoreOptions& options) {
  std::error_code ec;
  if (options.private_dir) {
    // The parents get the usual mode; the store's own directory is created 0700 (mkdir
    // applies the umask, which can only narrow it).
    const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (!ec && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return io_error(options.label, "create directory", dir, errno);
    }
  } else {
    std::filesystem::create_directories(dir, ec);
  }
  if (ec) {
    return Error::make(ErrorCode::transport,
                       options.label + ": cannot create directory " + dir + ": " + ec.message());
  }
  if (!options.private_dir) return {};
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return io_error(options.label, "read directory", dir, errno);
  if (!S_ISDIR(st.st_mode)) {
    return Error::make(ErrorCode::transport, options.label + ": " + dir + " is not a directory");
  }
  if (st.st_uid != ::geteuid()) {
    return Error::make(ErrorCode::transport,
                       options.label + ": " + dir + " belongs to another user (uid " +
                           std::to_string(st.st_uid) + "); refusing to use it");
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    return io_error(options.label, "make private (chmod 0700)", dir, errno);
  }
  return {};
}

// fsync of a directory makes a rename in it durable.
Status sync_directory(const std::string& label, const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(label, "open directory", dir, errno);
  Status s;
  if (::fsync(fd) != 0) s = io_error(label, "sync directory", dir, errno);
  ::close(fd);
  return s;
}

Status write_atomically(const std::string& dir, const std::string& name, const std::string& data,
                        const NativeFileStoreOptions& options) {
  if (Status s = make_directory(dir, options); !s) return s;
  const std::string& label = options.label;
  // A unique temp name per process and write; '.'-prefixed, so never an entry's name.
  static std::atomic<unsigned long long> counter{0};
  const std::string final_path = dir + "/" + name;
  const std::string temp_path = dir + "/.tmp." + std::to_string(::getpid()) + "." +
                                std::to_string(counter.fetch_add(1)) + "." + name;
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return io_error(label, "create", temp_path, errno);
  Status s = write_all(label, fd, data, temp_path);
  if (s && options.durable && ::fsync(fd) != 0) s = io_error(label, "sync", temp_path, errno);
  if (::close(fd) != 0 && s) s = io_error(label, "close", temp_path, errno);
  if (s && ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    s = io_error(label, "replace", final_path, errno);
  }
  if (!s) {
    ::unlink(temp_path.c_str());
    return s;
  }
  if (options.durable) return sync_directory(label, dir);
  return s;
}

std::optional<std::string> env_value(const EnvLookup& env, const char* name) {
  if (env) return env(name);
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

}  // namespace

NativeFileStore::NativeFileStore(std::string dir, Executor& executor,
                                 NativeFileStoreOptions options)
    : dir_(std::move(dir)), executor_(executor), options_(std::move(options)) {
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
  return dir_ + "/" + file_name_for(key) + options_.file_suffix;
}

Status NativeFileStore::ensure_dir() const { return make_directory(dir_, options_); }

void NativeFileStore::get(const std::string& key,
                          std::function<void(Result<std::optional<std::string>>)> done) {
  Result<std::optional<std::string>> result =
      key.empty() ? Result<std::optional<std::string>>(empty_key_error(options_.label))
                  : read_file(options_.label, path_for(key));
  executor_.post([done = std::move(done), result = std::move(result)]() mutable {
    if (done) done(std::move(result));
  });
}

void NativeFileStore::put(const std::string& key, std::string value,
                          std::function<void(Status)> done) {
  Status s = key.empty() ? Status(empty_key_error(options_.label))
                         : write_atomically(dir_, file_name_for(key) + options_.file_suffix, value,
                                            options_);
  executor_.post([done = std::move(done), s = std::move(s)]() mutable {
    if (done) done(std::move(s));
  });
}

void NativeFileStore::remove(const std::string& key, std::function<void(Status)> done) {
  Status s;
  if (key.empty()) {
    s = empty_key_error(options_.label);
  } else {
    const std::string path = path_for(key);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      s = io_error(options_.label, "remove", path, errno);
  }
  executor_.post([done = std::move(done), s = std::move(s)]() mutable {
    if (done) done(std::move(s));
  });
}

std::string default_cache_dir(const EnvLookup& env) {
  std::string base = xdg_base_dir("XDG_CACHE_HOME", ".cache", env);
  return base.empty() ? base : base + "/mcprt";
}

std::string xdg_base_dir(const char* xdg_var, const char* home_relative, const EnvLookup& env) {
  if (auto xdg = env_value(env, xdg_var); xdg && !xdg->empty() && (*xdg)[0] == '/') return *xdg;
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
  return *home + "/" + home_relative;
}

}  // namespace mcprt::native
