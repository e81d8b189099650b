// Readable names for the framework phases the report shows (framework time, the causes of CPU
// and I/O bottlenecks, the activity in findings' evidence). Kineto traces and the torch
// profiler name their event categories in snake case ("cuda_runtime", "user_annotation"); the
// importers keep those as phases, unknown ones as "cat:<category>" (src/importers/kineto). The
// report says "CUDA runtime" and "annotation" instead; SageMaker's and stepscope's own phases
// (Forward, DataLoaderIter) are already readable and pass through. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace stepscope::report {

// "cuda_runtime" -> "CUDA runtime", "cat:gpu_memcpy" -> "GPU memcpy", "Forward" -> "Forward".
std::string PhaseDisplayName(std::string_view phase);

}  // namespace stepscope::report
