#pragma once
// NativeFileSystem: the FileSystem seam (mcprt/platform/file_system.hpp) on POSIX files.
//
// Implements:
//  [x] read_file: whole file; nullopt when it does not exist (also a dangling symlink or a
//      missing parent); an Error naming the path for a directory or an unreadable file
//  [x] write_file: atomic — a temp file in the same directory, written, fsync'ed, then
//      rename()d over the target (readers see the old or the new content, never a mix);
//      missing parent directories are created; the temp file is removed on failure;
//      an existing file keeps its permission bits, a new one gets 0600 (config files may
//      hold secrets)
//  [ ] no locking between processes (the last writer wins)
//
// Stateless and thread-safe: any thread may call it (discovery runs on the caller's thread).

#include <string>

#include "mcprt/platform/file_system.hpp"

namespace mcprt::native {

class NativeFileSystem final : public FileSystem {
 public:
  Result<std::optional<std::string>> read_file(const std::string& path) override;
  Status write_file(const std::string& path, const std::string& content) override;
};

}  // namespace mcprt::native
