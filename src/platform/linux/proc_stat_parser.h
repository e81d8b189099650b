// Parser for /proc/stat: cumulative CPU time per core and for the whole machine, in jiffies
// (USER_HZ clock ticks). Called by sampler/cpu_source.cc once per poll; rates come from the
// difference of two parses.
//
// Threading: a pure function, safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stepscope {

// Cumulative time in jiffies since boot. The kernel already includes guest time in `user` and
// guest_nice in `nice`, so the two guest columns are not read (adding them would count twice).
struct CpuJiffies {
  uint64_t user = 0;
  uint64_t nice = 0;
  uint64_t system = 0;
  uint64_t idle = 0;
  uint64_t iowait = 0;
  uint64_t irq = 0;
  uint64_t softirq = 0;
  uint64_t steal = 0;

  // Sum of all eight columns: the time this CPU (or all of them) existed.
  uint64_t Total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

struct CoreJiffies {
  uint32_t core = 0;  // N of the "cpuN" line
  CpuJiffies jiffies;
};

struct ProcStat {
  CpuJiffies total;                // the "cpu" line (all online cores)
  std::vector<CoreJiffies> cores;  // "cpuN" lines in file order; offline cores are absent
};

// Parses the text of /proc/stat. Needs the "cpu" line and at least the eight columns up to
// `steal` on every cpu line (every kernel since 2.6.11); stops reading at the first line after
// the cpu block, so the long "intr" line is never scanned. Malformed or cut-short text (a cpu
// line without its newline) gives DataLoss naming the line and the problem.
StatusOr<ProcStat> ParseProcStat(std::string_view text);

}  // namespace stepscope
