// gzip with zlib: decompression of the files the importers read (TF profiler traces, Kineto
// .json.gz), bounded so a hostile file cannot claim unbounded memory; compression of the trace
// files that operators detail windows write (kineto_window_writer.h).
//
// Stateless; safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stepscope::analysis {

// 4 GiB: far above any real trace, low enough that a decompression bomb fails cleanly.
inline constexpr size_t kMaxGunzippedBytes = size_t{4} << 30;

// The decompressed bytes of all gzip members in `compressed`, or DataLoss
// "<file_name>: <what zlib said> at compressed byte N; <next step>".
StatusOr<std::string> GunzipText(std::string_view compressed, std::string_view file_name,
                                 size_t max_bytes = kMaxGunzippedBytes);

// `text` as one gzip member (what `gzip` writes; `level` 1 fastest .. 9 smallest), or Internal
// "<file_name>: ..." when zlib fails.
StatusOr<std::string> GzipText(std::string_view text, std::string_view file_name, int level);

}  // namespace stepscope::analysis
