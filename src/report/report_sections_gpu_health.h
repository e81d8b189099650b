// What the GPU section shows beyond utilization (issue 15 §3): per GPU of every node, from the
// NVML source's deeper series (docs/formats.md "System metric names"): PCIe throughput, the time
// each clock throttle reason held the clocks down, ECC errors and Xid events during the run, GPM
// SM/tensor activity, and the job's processes on the GPU with their SM utilization and memory.
// BuildGpuSection attaches it to the GPU's utilization row as "health"; a GPU without any of
// these series has none (runs recorded before them, imports, drivers that lack them).
//
// Callers: report_sections_gpu.cc. Pure over the model; reads each series once.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

// (node, GPU index) -> {"pcie_tx_bytes_per_s"?: {mean, max}, "pcie_rx_bytes_per_s"?: {...},
//   "throttle"?: {"samples", "throttled_share"?, "reasons": {reason: share}},
//   "ecc_corrected_errors"?: n, "ecc_uncorrected_errors"?: n,   (the rise over the run)
//   "xid"?: [{"t_s", "code"}] (at most 50, first ones), "xid_count"?: n,
//   "sm_activity_pct"?: {mean, max}, "tensor_activity_pct"?: {mean, max},
//   "processes"?: [{"pid", "sm_util_pct"?: {mean, max}, "memory_used_bytes"?: {mean, max}}]}
std::map<std::pair<uint32_t, int>, nlohmann::json> BuildGpuHealth(const ReportContext& context);

}  // namespace stepscope::report
