// Decompression of gzip files read by the importers (TF profiler traces, Kineto .json.gz) with
// zlib, bounded so a hostile file cannot claim unbounded memory.
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

}  // namespace stepscope::analysis
