// The `stepscope` command: parses the command line with CLI11 and dispatches to subcommands.
// Usage errors are one line on stderr naming the problem and where to look, exit code 2.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/alerts_command.h"
#include "cli/compare_command.h"
#include "cli/ctl_command.h"
#include "cli/detail_summary.h"
#include "cli/report_command.h"
#include "cli/export_command.h"
#include "cli/import_command.h"
#include "cli/run_command.h"
#include "cli/run_info.h"
#include "cli/rules_command.h"
#include "cli/serve_command.h"
#include "cli/summary_command.h"

namespace {

constexpr int kExitUsage = 2;

// CLI11's messages can span lines; a user gets one.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// For `stepscope run`, the job's command starts after `--` or at the first argument that is
// neither one of run's options nor an option's value; everything from there belongs to the
// job, flags included. Returns that index (argc when there is none).
int FindRunCommandStart(int argc, char** argv) {
  static const std::vector<std::string> kValueOptions = {"--out", "--job", "--node", "--interval", "--config",
                                                         "--detailed-steps", "--python-steps", "--dataloader-steps",
                                                         "--gpu-steps",
                                                         "--python-profiler", "--rule", "--instance", "--count",
                                                         "--prices", "--gpu-tracing", "--metrics-port",
                                                         "--metrics-host"};
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return i;
    if (arg.empty() || arg[0] != '-') return i;
    if (std::find(kValueOptions.begin(), kValueOptions.end(), arg) != kValueOptions.end()) ++i;
  }
  return argc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stepscope: a profiler for ML training jobs. It runs your job, records what it did, "
               "and tells you what holds it back.",
               "stepscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", STEPSCOPE_VERSION);

  stepscope::cli::RunInvocation run;
  std::string out, job, node, interval, detailed_steps, python_steps, dataloader_steps, gpu_steps, python_profiler;
  bool no_detail = false, no_torch = false;
  CLI::App* run_app = app.add_subcommand(
      "run", "Run CMD with recording on, sample system metrics, write the run directory. "
             "Exits with CMD's exit code (128+signal if it was killed).");
  run_app->footer("Usage: stepscope run [OPTIONS] -- CMD [ARGS...]\nExample: stepscope run --interval 100ms -- python3 train.py --epochs 3");
  run_app->add_option("--out", out, "Root directory of runs (default ./stepscope-runs)");
  run_app->add_option("--job", job, "Job name (default <script>-<UTC time>); the run is <out>/<job>");
  run_app->add_option("--node", node, "Node id (default: the host name), e.g. algo-1");
  run_app->add_option("--interval", interval, "System sampling interval, 10ms to 60s (default 500ms)");
  run_app->add_option("--config", run.config_file, "Config file (.toml or .json) with the settings of docs/user-guide.md");
  run_app->add_option("--detailed-steps", detailed_steps, "Operator profiling window START:COUNT (default 5:1), or none");
  run_app->add_option("--python-steps", python_steps, "Python profiling window START:COUNT (default 9:3), or none");
  run_app->add_option("--dataloader-steps", dataloader_steps, "Data-loader profiling window START:COUNT (default 7:1), or none");
  run_app->add_option("--gpu-steps", gpu_steps,
                      "GPU window START:COUNT: every kind of GPU activity (memsets, syncs, every CUDA call, NVTX) "
                      "for those steps (default none)");
  run_app->add_option("--python-profiler", python_profiler, "Profiler of the python windows: cprofile (default) or sampling");
  run_app->add_flag("--no-detail", no_detail, "No detail windows (the --*-steps flags still add theirs)");
  run_app->add_flag("--no-torch", no_torch, "Leave PyTorch uninstrumented (sets STEPSCOPE_TORCH=0 for the job)");

  stepscope::cli::CtlInvocation ctl;
  CLI::App* ctl_app = app.add_subcommand(
      "ctl", "Change a running job's plan without restarting it: the sampling interval (applied within about a "
             "second) or detail windows (applied at the job's next step).");
  ctl_app->footer("Example: stepscope ctl stepscope-runs/train-20261121T101500Z --python-steps 300:2 --interval 100ms");
  ctl_app->add_option("RUN", ctl.run, "Run directory (<out>/<job>) or one node directory in it")->required();
  ctl_app->add_option("--node", ctl.node, "Only this node (default: every node of the job)");
  ctl_app->add_option("--interval", ctl.interval, "New system sampling interval, 10ms to 60s");
  ctl_app->add_option("--detailed-steps", ctl.detailed_steps, "Operator profiling window START:COUNT");
  ctl_app->add_option("--python-steps", ctl.python_steps, "Python profiling window START:COUNT");
  ctl_app->add_option("--dataloader-steps", ctl.dataloader_steps, "Data-loader profiling window START:COUNT");
  ctl_app->add_option("--gpu-steps", ctl.gpu_steps, "GPU window START:COUNT (every kind of GPU activity)");

  std::string info_run;
  bool info_json = false;
  CLI::App* info_app = app.add_subcommand("info", "Show what a run holds: job, timing, how it ended, processes, "
                                                  "event counts, drops, bytes on disk, capabilities.");
  info_app->add_option("RUN", info_run, "Run directory (<out>/<job>) or one node directory in it")->required();
  info_app->add_flag("--json", info_json, "Machine-readable output (schema: docs/formats.md)");

  stepscope::cli::PyprofOptions pyprof;
  std::string pyprof_sort = "self";
  CLI::App* pyprof_app = app.add_subcommand("pyprof", "Show the top Python functions of a run's python detail "
                                                      "windows, by self or cumulative time.");
  pyprof_app->add_option("RUN", pyprof.run, "Run directory (<out>/<job>) or one node directory in it")->required();
  pyprof_app->add_option("--top", pyprof.top, "Functions per table (default 20)")->check(CLI::Range(1, 1000000));
  pyprof_app->add_option("--sort", pyprof_sort, "self (default) or cumulative")->check(CLI::IsMember({"self", "cumulative"}));
  pyprof_app->add_flag("--json", pyprof.json, "Machine-readable output (schema: docs/detail-windows.md)");

  // Commands over the analysis core (import, rules, ...) register here, each in its own file.
  // [analysis commands: registration]
  stepscope::cli::ReportOptions report_options;
  CLI::App* report_app = app.add_subcommand(
      "report", "Write a run's report: one self-contained HTML file (default <RUN>/report.html), or its JSON model.");
  report_app->add_option("RUN", report_options.run, "Run directory (<out>/<job>), an imported run, or one node directory")
      ->required();
  report_app->add_option("-o,--out", report_options.out, "Output file (default <RUN>/report.html; stdout with --json)");
  report_app->add_flag("--json", report_options.json, "Write the report model (docs/report-model.md) instead of HTML");
  report_app->add_option("--prices", report_options.prices,
                         "Instance price catalogue (JSON or TOML, docs/rules.md) for the run's cost and RightSizing "
                         "(default: the built-in one)");
  stepscope::cli::ExportInvocation export_invocation;
  CLI::App* export_app = app.add_subcommand(
      "export", "Write a run as a Chrome trace (Perfetto UI), a SQLite database or CSV tables (docs/exports.md).");
  export_app->footer("Example: stepscope export stepscope-runs/train-20261121T101500Z --format sqlite -o train.sqlite");
  export_app->add_option("RUN", export_invocation.run, "Run directory (<out>/<job>), an imported run, or one node directory")
      ->required();
  export_app->add_option("--format", export_invocation.format, "chrome, sqlite or csv")
      ->required()->check(CLI::IsMember({"chrome", "sqlite", "csv"}));
  export_app->add_option("-o,--out", export_invocation.out,
                         "Output file (chrome, sqlite) or directory (csv); default <RUN>/export/<job>.trace.json, "
                         "<job>.sqlite or csv/");
  export_app->add_option("--from", export_invocation.range.from,
                         "chrome: start of the slice, a time since the run's start (90s, 2h) or a UTC time "
                         "(2026-11-21T10:15:00Z)");
  export_app->add_option("--to", export_invocation.range.to, "chrome: end of the slice, in the same forms as --from");
  export_app->add_option("--steps", export_invocation.range.steps,
                         "chrome: the TRAIN steps A:B (both included) and everything that ran during them");
  std::string run_instance, run_instance_count;
  run_app->add_option("--instance", run_instance, "Instance type the job runs on, e.g. p3.2xlarge (for compare's cost)");
  run_app->add_option("--count", run_instance_count, "How many instances the job runs on (for compare's cost)");
  std::string run_gpu_tracing;
  std::string run_metrics_port, run_metrics_host;
  run_app->add_option("--metrics-port", run_metrics_port,
                      "Serve Prometheus metrics on this port while the job runs (0: any free port; default off; "
                      "docs/prometheus.md)");
  run_app->add_option("--metrics-host", run_metrics_host,
                      "The address the metrics endpoint binds (default 127.0.0.1)");
  run_app->add_option("--gpu-tracing", run_gpu_tracing,
                      "What the CUPTI tracer records on NVIDIA GPUs: whole-job (kernels, copies, launches; default), "
                      "everything (also memsets, syncs, every CUDA call, NVTX) or off");
  std::string run_prices;
  run_app->add_option("--prices", run_prices,
                      "Instance price catalogue (JSON or TOML, docs/rules.md) for the end-of-run report's cost and "
                      "RightSizing; checked before the job starts");
  stepscope::cli::CompareInvocation compare_invocation;
  CLI::App* compare_app = stepscope::cli::AddCompareCommand(app, compare_invocation);
  std::string summary_run;
  CLI::App* summary_app = app.add_subcommand(
      "summary", "Print a run's summary: job timing, step times per node and phase, top findings, overhead.");
  summary_app->add_option("RUN", summary_run, "Run directory (<out>/<job>), an imported run, or one node directory")
      ->required();
  stepscope::cli::RulesInvocation rules_invocation;
  CLI::App* rules_app = app.add_subcommand(
      "rules", "Evaluate the rules (SageMaker's set and stepscope's own) over a run; writes <RUN>/rules/ and "
               "prints what they found.");
  rules_app->footer("Example: stepscope rules stepscope-runs/train-20261121T101500Z --rule CPUBottleneck.threshold=40");
  rules_app->add_option("RUN", rules_invocation.run, "Run directory (<out>/<job>), an imported run, or one node directory")
      ->required();
  rules_app->add_flag("--json", rules_invocation.json, "Print rules.json instead of the table (schema: docs/rules.md)");
  rules_app->add_option("--rule", rules_invocation.overrides,
                        "RULE.PARAM=VALUE, e.g. CPUBottleneck.threshold=40 or scan_interval_us=30000000 (repeatable)")
      ->allow_extra_args(false);
  rules_app->add_option("--only", rules_invocation.only, "Only these rules, comma-separated (default: all)");
  rules_app->add_option("--out", rules_invocation.out, "Output directory (default <RUN>/rules)");
  rules_app->add_option("--prices", rules_invocation.prices,
                        "Instance price catalogue for RightSizing (JSON or TOML, docs/rules.md; default: the built-in one)");
  rules_app->add_option("--custom", rules_invocation.custom,
                        "A Python file of custom rules (docs/custom-rules.md); repeatable");
  stepscope::cli::AlertsInvocation alerts;
  CLI::App* alerts_app = app.add_subcommand(
      "alerts", "Write Prometheus alerting rules equivalent to the built-in system rules, over the series of "
                "stepscope run --metrics-port (docs/prometheus.md).");
  alerts_app->footer("Example: stepscope alerts --rule LowGPUUtilization.threshold_p95=60 -o stepscope-alerts.yml");
  alerts_app->add_option("--rule", alerts.overrides, "RULE.PARAM=VALUE, as for stepscope rules (repeatable)")
      ->allow_extra_args(false);
  alerts_app->add_option("--config", alerts.config, "A run config file (TOML or JSON) whose rules table applies first");
  alerts_app->add_option("--interval", alerts.interval,
                         "The jobs' sampling interval (stepscope run --interval; default the config's, else 500ms)");
  alerts_app->add_option("--scrape-interval", alerts.scrape_interval, "Prometheus' scrape interval (default 15s)");
  alerts_app->add_option("-o,--out", alerts.out, "Output file (default stdout)");
  std::vector<std::string> run_rules;
  run_app->add_option("--rule", run_rules, "RULE.PARAM=VALUE for the rules evaluated during the run (repeatable)")
      ->allow_extra_args(false);
  stepscope::cli::ImportInvocation import_sagemaker, import_kineto;
  import_sagemaker.format = "sagemaker";
  import_kineto.format = "kineto";
  CLI::App* import_app = app.add_subcommand("import", "Import another profiler's output as a stepscope run "
                                                      "(<out>/<job>/manifest.json + model.stepscope).");
  import_app->require_subcommand(1);
  CLI::App* import_sagemaker_app = import_app->add_subcommand("sagemaker", "SageMaker Debugger profiler output");
  import_sagemaker_app->add_option("DIR", import_sagemaker.inputs, "The profiler-output directory")->required()->expected(1);
  import_sagemaker_app->add_option("--out", import_sagemaker.out, "Root directory of runs (default ./stepscope-runs)");
  import_sagemaker_app->add_option("--job", import_sagemaker.job, "Run name (default <DIR basename>-import)");
  CLI::App* import_kineto_app = import_app->add_subcommand("kineto", "PyTorch profiler (Kineto) traces");
  import_kineto_app->add_option("FILE", import_kineto.inputs, "*.pt.trace.json[.gz] files, one per rank")->required();
  import_kineto_app->add_option("--out", import_kineto.out, "Root directory of runs (default ./stepscope-runs)");
  import_kineto_app->add_option("--job", import_kineto.job, "Run name (default <first FILE basename>-import)");

  stepscope::cli::ServeInvocation serve;
  CLI::App* serve_app = app.add_subcommand(
      "serve", "Serve the live dashboard over the runs under ROOT (or one run): job list, overview, nodes, "
               "control. Binds 127.0.0.1 unless told otherwise; any other address needs a token.");
  serve_app->footer("Example: stepscope serve stepscope-runs --port 8421   (then open the URL it prints)");
  serve_app->add_option("ROOT_OR_RUN", serve.root, "Root directory of runs, or one run (default ./stepscope-runs)");
  serve_app->add_option("--host", serve.host, "Address to listen on (default 127.0.0.1; others require a token)");
  serve_app->add_option("--port", serve.port, "Port to listen on (default 8421; 0: any free port)");
  serve_app->add_option("--token", serve.token,
                        "Token every request must carry (default: generated when --host is not a loopback address)");

  if (argc > 1 && argv[1][0] != '-') {
    std::string command = argv[1], known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      found = found || sub->get_name() == command;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::fprintf(stderr, "stepscope: unknown command '%s'; commands: %s (see `stepscope --help`)\n",
                   command.c_str(), known.c_str());
      return kExitUsage;
    }
  }
  int parsed_argc = argc;
  if (argc > 1 && std::string(argv[1]) == "run") {
    parsed_argc = FindRunCommandStart(argc, argv);
    for (int i = parsed_argc; i < argc; ++i) run.command.emplace_back(argv[i]);
    if (!run.command.empty() && run.command.front() == "--") run.command.erase(run.command.begin());
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = "stepscope";
    for (CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    std::fprintf(stderr, "%s: %s; see `%s --help`\n", where.c_str(), OneLine(e.what()).c_str(), where.c_str());
    return kExitUsage;
  }

  // [analysis commands: dispatch]
  if (report_app->parsed()) return stepscope::cli::ReportCommand(report_options);
  if (export_app->parsed()) return stepscope::cli::ExportCommand(export_invocation);
  if (compare_app->parsed()) return stepscope::cli::CompareCommand(compare_invocation);
  if (summary_app->parsed()) return stepscope::cli::SummaryCommand(summary_run);
  if (!run_instance.empty()) run.flag_values.emplace_back("instance", run_instance);
  if (!run_instance_count.empty()) run.flag_values.emplace_back("instance_count", run_instance_count);
  if (!run_prices.empty()) run.flag_values.emplace_back("prices", run_prices);
  if (!run_gpu_tracing.empty()) run.flag_values.emplace_back("gpu_tracing", run_gpu_tracing);
  if (!run_metrics_port.empty()) run.flag_values.emplace_back("metrics_port", run_metrics_port);
  if (!run_metrics_host.empty()) run.flag_values.emplace_back("metrics_host", run_metrics_host);
  if (rules_app->parsed()) return stepscope::cli::RulesCommand(rules_invocation);
  if (alerts_app->parsed()) return stepscope::cli::AlertsCommand(alerts);
  for (const std::string& rule : run_rules) run.flag_values.emplace_back("rules", rule);
  if (import_sagemaker_app->parsed()) return stepscope::cli::ImportCommand(import_sagemaker);
  if (import_kineto_app->parsed()) return stepscope::cli::ImportCommand(import_kineto);
  if (run_app->parsed()) {
    if (!out.empty()) run.flag_values.emplace_back("out", out);
    if (!job.empty()) run.flag_values.emplace_back("job", job);
    if (!node.empty()) run.flag_values.emplace_back("node", node);
    if (!interval.empty()) run.flag_values.emplace_back("interval", interval);
    if (no_torch) run.flag_values.emplace_back("torch", "false");
    if (no_detail) run.flag_values.emplace_back("detail", "none");
    if (!detailed_steps.empty()) run.flag_values.emplace_back("detailed_steps", detailed_steps);
    if (!python_steps.empty()) run.flag_values.emplace_back("python_steps", python_steps);
    if (!dataloader_steps.empty()) run.flag_values.emplace_back("dataloader_steps", dataloader_steps);
    if (!gpu_steps.empty()) run.flag_values.emplace_back("gpu_steps", gpu_steps);
    if (!python_profiler.empty()) run.flag_values.emplace_back("python_profiler", python_profiler);
    return stepscope::cli::RunCommand(run);
  }
  if (info_app->parsed()) return stepscope::cli::InfoCommand(info_run, info_json);
  if (ctl_app->parsed()) return stepscope::cli::CtlCommand(ctl);
  if (serve_app->parsed()) return stepscope::cli::ServeCommand(serve);
  if (pyprof_app->parsed()) {
    pyprof.sort = pyprof_sort == "cumulative" ? stepscope::cli::PyprofSort::kCumulative : stepscope::cli::PyprofSort::kSelf;
    return stepscope::cli::PyprofCommand(pyprof);
  }
  return kExitUsage;
}
