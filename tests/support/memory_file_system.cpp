#include "mcprt/testing/memory_file_system.hpp"

#include <utility>

namespace mcprt::testing {

void MemoryFileSystem::add(std::string path, std::string content) {
  files_[std::move(path)] = std::move(content);
}

void MemoryFileSystem::remove(const std::string& path) { files_.erase(path); }

void MemoryFileSystem::fail(std::string path, std::string message) {
  read_errors_[std::move(path)] = std::move(message);
}

void MemoryFileSystem::fail_writes(std::string path, std::string message) {
  write_errors_[std::move(path)] = std::move(message);
}

Result<std::optional<std::string>> MemoryFileSystem::read_file(const std::string& path) {
  reads_.push_back(path);
  if (auto e = read_errors_.find(path); e != read_errors_.end()) {
    return Error::make(ErrorCode::transport, path + ": " + e->second);
  }
  auto it = files_.find(path);
  if (it == files_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status MemoryFileSystem::write_file(const std::string& path, const std::string& content) {
  if (auto e = write_errors_.find(path); e != write_errors_.end()) {
    return Error::make(ErrorCode::transport, path + ": " + e->second);
  }
  ++writes_;
  files_[path] = content;
  return {};
}

std::optional<std::string> MemoryFileSystem::content(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

}  // namespace mcprt::testing
