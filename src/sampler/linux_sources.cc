#include "sampler/linux_sources.h"

#include "sampler/cpu_source.h"
#include "sampler/disk_source.h"
#include "sampler/memory_source.h"
#include "sampler/network_source.h"
#include "sampler/process_tree_source.h"

namespace stepscope {

std::vector<std::unique_ptr<MetricSource>> CreateLinuxSources(const FileSystem& fs,
                                                              const LinuxSourcesOptions& options) {
  std::vector<std::unique_ptr<MetricSource>> sources;
  sources.push_back(std::make_unique<CpuSource>(fs, options.proc_root));
  sources.push_back(std::make_unique<MemorySource>(fs, options.proc_root));
  sources.push_back(std::make_unique<DiskSource>(fs, options.proc_root));
  sources.push_back(std::make_unique<NetworkSource>(fs, options.proc_root));
  if (options.job_root_pid > 0) {
    sources.push_back(std::make_unique<ProcessTreeSource>(fs, options.job_root_pid, options.host,
                                                          options.proc_root));
  }
  return sources;
}

}  // namespace stepscope
