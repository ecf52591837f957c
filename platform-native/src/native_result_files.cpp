// The native ResultSpill: full tool results in files (see mcprt/native/result_files.hpp for
// the checklist).
#include "mcprt/native/result_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcprt::native {
namespace result_files_detail {

constexpr std::size_t kMaxNamePartBytes = 40;

// A server's or tool's name as a file name part: [A-Za-z0-9_-] only, at most 40 bytes.
std::string name_part(std::string_view raw) {
  std::string out;
  for (char c : raw.substr(0, kMaxNamePartBytes)) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-';
    out += safe ? c : '_';
  }
  return out.empty() ? std::string("_") : out;
}

// "20261203T180644.123Z": fixed width, so names sort by the time they were written.
std::string utc_stamp() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(ms.count() / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[64];  // 21 bytes used; room for what gcc assumes an int field may print
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count() % 1000));
  return buf;
}

// Whether `name` is one of ours (what utc_stamp starts and ".txt" ends): the only files
// pruning may delete.
bool is_result_file_name(const std::string& name) {
  if (name.size() < 24 || name.compare(name.size() - 4, 4, ".txt") != 0) return false;
  for (int i = 0; i < 8; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return name[8] == 'T' && name[19] == 'Z' && name[20] == '-';
}

std::string system_reason(int err) { return std::strerror(err); }

// Creates `dir` 0700 (its parents with the usual mode); an existing one must be ours and is
// made private. Empty string = ready, else the reason it is not.
std::string prepare_directory(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return "cannot create " + parent.string() + ": " + ec.message();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return "cannot create " + dir + ": " + system_reason(errno);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return "cannot read " + dir + ": " + system_reason(errno);
  if (!S_ISDIR(st.st_mode)) return dir + " is not a directory";
  if (st.st_uid != ::geteuid()) return dir + " belongs to another user";
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    return "cannot make " + dir + " private: " + system_reason(errno);
  }
  return {};
}

// Writes `text` to a new file `path` (0600). Empty string = written, else the reason; a
// failed write removes what it had written.
std::string write_new_file(const std::string& path, std::string_view text, bool& exists) {
  exists = false;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    exists = errno == EEXIST;
    return "cannot create " + path + ": " + system_reason(errno);
  }
  std::size_t off = 0;
  std::string failure;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = "cannot write " + path + ": " + system_reason(errno);
      break;
    }
    off += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && failure.empty()) {
    failure = "cannot write " + path + ": " + system_reason(errno);
  }
  if (!failure.empty()) ::unlink(path.c_str());
  return failure;
}

// Deletes every file of ours older than the newest ones that fit the bounds; `keep` (the
// file just written) always stays.
void prune(const ResultFilesOptions& options, const std::string& keep) {
  DIR* d = ::opendir(options.dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (is_result_file_name(name)) names.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end(), std::greater<>());  // newest first
  std::size_t count = 0;
  std::uint64_t bytes = 0;
  bool full = false;
  for (const std::string& name : names) {
    const std::string path = options.dir + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;  // gone meanwhile
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (name == keep) {
      ++count;
      bytes += size;
      continue;
    }
    if (!full && count < options.max_files && bytes + size <= options.max_total_bytes) {
      ++count;
      bytes += size;
      continue;
    }
    full = true;  // everything older goes too, even what would still fit
    ::unlink(path.c_str());
  }
}

std::string quoted(std::string_view name) {
  return json(std::string(name)).dump(-1, ' ', true, json::error_handler_t::replace);
}

}  // namespace result_files_detail

ResultSpill make_result_files_spill(ResultFilesOptions options, Logger* logger) {
  namespace d = result_files_detail;
  auto shared = std::make_shared<const ResultFilesOptions>(std::move(options));
  return [shared, logger](const ResultSpillRequest& request) -> std::optional<std::string> {
    // One counter for the whole process: two hosts (or spills) never pick the same name.
    static std::atomic<std::uint64_t> counter{0};
    const ResultFilesOptions& o = *shared;
    auto fail = [&](const std::string& why) -> std::optional<std::string> {
      if (logger) {
        logger->warn("Server " + d::quoted(request.server) + ": the full result of tool " +
                     d::quoted(request.tool) + " (" + std::to_string(request.text.size()) +
                     " bytes) was not kept: " + why + "; the model sees it cut");
      }
      return std::nullopt;
    };
    if (o.dir.empty()) return fail("no directory for result files");
    if (std::string why = d::prepare_directory(o.dir); !why.empty()) return fail(why);
    const std::string tail =
        "-" + d::name_part(request.server) + "-" + d::name_part(request.tool) + ".txt";
    std::string why;
    for (int attempt = 0; attempt < 8; ++attempt) {
      char seq[32];
      std::snprintf(seq, sizeof seq, "-p%ld-%06llu", static_cast<long>(::getpid()),
                    static_cast<unsigned long long>(++counter));
      const std::string name = d::utc_stamp() + seq + tail;
      const std::string path = o.dir + "/" + name;
      bool exists = false;
      why = d::write_new_file(path, request.text, exists);
      if (why.empty()) {
        d::prune(o, name);
        return path;
      }
      if (!exists) break;
    }
    return fail(why);
  };
}

}  // namespace mcprt::native
