// What a run holds, as a stable JSON document (schema in docs/formats.md, "stepscope info
// --json") and as text for people. Callers: `stepscope info`, the report (its run facts); tests
// read the JSON.
//
// Counts and problems come from the analysis model (any run LoadRun reads, imported ones
// included); the store adds the per-stream table and bytes on disk of stepscope's own runs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "store/run_reader.h"

namespace stepscope::cli {

// 2: counts from the model (imported runs too), problems as objects (analysis::ProblemToJson),
// drops by cause, "source"; imported runs have null store fields.
inline constexpr int kRunInfoSchemaVersion = 2;

// `run`: the store of a stepscope run (the same path), or nullptr for an imported run.
nlohmann::json BuildRunInfo(const std::string& run_path, const analysis::Model& model, const store::RunReader* run);
std::string FormatRunInfo(const nlohmann::json& info);

// `stepscope info RUN [--json]`; returns the exit code.
int InfoCommand(const std::string& run_path, bool json);

}  // namespace stepscope::cli
