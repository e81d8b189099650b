// The tables of a run's Python profiles (python detail windows, docs/detail-windows.md): one
// table per window and cProfile timer (or per sampling window), functions merged over the
// window's steps, sorted and cut. `stepscope pyprof` prints them (cli/detail_summary.h) and the
// report shows them; the documents are read through analysis/detail_window_files.h.
//
// A window whose file could not be read (DetailWindowFile::error) is left out here: the callers
// name it. Plain functions; calls may run on any thread.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/detail_window_files.h"

namespace stepscope::report {

enum class PythonProfileOrder { kSelf, kCumulative };

struct PythonProfileOptions {
  int top = 20;  // rows per table, >= 1
  PythonProfileOrder sort = PythonProfileOrder::kSelf;
};

// [{"node", "pid", "window", "file", "step_phase", "profiler": "cprofile"|"sampling", "timer",
//   "steps": [first, last] | null, "profiled_s", "functions_total", "functions": [{"name",
//   "file", "line", "self_s", "cumulative_s", "calls"|"samples"}]}]
nlohmann::json BuildPythonProfileTables(const std::vector<analysis::DetailWindowFile>& windows,
                                        const PythonProfileOptions& options);

}  // namespace stepscope::report
