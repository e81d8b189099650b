// Parser for /proc/meminfo: host memory total and available. Called by
// sampler/memory_source.cc once per poll.
//
// Threading: a pure function, safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace stepscope {

struct Meminfo {
  uint64_t total_bytes = 0;      // MemTotal
  uint64_t available_bytes = 0;  // MemAvailable (or the estimate below)
  // True on kernels older than 3.14, which lack MemAvailable: available_bytes is then
  // MemFree + Buffers + Cached, the estimate `free` used before the kernel computed one.
  bool available_estimated = false;

  // What the job and everything else on the host cannot get back without swapping.
  uint64_t used_bytes() const { return total_bytes - available_bytes; }
};

// Parses the text of /proc/meminfo ("Key:   value kB" lines; values in KiB). Needs MemTotal
// (> 0) and MemAvailable, or MemFree, Buffers and Cached. Unneeded lines are not checked.
// Missing keys, a non-numeric value, a unit other than kB, or available > total give DataLoss
// naming the key.
StatusOr<Meminfo> ParseMeminfo(std::string_view text);

}  // namespace stepscope
