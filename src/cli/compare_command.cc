#include "cli/compare_command.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "analysis/run_loader.h"
#include "base/file_system.h"
#include "cli/run_problems.h"
#include "compare/compare_text.h"
#include "compare/run_comparison.h"
#include "rules/run_cost.h"
#include "report/report_html.h"
#include "report/report_model.h"
#include "rules/profiler_report.h"
#include "rules/instance_catalog.h"

namespace stepscope::cli {
namespace {

constexpr int kExitError = 1;

void PrintError(const std::string& message) { std::fprintf(stderr, "stepscope compare: %s\n", message.c_str()); }

}  // namespace

CLI::App* AddCompareCommand(CLI::App& app, CompareInvocation& invocation) {
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare two runs: step times per phase with a significance test, framework phases, operators, "
                 "utilization, and what each cost.");
  compare->footer(
      "Example: stepscope compare runs/big runs/small --instance-a p3.8xlarge --count-a 3\n"
      "Cost = instance count x duration x hourly price (built-in SageMaker list prices, or --prices; "
      "docs/compare.md).");
  compare->add_option("RUN_A", invocation.run_a, "The first run (the baseline)")->required();
  compare->add_option("RUN_B", invocation.run_b, "The second run")->required();
  compare->add_option("--prices", invocation.prices,
                      "Price catalogue, JSON or TOML (the format of docs/rules.md, RightSizing's catalogue)");
  compare->add_option("--instance-a", invocation.instance_a, "Instance type of RUN_A (default: its manifest's)");
  compare->add_option("--count-a", invocation.count_a, "Instance count of RUN_A (default: its manifest's)")
      ->check(CLI::Range(1, 100000));
  compare->add_option("--instance-b", invocation.instance_b, "Instance type of RUN_B (default: its manifest's)");
  compare->add_option("--count-b", invocation.count_b, "Instance count of RUN_B (default: its manifest's)")
      ->check(CLI::Range(1, 100000));
  compare->add_flag("--json", invocation.json, "Print the compare document (docs/report-model.md) instead of the table");
  compare->add_option("--html", invocation.html, "Also write the comparison as a self-contained HTML page to FILE");
  return compare;
}

int CompareCommand(const CompareInvocation& invocation) {
  std::vector<rules::InstanceType> catalog = rules::BuiltinInstanceCatalog();
  if (!invocation.prices.empty()) {
    auto loaded = rules::LoadPriceCatalog(invocation.prices);
    if (!loaded.ok()) {
      PrintError(loaded.status().message());
      return kExitError;
    }
    catalog = std::move(*loaded);
  }
  auto a = analysis::LoadRun(invocation.run_a);
  if (!a.ok()) {
    PrintError("RUN_A: " + a.status().message());
    return kExitError;
  }
  auto b = analysis::LoadRun(invocation.run_b);
  if (!b.ok()) {
    PrintError("RUN_B: " + b.status().message());
    return kExitError;
  }
  PrintRunProblems(a->problems(), "stepscope compare: RUN_A: ", invocation.run_a);
  PrintRunProblems(b->problems(), "stepscope compare: RUN_B: ", invocation.run_b);
  compare::ComparedRun run_a{&*a, invocation.run_a, invocation.instance_a, invocation.count_a, {}};
  compare::ComparedRun run_b{&*b, invocation.run_b, invocation.instance_b, invocation.count_b, {}};
  // Each run's findings, as its report shows them: rules.json when the run finished, else the
  // rules evaluated now (with the same catalogue for RightSizing).
  for (compare::ComparedRun* run : {&run_a, &run_b}) {
    std::string source;
    auto rules = report::LoadOrEvaluateRules(rules::DefaultRulesOutputDir(run->path) + "/rules.json", *run->model,
                                             &source, &catalog);
    if (rules.ok()) run->rules = std::move(*rules);
  }
  const nlohmann::json document =
      compare::BuildComparison(run_a, run_b, catalog, std::string("stepscope ") + STEPSCOPE_VERSION);
  if (!invocation.html.empty()) {
    if (Status written = report::WriteReportHtml(document, invocation.html); !written.ok()) {
      PrintError(written.message() + "; choose a writable --html path");
      return kExitError;
    }
  }
  if (invocation.json) {
    // Names in runs are untrusted bytes: replace invalid UTF-8 rather than throw.
    std::fputs((document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(), stdout);
  } else {
    std::fputs(compare::FormatComparisonText(document).c_str(), stdout);
  }
  return 0;
}

}  // namespace stepscope::cli
