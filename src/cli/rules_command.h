// `stepscope rules RUN`: evaluates the built-in rules over a finished (or still running) run
// offline with the ProfilerReport driver, writes the rules' outputs and prints a table.
//
//   stepscope rules RUN [--json] [--rule RULE.PARAM=VALUE]... [--only RULE,...] [--out DIR]
//
// Outputs go to <RUN>/rules/ (the directory the online evaluation of `stepscope run` writes, so
// the offline result replaces the live one), or to --out. Exit codes: 0 done, 1 the run could not
// be loaded or the outputs not written, 2 a usage error (unknown rule, bad parameter).
//
// Callers: main.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "rules/configured_profiler_report.h"
#include "rules/profiler_report.h"

namespace stepscope::cli {

struct RulesInvocation {
  std::string run;                     // a run directory or an imported run (LoadRun)
  bool json = false;                   // print rules.json instead of the table
  std::vector<std::string> overrides;  // "CPUBottleneck.threshold=40", in the order given
  std::string only;                    // "CPUBottleneck,StepOutlier"; empty: every rule
  std::string out;                     // empty: <run>/rules
  std::string prices;                  // RightSizing's catalogue (JSON or TOML); empty: the built-in one
  // Python files of custom rules (docs/custom-rules.md): the evaluation then runs in Python
  // (stepscope.analysis.rules_cli), which drives the same ProfilerReport with them added.
  std::vector<std::string> custom;
};

// The commands over a run (rules, summary, export) configure their rules through the one
// function the launcher's online rules use too.
using rules::MakeConfiguredProfilerReport;

// The people's table: one line per rule (rule, triggered, violations, datapoints, finding), at
// most 100 columns wide, then a status line.
std::string FormatRulesTable(const rules::ProfilerReport& report, const std::string& out_dir);

int RulesCommand(const RulesInvocation& invocation);

}  // namespace stepscope::cli
