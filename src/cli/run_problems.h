// What every command that reads a run says about that run's problems (analysis/problem.h):
// one stderr line per data-loss or error problem, so numbers that undercount never pass
// unremarked, whichever command printed them. Info problems are left to `stepscope info` and
// the report, which list everything.
//
// Callers: info, rules, report, summary, export, compare (once per run) and pyprof, right after
// the run is loaded. The list is bounded: a run with thousands of damaged frames must not bury
// the command's own output.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/problem.h"

namespace stepscope::cli {

// Problem lines shown before the rest are counted.
inline constexpr size_t kShownProblemLines = 10;

// The lines to print, each ending in '\n': "<prefix>data loss: <sentence> [<name>]" for each
// always-shown problem, in order, at most kShownProblemLines of them; then, when more remain,
// "<prefix>... and N more problems; `stepscope info <run_path>` lists them". `prefix` names the
// command (and the run, where a command reads two): "stepscope compare: RUN_A: ".
std::string FormatRunProblems(const std::vector<analysis::Problem>& problems, const std::string& prefix,
                              const std::string& run_path);

// Writes FormatRunProblems(...) to `out` (stderr for the commands).
void PrintRunProblems(const std::vector<analysis::Problem>& problems, const std::string& prefix,
                      const std::string& run_path, FILE* out = stderr);

}  // namespace stepscope::cli
