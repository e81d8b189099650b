// The report model's detail-window sections (docs/report-model.md): "python_profile" (the
// Python functions of the python windows, merged, top kMaxTableRows by self time) and
// "operators" (per operators window: its PyTorch operators from the model, top kMaxTableRows by
// CPU time). Windows are listed by the run's facts (`stepscope info --json` detail_windows);
// the Python tables are `stepscope pyprof`'s (src/cli/detail_summary.h). Imported runs have
// neither, and the sections say so. Called by BuildReportModel; pure over the context.
#pragma once

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

nlohmann::json BuildPythonProfile(const ReportContext& context);
nlohmann::json BuildOperatorsSection(const ReportContext& context);

}  // namespace stepscope::report
