// The report model's GPU sections (docs/report-model.md "gpu_utilization", "gpu_memory"): per
// GPU of every node, the distribution of its utilization (or memory utilization, %) and its
// downsampled time series, from the model's "gpu" series; utilization rows also carry the
// GPU's "health" where NVML recorded more of it (report_sections_gpu_health.h). When no GPU was
// seen the sections say why: the nodes' NVML capability for stepscope runs, the missing series
// for imported ones.
// Called by BuildReportModel; pure over the context.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

// `dimension`: "GPUUtilization" or "GPUMemoryUtilization".
nlohmann::json BuildGpuSection(const ReportContext& context, std::string_view dimension);

}  // namespace stepscope::report
