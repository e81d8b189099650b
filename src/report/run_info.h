// What a run holds, as a stable JSON document (schema in docs/formats.md, "stepscope info
// --json"): job, command, how it ended, nodes, processes and streams with their drops, bytes on
// disk, detail windows and problems. `stepscope info` prints it (cli/run_info.h), the report
// embeds it as the run's facts, and the coming dashboard serves it.
//
// Everything comes from the analysis model (any run LoadRun reads, imported ones included): a
// stepscope run's per-stream table and bytes on disk are its StreamFacts; only file sizes and
// the detail windows' documents are read here. Plain functions; calls may run on any thread.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/model.h"

namespace stepscope::report {

// 2: counts from the model (imported runs too), problems as objects (analysis::ProblemToJson),
// drops by cause, "source"; imported runs have null store fields.
inline constexpr int kRunInfoSchemaVersion = 2;

nlohmann::json BuildRunInfo(const std::string& run_path, const analysis::Model& model);

}  // namespace stepscope::report
