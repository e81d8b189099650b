// Host constants the /proc numbers are expressed in: clock ticks per second (jiffies in
// /proc/<pid>/stat) and the page size (rss). Read once with sysconf() by whoever builds the
// sources (the CLI, the benchmark) and passed in, so the sources stay deterministic in tests.
//
// Threading: plain values; FromSysconf() is safe from any thread.
#pragma once

#include <cstdint>

namespace stepscope {

struct HostConstants {
  int64_t clock_ticks_per_s = 100;  // USER_HZ; 100 on every mainstream Linux architecture
  int64_t page_size_bytes = 4096;

  // sysconf(_SC_CLK_TCK) and sysconf(_SC_PAGESIZE); keeps the defaults above if either fails.
  static HostConstants FromSysconf();
};

}  // namespace stepscope
