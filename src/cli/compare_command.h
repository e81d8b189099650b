// `stepscope compare RUN_A RUN_B`: loads two runs (any LoadRun accepts), builds the compare
// document (compare/run_comparison.h) and prints it as a text table or as JSON (--json, the
// "compare" document of docs/report-model.md); --html FILE also writes it as a self-contained
// HTML page (report/report_html.h).
//
//   stepscope compare RUN_A RUN_B [--prices FILE] [--instance-a T --count-a N
//                                  --instance-b T --count-b N] [--json] [--html FILE]
//
// Exit codes: 0 done, 1 a run or the price file could not be read or the output not written,
// 2 a usage error. Callers: main.cc.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace stepscope::cli {

struct CompareInvocation {
  std::string run_a;
  std::string run_b;
  std::string prices;       // empty: the built-in catalogue
  std::string instance_a;   // override of the run's manifest; empty: keep
  std::string instance_b;
  int32_t count_a = 0;      // 0: keep
  int32_t count_b = 0;
  bool json = false;
  std::string html;         // empty: no HTML page
};

// Registers the `compare` subcommand on `app`, filling `invocation` when parsed.
CLI::App* AddCompareCommand(CLI::App& app, CompareInvocation& invocation);

int CompareCommand(const CompareInvocation& invocation);

}  // namespace stepscope::cli
