// Reading a trace file into memory, inflating gzip when the bytes say so (magic 1f 8b, not the
// file name: PyTorch writes both .json and .json.gz). Used by the Kineto importer; the buffer
// keeps `padding_bytes` of spare capacity past size() so simdjson can read it without a copy.
//
// A gzip stream that stops early (the writer was killed) is not an error here: the bytes
// inflated so far come back with `truncated` set, and the caller decides what to keep.
// Thread-compatible; no global state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stepscope::analysis {

struct TraceBytes {
  std::string bytes;        // decompressed; capacity() >= size() + the requested padding
  bool was_gzip = false;
  bool truncated = false;   // the gzip stream ended before its trailer
  size_t compressed_bytes = 0;
};

// `name` only labels errors.
StatusOr<TraceBytes> DecodeTraceBytes(std::string_view name, std::string_view raw, size_t padding_bytes);
StatusOr<TraceBytes> ReadTraceFile(const std::string& path, size_t padding_bytes);

}  // namespace stepscope::analysis
