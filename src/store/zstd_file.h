// Reading a whole zstd-compressed file from a directory stepscope did not create itself (a run
// copied from elsewhere), bounded so that a hostile file cannot exhaust memory: the compressed
// bytes are read as base/file_system.h ReadRegularFile reads (regular files only, never
// blocking), and the inflated bytes stop at a cap the caller chooses.
//
// Callers: the detail-window reader (analysis/detail_window_files.h), which every reader of
// detail files (stepscope info and pyprof, the analysis loader, stepscope._core) goes through.
// Threading: none; a plain function over one file.
#pragma once

#include <cstdint>
#include <string>

#include "base/file_system.h"
#include "base/status.h"

namespace stepscope::store {

// The decompressed contents of the zstd file at `path` (one or more whole frames, with or
// without the content size in their headers). Errors name the file:
//   - it cannot be opened or is not a regular file (ReadRegularFile's errors; a symbolic link
//     with Symlinks::kRefuse);
//   - DataLoss: the bytes are not zstd, end inside a frame (truncated), or inflate past
//     `max_inflated_bytes`. A file whose compressed size is already past that bound is refused
//     before it is read.
StatusOr<std::string> ReadZstdFile(const std::string& path, Symlinks symlinks, uint64_t max_inflated_bytes);

}  // namespace stepscope::store
