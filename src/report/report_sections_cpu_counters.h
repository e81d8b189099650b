// The CPU performance counters of one node in the report's "system_usage" section
// (docs/report-model.md): IPC over the job (and per CPU) where instructions and cycles were
// counted, the software events' rates (context switches, page faults, CPU migrations, the job's
// task-clock) where they were, and otherwise why nothing was counted (the node's
// capabilities.perf_counters). Called by BuildSystemUsage; pure over the context.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

// {"scope", "summary", "metrics": [{metric, unit, max, p99, p95, p50, min}], "per_cpu":
// [{cpu, ipc}], "why"} for node `node`; null for a node with neither perf metrics nor a manifest
// (imported data says nothing about counters; the capabilities section says so).
nlohmann::json BuildCpuCounters(const ReportContext& context, uint32_t node);

}  // namespace stepscope::report
