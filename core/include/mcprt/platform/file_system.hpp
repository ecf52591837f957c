#pragma once
// The FileSystem seam (DESIGN.md "FileReader"): how discovery reads config files and how
// `/mcp enable|disable|add|remove` rewrites the user's file. Native: std::filesystem.
// Web: none (only programmatic providers). Tests: an in-memory tree.
//
// Synchronous on purpose: discovery reads a handful of small local files once per
// (re)load, and the web build has no files at all. Never throws.

#include <optional>
#include <string>

#include "mcprt/result.hpp"

namespace mcprt {

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // The whole file. nullopt = it does not exist; an Error = it exists but cannot be read
  // (a directory, permission denied...), the message naming the path.
  virtual Result<std::optional<std::string>> read_file(const std::string& path) = 0;

  // Writes the whole file atomically (temp file in the same directory + rename), creating
  // missing parent directories.
  virtual Status write_file(const std::string& path, const std::string& content) = 0;
};

}  // namespace mcprt
