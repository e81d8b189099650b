// What a run holds, as a stable JSON document (schema in docs/formats.md, "stepscope info
// --json") and as text for people. Callers: `stepscope info`; tests read the JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/run_reader.h"

namespace stepscope::cli {

inline constexpr int kRunInfoSchemaVersion = 1;

nlohmann::json BuildRunInfo(const std::string& run_path, const store::RunReader& run);
std::string FormatRunInfo(const nlohmann::json& info);

// `stepscope info RUN [--json]`; returns the exit code.
int InfoCommand(const std::string& run_path, bool json);

}  // namespace stepscope::cli
