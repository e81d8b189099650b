// The report model's "gpu_idle" section (docs/report-model.md): each step's time on each GPU of
// its rank split into compute, communication, memcpy and memset, and the GPU's idle time into
// host-bound, data wait, synchronization and other, from analysis::ComputeGpuIdleAttribution.
// Called by BuildReportModel; pure over the context.
#pragma once

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

nlohmann::json BuildGpuIdleSection(const ReportContext& context);

}  // namespace stepscope::report
