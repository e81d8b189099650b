#include "report/phase_display_names.h"

#include <array>
#include <utility>

namespace stepscope::report {
namespace {

// Kineto's categories (libkineto's ActivityType names) and the importers' phases for them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kNames = {{
    {"cpu_op", "CPU operator"},
    {"cpu_functions", "CPU operators"},
    {"kernel", "GPU kernel"},
    {"gpu_memcpy", "GPU memcpy"},
    {"gpu_memset", "GPU memset"},
    {"cuda_runtime", "CUDA runtime"},
    {"cuda_driver", "CUDA driver"},
    {"cuda_sync", "CUDA synchronization"},
    {"user_annotation", "annotation"},
    {"gpu_user_annotation", "GPU annotation"},
    {"python_function", "Python function"},
    {"cpu_instant_event", "CPU instant event"},
    {"ac2g", "CPU-to-GPU flow"},
    {"fwdbwd", "forward-backward link"},
    {"overhead", "profiler overhead"},
    {"mtia_runtime", "MTIA runtime"},
    {"privateuse1_runtime", "accelerator runtime"},
}};

}  // namespace

std::string PhaseDisplayName(std::string_view phase) {
  // The Kineto importer keeps a category it does not bucket as "cat:<category>".
  if (phase.starts_with("cat:")) phase.remove_prefix(4);
  for (const auto& [category, name] : kNames) {
    if (phase == category) return std::string(name);
  }
  return std::string(phase);
}

}  // namespace stepscope::report
