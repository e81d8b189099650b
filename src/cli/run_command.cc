#include "cli/run_command.h"

#include <cstdio>
#include <vector>

#include "cli/report_command.h"
#include "cli/summary_command.h"
#include "launcher/run_job.h"

extern char** environ;

namespace stepscope::cli {
namespace {

void PrintError(const std::string& message) { std::fprintf(stderr, "stepscope run: %s\n", message.c_str()); }

// The report and the terminal summary of the finished run, priced with the run's --prices
// catalogue (null: the built-in example). A report that cannot be written says how to retry;
// neither changes the job's exit code.
void ReportFinishedRun(const std::string& run_dir, const std::vector<rules::InstanceType>* catalog) {
  std::string report_path;
  if (Status report = WriteRunReport(run_dir, catalog, &report_path); !report.ok()) {
    PrintError("the report was not written: " + report.message() + "; retry with `stepscope report " + run_dir + "`");
  }
  PrintRunSummary(run_dir, stderr, catalog);
}

}  // namespace

int RunCommand(const RunInvocation& invocation) {
  auto config = launcher::ResolveRunConfig({invocation.config_file, environ, invocation.flag_values});
  if (!config.ok()) return PrintError(config.status().message()), launcher::kExitUsage;
  if (invocation.command.empty()) {
    PrintError("no command given; use `stepscope run [options] -- CMD ARGS...`");
    return launcher::kExitUsage;
  }
  const std::vector<rules::InstanceType>* catalog = config->prices.empty() ? nullptr : &config->price_catalog;
  return launcher::RunJob(*config, invocation.command,
                          [catalog](const std::string& run_dir) { ReportFinishedRun(run_dir, catalog); });
}

}  // namespace stepscope::cli
