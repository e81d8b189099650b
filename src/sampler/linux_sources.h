// Builds the standard set of Linux metric sources for a SystemSampler: cpu, memory, disk,
// network and, when a job root pid is given, its process tree. Called by the CLI (which adds
// the NVML source beside them) and by benchmarks/sampler_cost_benchmark.cc.
//
// Threading: call from any thread; the sources it returns belong to one sampler thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "platform/linux/host_constants.h"
#include "sampler/metric_source.h"

namespace stepscope {

struct LinuxSourcesOptions {
  std::string proc_root = "/proc";
  int32_t job_root_pid = 0;  // > 0: add a ProcessTreeSource for this pid and its descendants
  HostConstants host;        // units of /proc/<pid>/stat; pass HostConstants::FromSysconf()
};

// In polling order: cpu, memory, disk, network, process_tree. `fs` must outlive the sources.
std::vector<std::unique_ptr<MetricSource>> CreateLinuxSources(const FileSystem& fs,
                                                              const LinuxSourcesOptions& options);

}  // namespace stepscope
