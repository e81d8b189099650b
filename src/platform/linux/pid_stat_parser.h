// Parser for /proc/<pid>/stat: the identity, parent, CPU time and resident memory of one
// process. Called by process_tree.cc and sampler/process_tree_source.cc for every process on
// every poll, so it does not allocate beyond `comm` (short enough for std::string's inline
// buffer: the kernel caps it at 15 bytes for user processes).
//
// Threading: a pure function, safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stepscope {

struct PidStat {
  int32_t pid = 0;
  std::string comm;  // executable name as the kernel keeps it; may contain spaces and ')'
  char state = '?';  // R, S, D, Z, T, t, X, I, ...
  int32_t ppid = 0;
  uint64_t utime_ticks = 0;       // user CPU time, in clock ticks (sysconf(_SC_CLK_TCK))
  uint64_t stime_ticks = 0;       // kernel CPU time, in clock ticks
  uint64_t start_time_ticks = 0;  // process start, clock ticks after boot; (pid, start) is unique
  uint64_t rss_pages = 0;         // resident set, in pages (sysconf(_SC_PAGESIZE))
};

// Parses the text of one /proc/<pid>/stat. `comm` is taken between the first '(' and the LAST
// ')', since a process may name itself "a b) (c"; the fields after it are read by position.
// Text without "(comm)", a non-numeric field or fewer fields than rss (field 24) gives
// DataLoss naming the problem.
StatusOr<PidStat> ParsePidStat(std::string_view text);

}  // namespace stepscope
