// The report model's sections about stepscope itself (docs/report-model.md): "overhead" (events
// dropped, bytes on disk, the time of stepscope's own spans in the job: detail windows being
// stopped and written) and "capabilities" (per node: GPU/NVML, CUPTI, perf counters, clock, as
// the manifests say). Both come from the run's facts (`stepscope info --json`); an imported run
// was not recorded by stepscope and has neither. Called by BuildReportModel; pure.
#pragma once

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

nlohmann::json BuildOverhead(const ReportContext& context);
nlohmann::json BuildCapabilities(const ReportContext& context);

}  // namespace stepscope::report
