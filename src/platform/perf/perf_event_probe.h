// Finds out whether hardware performance counters can be read with perf_event_open here
// (often not in VMs and containers). Callers: `stepscope run`, for the capabilities recorded in
// the manifest. Threading: any thread.
#pragma once

#include <string>

namespace stepscope {

struct PerfCounterCapability {
  bool available = false;
  int paranoid_level = -1;  // /proc/sys/kernel/perf_event_paranoid, -1 if unreadable
  std::string reason;       // why not, with what to do
};

PerfCounterCapability ProbePerfCounters();

}  // namespace stepscope
