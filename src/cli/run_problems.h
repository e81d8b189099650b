// What every command that reads a run says about that run's problems (analysis/problem.h):
// one stderr line per data-loss or error problem, so numbers that undercount never pass
// unremarked, whichever command printed them. Info problems are left to `stepscope info` and
// the report, which list everything.
//
// Callers: info, rules, report, summary, export, compare (once per run) and pyprof, right after
// the run is loaded; `stepscope rules --custom` prints the same lines from Python.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/problem.h"

namespace stepscope::cli {

// Writes analysis::FormatRunProblems(...) to `out` (stderr for the commands).
void PrintRunProblems(const std::vector<analysis::Problem>& problems, const std::string& prefix,
                      const std::string& run_path, FILE* out = stderr);

}  // namespace stepscope::cli
