// What a run holds, as a stable JSON document (schema in docs/formats.md, "stepscope info
// --json") and as text for people. Callers: `stepscope info`, the report (its run facts); tests
// read the JSON.
//
// Everything comes from the analysis model (any run LoadRun reads, imported ones included): a
// stepscope run's per-stream table and bytes on disk are its StreamFacts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/model.h"

namespace stepscope::cli {

// 2: counts from the model (imported runs too), problems as objects (analysis::ProblemToJson),
// drops by cause, "source"; imported runs have null store fields.
inline constexpr int kRunInfoSchemaVersion = 2;

nlohmann::json BuildRunInfo(const std::string& run_path, const analysis::Model& model);
std::string FormatRunInfo(const nlohmann::json& info);

// `stepscope info RUN [--json]`; returns the exit code.
int InfoCommand(const std::string& run_path, bool json);

}  // namespace stepscope::cli
