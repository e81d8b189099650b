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

void WriteReport(const std::string& run_dir, const std::vector<rules::InstanceType>* catalog) {
  std::string report_path;
  if (Status report = WriteRunReport(run_dir, catalog, &report_path); !report.ok()) {
    PrintError("the report was not written: " + report.message() + "; retry with `stepscope report " + run_dir + "`");
  }
}

// The reports this launcher writes (the node's in a job of several nodes; the job's when it is
// the only or the last node) and the terminal summary of the widest of them, priced with the
// run's --prices catalogue (null: the built-in example). A report that cannot be written says
// how to retry; neither changes the job's exit code.
void ReportFinishedRun(const launcher::FinishedRun& run, const std::vector<rules::InstanceType>* catalog) {
  if (run.node_report) WriteReport(run.node_dir, catalog);
  if (run.job_report) WriteReport(run.job_dir, catalog);
  if (!run.job_report) {
    std::string unfinished;
    for (const std::string& node : run.unfinished_nodes) unfinished += (unfinished.empty() ? "" : ", ") + node;
    std::fprintf(stderr,
                 "stepscope: the job's report and rules are written by its last node to finish (still running: %s), "
                 "or by `stepscope report %s` once they end\n",
                 unfinished.c_str(), run.job_dir.c_str());
  }
  PrintRunSummary(run.job_report ? run.job_dir : run.node_dir, stderr, catalog);
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
                          [catalog](const launcher::FinishedRun& run) { ReportFinishedRun(run, catalog); });
}

}  // namespace stepscope::cli
