#include "cli/report_command.h"

#include <cstdio>
#include <ctime>

#include "analysis/run_loader.h"
#include "base/file_system.h"
#include "cli/detail_summary.h"
#include "cli/run_problems.h"
#include "report/report_html.h"
#include "report/run_report.h"
#include "rules/run_cost.h"

namespace stepscope::cli {
namespace {

constexpr int kExitError = 1;

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

StatusOr<report::RunReport> BuildReport(const std::string& run_path,
                                        const std::vector<rules::InstanceType>* catalog = nullptr) {
  return report::BuildRunReport(run_path, NowNs(), std::string("stepscope ") + STEPSCOPE_VERSION, catalog);
}

}  // namespace

Status WriteRunReport(const std::string& run_path, const std::vector<rules::InstanceType>* catalog,
                      std::string* written_path) {
  STEPSCOPE_ASSIGN_OR_RETURN(report::RunReport built, BuildReport(run_path, catalog));
  PrintCorruptPythonWindows(built.unreadable_python_windows, "stepscope report");
  *written_path = analysis::RunDirectoryOf(run_path) + "/report.html";
  return report::WriteReportHtml(built.model, *written_path);
}

int ReportCommand(const ReportOptions& options) {
  std::vector<rules::InstanceType> catalog;
  if (!options.prices.empty()) {
    auto loaded = rules::LoadPriceCatalog(options.prices);
    if (!loaded.ok()) {
      std::fprintf(stderr, "stepscope report: %s\n", loaded.status().message().c_str());
      return kExitError;
    }
    catalog = std::move(*loaded);
  }
  auto built = BuildReport(options.run, options.prices.empty() ? nullptr : &catalog);
  if (!built.ok()) {
    std::fprintf(stderr, "stepscope report: %s\n", built.status().message().c_str());
    return kExitError;
  }
  PrintRunProblems(built->problems, "stepscope report: ", options.run);
  PrintCorruptPythonWindows(built->unreadable_python_windows, "stepscope report");
  const nlohmann::json& model = built->model;
  if (options.json) {
    // Names in the model are untrusted text: invalid UTF-8 is replaced, never a throw.
    const std::string text = model.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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
  const std::string out = options.out.empty() ? analysis::RunDirectoryOf(options.run) + "/report.html" : options.out;
  if (Status written = report::WriteReportHtml(model, out); !written.ok()) {
    std::fprintf(stderr, "stepscope report: %s\n", written.message().c_str());
    return kExitError;
  }
  std::printf("report: %s\n", out.c_str());
  return 0;
}

}  // namespace stepscope::cli
