#include "cli/report_command.h"

#include <sys/stat.h>

#include <climits>
#include <cstdio>
#include <ctime>
#include <optional>

#include "analysis/run_loader.h"
#include "base/file_system.h"
#include "cli/detail_summary.h"
#include "cli/rules_command.h"
#include "cli/run_info.h"
#include "cli/run_problems.h"
#include "report/report_model.h"
#include "report/report_html.h"

namespace stepscope::cli {
namespace {

constexpr int kExitError = 1;

// The directory holding the run: the run itself, or the folder of a model.stepscope file.
std::string RunDirectory(const std::string& run) {
  std::string dir = run;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat info;
  if (stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return dir;
  const size_t slash = dir.rfind('/');
  return slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

Status WriteText(const std::string& path, const std::string& text) {
  if (Status written = WriteFileAtomically(path, text); !written.ok()) {
    return IoError("cannot write '" + path + "': " + written.message() + "; pass a writable -o FILE");
  }
  return OkStatus();
}

// The python windows' tables of a stepscope run (its detail files; none for an import).
nlohmann::json PythonTables(const analysis::Model& model) {
  PyprofOptions every_function;
  every_function.top = INT_MAX;  // the report merges windows, then cuts to its own top
  const std::vector<DetailWindowFile> windows = ListDetailWindows(model);
  PrintCorruptPythonWindows(windows, "stepscope report");
  return BuildPyprofTables(windows, every_function);
}

}  // namespace

StatusOr<nlohmann::json> BuildRunReportModel(const std::string& run_path, int64_t generated_at_ns,
                                             std::vector<analysis::Problem>* problems) {
  // The run is read once: `stepscope info`'s facts (how the job ended, capabilities, drops,
  // bytes) are the model's too.
  STEPSCOPE_ASSIGN_OR_RETURN(analysis::Model model, analysis::LoadRun(run_path));
  if (problems != nullptr) *problems = model.problems();
  report::ReportInputs inputs;
  inputs.model = &model;
  inputs.path = run_path;
  inputs.job = BaseName(RunDirectory(run_path));
  inputs.generated_by = std::string("stepscope ") + STEPSCOPE_VERSION;
  inputs.generated_at_ns = generated_at_ns;
  STEPSCOPE_ASSIGN_OR_RETURN(inputs.rules, report::LoadOrEvaluateRules(DefaultRulesOutputDir(run_path) + "/rules.json",
                                                                       model, &inputs.rules_source));
  if (model.source() == analysis::ModelSource::kStepscope) {
    inputs.run_info = BuildRunInfo(run_path, model);
    inputs.python_tables = PythonTables(model);
  }
  return report::BuildReportModel(inputs);
}

Status WriteRunReport(const std::string& run_path, std::string* written_path) {
  STEPSCOPE_ASSIGN_OR_RETURN(nlohmann::json model, BuildRunReportModel(run_path, NowNs()));
  *written_path = RunDirectory(run_path) + "/report.html";
  return report::WriteReportHtml(model, *written_path);
}

int ReportCommand(const ReportOptions& options) {
  std::vector<analysis::Problem> problems;
  auto model = BuildRunReportModel(options.run, NowNs(), &problems);
  if (!model.ok()) {
    std::fprintf(stderr, "stepscope report: %s\n", model.status().message().c_str());
    return kExitError;
  }
  PrintRunProblems(problems, "stepscope report: ", options.run);
  if (options.json) {
    // Names in the model are untrusted text: invalid UTF-8 is replaced, never a throw.
    const std::string text = model->dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (options.out.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    if (Status written = WriteText(options.out, text); !written.ok()) {
      std::fprintf(stderr, "stepscope report: %s\n", written.message().c_str());
      return kExitError;
    }
    std::printf("report model: %s\n", options.out.c_str());
    return 0;
  }
  const std::string out = options.out.empty() ? RunDirectory(options.run) + "/report.html" : options.out;
  if (Status written = report::WriteReportHtml(*model, out); !written.ok()) {
    std::fprintf(stderr, "stepscope report: %s\n", written.message().c_str());
    return kExitError;
  }
  std::printf("report: %s\n", out.c_str());
  return 0;
}

}  // namespace stepscope::cli
