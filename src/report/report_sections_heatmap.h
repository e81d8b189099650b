// The utilization heatmap of the report model's "system_usage" section (docs/report-model.md):
// every CPU core and GPU of every node over the job, as SageMaker's profiler report draws it.
// Rows are devices (per node: cores by index, then GPUs by index), columns equal time buckets
// over the job, each cell the mean utilization of the device's samples in the bucket. The matrix
// is bounded (kHeatmapMaxColumns x kHeatmapMaxRows) so a 24 h run on a 96-core host stays within
// the report's size budget. Called by BuildSystemUsage; pure over the context.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

inline constexpr size_t kHeatmapMaxColumns = 300;
inline constexpr size_t kHeatmapMaxRows = 256;

// {"bucket_s", "columns", "rows": [{"node", "device": "cpu3"|"gpu0", "kind": "CPU"|"GPU",
// "values": [pct rounded to 1 %, null where the device has no sample]}], "rows_total"}; null
// when no node sampled a core or a GPU.
nlohmann::json BuildUtilizationHeatmap(const ReportContext& context);

}  // namespace stepscope::report
