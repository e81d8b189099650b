#include "sampler/memory_source.h"

#include <utility>

#include "platform/linux/meminfo_parser.h"

namespace stepscope {

MemorySource::MemorySource(const FileSystem& fs, std::string proc_root)
    : fs_(fs), meminfo_path_(std::move(proc_root) + "/meminfo") {}

Status MemorySource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, fs_.ReadFile(meminfo_path_));
  STEPSCOPE_ASSIGN_OR_RETURN(Meminfo info, ParseMeminfo(text));
  // The parser guarantees total > 0 and available <= total.
  double used = static_cast<double>(info.used_bytes());
  double total = static_cast<double>(info.total_bytes);
  out.push_back({"memory/used_pct", used * 100.0 / total});
  out.push_back({"memory/used_bytes", used});
  out.push_back({"memory/total_bytes", total});
  return OkStatus();
}

}  // namespace stepscope
