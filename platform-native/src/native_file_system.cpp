// NativeFileSystem: POSIX reads and atomic writes. What it implements is listed in
// mcprt/native/file_system.hpp.

#include "mcprt/native/file_system.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

namespace mcprt::native {

namespace {

namespace fs = std::filesystem;

Error io_error(const std::string& path, const std::string& what, int err) {
  return Error::make(
      ErrorCode::transport,
      what + " " + path + ": " + std::error_code(err, std::system_category()).message());
}

// Unique per process and call, so concurrent writers never share a temp file.
std::string temp_path_for(const std::string& path) {
  static std::atomic<unsigned long> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

bool write_all(int fd, const std::string& content) {
  std::size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<std::optional<std::string>> NativeFileSystem::read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return std::optional<std::string>();
    return io_error(path, "cannot open", err);
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error::make(ErrorCode::transport, "cannot read " + path + ": it is a directory");
  }
  std::string out;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return io_error(path, "cannot read", err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return std::optional<std::string>(std::move(out));
}

Status NativeFileSystem::write_file(const std::string& path, const std::string& content) {
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      return Error::make(ErrorCode::transport,
                         "cannot create directory " + target.parent_path().string() + ": " + ec.message());
    }
  }
  mode_t mode = 0600;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;

  const std::string temp = temp_path_for(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return io_error(temp, "cannot create", errno);
  // open() applies the umask; keep the existing file's bits exactly.
  ::fchmod(fd, mode);
  if (!write_all(fd, content) || ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return io_error(temp, "cannot write", err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return io_error(temp, "cannot write", err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return io_error(path, "cannot replace", err);
  }
  return {};
}

}  // namespace mcprt::native
