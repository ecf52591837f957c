#pragma once
// MemoryFileSystem: the FileSystem seam over an in-memory map of path → content, for
// discovery and config-writer tests. Paths are compared as written (no normalisation).
//
//   MemoryFileSystem fs;
//   fs.add("/repo/.mcp.json", R"({"mcpServers": {...}})");
//   fs.fail("/home/u/.claude.json", "permission denied");   // exists but unreadable
//   DiscoveryContext ctx{.cwd = "/repo", .home = "/home/u", .fs = &fs};

#include <map>
#include <string>
#include <vector>

#include "mcprt/platform/file_system.hpp"

namespace mcprt::testing {

class MemoryFileSystem final : public FileSystem {
 public:
  void add(std::string path, std::string content);
  void remove(const std::string& path);
  // Reading `path` fails with ErrorCode::transport and this message.
  void fail(std::string path, std::string message);
  // Writing `path` fails (e.g. a read-only directory).
  void fail_writes(std::string path, std::string message);

  Result<std::optional<std::string>> read_file(const std::string& path) override;
  Status write_file(const std::string& path, const std::string& content) override;

  // The content of `path`, or nullopt.
  std::optional<std::string> content(const std::string& path) const;
  // Every path read_file was asked for, in order (also for missing files).
  const std::vector<std::string>& reads() const { return reads_; }
  std::size_t writes() const { return writes_; }

 private:
  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> read_errors_;
  std::map<std::string, std::string> write_errors_;
  std::vector<std::string> reads_;
  std::size_t writes_ = 0;
};

}  // namespace mcprt::testing
