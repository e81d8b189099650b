// Whether a node has CPU to spare for more data-loader workers, and who uses it when it has
// not: the host's total CPU (cpu/total/util_pct) against the job's own processes
// (process/cpu_pct, % of one core) over the windows seen so far. Advice to add workers on a host
// whose CPU is already full would send the user the wrong way; on a host that other processes
// fill, the first thing to say is that they do (issue 13 §3).
//
// Callers: the data-loading rules (dataloader_starvation_rule.cc, dataloader_rule.cc), which add
// every window and ask at report time. Not thread-safe (one rule object).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "rules/rule.h"

namespace stepscope::rules {

// Mean host CPU at or above which a node has no core to spare.
inline constexpr double kBusyHostCpuPct = 90;

struct CpuHeadroom {
  double host_busy_pct = -1;  // mean of the host's total CPU utilization, -1 when not sampled
  double job_cpu_pct = -1;    // mean CPU of the job's process tree, % of one core; -1 when unknown
  int64_t cores = 0;          // the node's cores, 0 when unknown

  bool known() const { return host_busy_pct >= 0; }
  // The host's CPU is (nearly) full: more workers would wait for the same cores.
  bool full() const { return known() && host_busy_pct >= kBusyHostCpuPct; }
  // Full, and the job's processes account for less than half of the busy CPU: other processes
  // fill the host.
  bool others_fill_it() const;
  // "the host's CPU is 100 % busy and this job uses 37.5 % of one core (of 2 cores)".
  std::string Describe() const;
};

// When `cpu` leaves no core for more data-loader workers, replaces `finding`'s recommendation
// and next step with what fits (other processes fill the host; or there is no CPU to spare) and
// returns true; otherwise leaves the finding alone and returns false. `node_name` is the host.
bool AdviseOnAFullHost(const CpuHeadroom& cpu, const std::string& node_name, Finding& finding);

class CpuHeadroomTally {
 public:
  // Adds the window's samples of every node.
  void Add(const Window& window);
  CpuHeadroom Of(uint32_t node) const;

 private:
  struct Sums {
    double host = 0, job = 0;
    int64_t host_samples = 0, job_samples = 0;
    int64_t cores = 0;
  };
  std::map<uint32_t, Sums> nodes_;
};

}  // namespace stepscope::rules
