#pragma once
// The native ResultSpill (SPEC §16 "Output caps"): the full text of a tool result over its
// cap goes to a file, and the marker the model reads names that file. NativeHost keeps
// them in <cache dir>/results/.
//
// Implements:
//  [x] one file per result, named <UTC time>-p<pid>-<counter>-<server>-<tool>.txt: the
//      server and tool names are reduced to [A-Za-z0-9_-] (40 bytes each at most), so
//      nothing a server says can steer the name out of the directory or over another file
//  [x] the directory is created 0700 (an existing one is tightened to 0700, and one that
//      belongs to another user is refused); files are created 0600 with
//      O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file, never through a link
//  [x] bounded: after each write, the newest files are kept while they number at most
//      max_files and weigh at most max_total_bytes; every older file named like ours is
//      deleted (other files in the directory are never touched); the file just written
//      always stays
//  [x] a failure (no directory, disk full, ...) leaves no partial file, warns on the
//      logger naming the server, the tool and the reason, and keeps nothing: the marker
//      then names no file
//  [ ] no locking between processes sharing the directory: each prunes by the same rule,
//      and a file another process removed meanwhile is skipped
//
// Threading: the spill runs synchronously on the tool's executor (a write of the full text,
// at most the transport's max_message_bytes).

#include <cstddef>
#include <cstdint>
#include <string>

#include "mcprt/platform/logger.hpp"
#include "mcprt/tools.hpp"

namespace mcprt::native {

struct ResultFilesOptions {
  std::string dir;  // created when the first file is written; empty = keep nothing
  std::size_t max_files = 100;
  std::uint64_t max_total_bytes = 256ull * 1024 * 1024;
};

// The spill for ToolBuildOptions::spill. `logger` (may be null) must outlive it.
ResultSpill make_result_files_spill(ResultFilesOptions options, Logger* logger);

}  // namespace mcprt::native
