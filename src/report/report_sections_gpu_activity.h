// The report model's "gpu_activity" and "annotations" sections (docs/report-model.md): what each
// GPU spent its active span on (kernels, memcpy, memset, sync, idle), its memory operations by
// kind and its kernels by precision, from analysis::ComputeGpuActivity; and the duration
// distribution of every user annotation, from analysis::ComputeAnnotationDurations. The GPU page
// of the dashboard and the report draw them as they are. Called by BuildReportModel; pure over
// the context.
#pragma once

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

nlohmann::json BuildGpuActivitySection(const ReportContext& context);
nlohmann::json BuildAnnotationsSection(const ReportContext& context);

}  // namespace stepscope::report
