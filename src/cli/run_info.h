// `stepscope info RUN [--json]`: the run's facts (report/run_info.h) as JSON, or as text for
// people. Tests read the JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace stepscope::cli {

// BuildRunInfo's document as text: one labelled line per fact, every problem listed.
std::string FormatRunInfo(const nlohmann::json& info);

// `stepscope info RUN [--json]`; returns the exit code.
int InfoCommand(const std::string& run_path, bool json);

}  // namespace stepscope::cli
