// Pairs a Kineto file's flow events into launch -> kernel (ac2g) and forward -> backward
// (fwdbwd) links between its staged events (kineto_file_parser.h), for the Kineto importer.
//
// Chrome's trace format binds a flow point to the slice that encloses it on the same track
// (pid, tid): "s" at the cudaLaunchKernel call, "f" (bp "e") at the kernel's start on its
// stream. Points are paired by (category, id); the deepest enclosing slice wins, as in Perfetto.
// A point with no partner is normal Kineto output (runtime calls that launched nothing carry a
// lone "f") and is dropped. GPU operations left without an ac2g link (traces written without
// flow events, e.g. sampled traces) are linked to the cuda_runtime/cuda_driver call with the
// same args.correlation. Pure function of its input.
#pragma once

#include <cstdint>
#include <vector>

#include "importers/kineto/kineto_file_parser.h"

namespace stepscope::analysis {

struct StagedFlow {
  uint32_t from = 0;  // indices into KinetoFile::events
  uint32_t to = 0;
  StringId category = 0;
  int64_t id = 0;
};

struct FlowLinkStats {
  int64_t paired = 0;             // s/f pairs bound to two events
  int64_t unpaired_points = 0;    // points without a partner
  int64_t unbound_points = 0;     // paired points with no enclosing slice on their track
  int64_t by_correlation = 0;     // ac2g links made from args.correlation
};

// `ac2g` is the interned "ac2g" category, used for the correlation links; `legacy_ac2g` is
// "async_cpu_to_gpu", older Kineto's name for the same flows (a GPU operation reached by either
// needs no correlation link).
std::vector<StagedFlow> LinkKinetoFlows(const KinetoFile& file, StringId ac2g, StringId legacy_ac2g,
                                        FlowLinkStats* stats);

}  // namespace stepscope::analysis
