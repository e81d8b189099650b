#include "cli/export_command.h"

#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "analysis/run_loader.h"
#include "base/file_system.h"
#include "cli/rules_command.h"
#include "cli/run_problems.h"
#include "rules/profiler_report.h"
#include "export/chrome_trace_export.h"
#include "export/csv_export.h"
#include "export/sqlite_export.h"
#include "base/json_fields.h"
#include "store/run_directory.h"

namespace stepscope::cli {
namespace {

constexpr int kExitError = 1;

void PrintError(const std::string& message) { std::fprintf(stderr, "stepscope export: %s\n", message.c_str()); }

bool IsDirectory(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The findings document: the run's rules.json if it is there and parses, else a fresh
// evaluation of the built-in rules. `origin` says which ("rules.json" or "evaluated").
nlohmann::json FindingsDocument(const std::string& run, const analysis::Model& model, std::string& origin) {
  const std::string path = rules::DefaultRulesOutputDir(run) + "/rules.json";
  if (auto text = ReadRegularFile(path, Symlinks::kRefuse); text.ok()) {
    nlohmann::json document = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (document.is_object() && JsonField(document, "rules") != nullptr) {
      origin = "rules.json";
      return document;
    }
    std::fprintf(stderr, "stepscope export: %s is not a rules.json document; evaluating the rules instead "
                         "(run `stepscope rules %s` to rewrite it)\n", path.c_str(), run.c_str());
  }
  auto report = MakeConfiguredProfilerReport("", nlohmann::json(), {});
  if (!report.ok()) {
    std::fprintf(stderr, "stepscope export: rules not evaluated: %s; the findings tables stay empty\n",
                 report.status().message().c_str());
    origin = "none";
    return nlohmann::json();
  }
  (*report)->Finish(model);
  origin = "evaluated";
  return (*report)->RulesJson();
}

// What a ranged export adds to its default file name: ".steps-100-120", ".from-1h-to-1h5m".
std::string RangeSuffix(const exporting::ExportRangeRequest& range) {
  std::string suffix;
  if (!range.steps.empty()) {
    suffix = ".steps-" + range.steps;
  } else {
    if (!range.from.empty()) suffix += ".from-" + range.from;
    if (!range.to.empty()) suffix += ".to-" + range.to;
  }
  for (char& c : suffix) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    if (!plain) c = '-';  // ':' of A:B and of UTC times, '/' never reaches a file name
  }
  return suffix;
}

}  // namespace

std::string ExportRunDirectory(const std::string& run) {
  std::string dir = run;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (IsDirectory(dir)) return dir;
  const std::string parent = std::filesystem::path(dir).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string ExportJobName(const std::string& run_dir) {
  if (auto text = ReadRegularFile(run_dir + "/manifest.json", Symlinks::kRefuse, store::kMaxManifestBytes); text.ok()) {
    const nlohmann::json manifest = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    std::string job = JsonString(manifest, "job");
    if (!job.empty() && job.find('/') == std::string::npos && job != "." && job != "..") return job;
  }
  std::error_code error;
  std::string name = std::filesystem::weakly_canonical(run_dir, error).filename().string();
  if (error || name.empty()) name = std::filesystem::path(run_dir).filename().string();
  return name.empty() || name == "." ? "run" : name;
}

std::string DefaultExportPath(const std::string& run_dir, const std::string& job, const std::string& format) {
  const std::string dir = run_dir + "/export/";
  if (format == "chrome") return dir + job + ".trace.json";
  if (format == "sqlite") return dir + job + ".sqlite";
  return dir + "csv";
}

int ExportCommand(const ExportInvocation& invocation) {
  const auto started = std::chrono::steady_clock::now();
  auto model = analysis::LoadRun(invocation.run);
  if (!model.ok()) {
    PrintError(model.status().message());
    return kExitError;
  }
  PrintRunProblems(model->problems(), "stepscope export: ", invocation.run);
  const bool ranged = !invocation.range.from.empty() || !invocation.range.to.empty() || !invocation.range.steps.empty();
  if (ranged && invocation.format != "chrome") {
    PrintError("--from, --to and --steps cut a Chrome trace; sqlite and csv export the whole run (query by time there)");
    return kExitError;
  }
  auto range = exporting::ResolveExportRange(*model, invocation.range);
  if (!range.ok()) {
    PrintError(range.status().message());
    return kExitError;
  }
  const std::string run_dir = ExportRunDirectory(invocation.run);
  const std::string job = ExportJobName(run_dir);
  const std::string out =
      invocation.out.empty() ? DefaultExportPath(run_dir, job + RangeSuffix(invocation.range), invocation.format)
                             : invocation.out;
  if (invocation.format == "csv" && !invocation.out.empty() && std::filesystem::exists(out) && !IsDirectory(out)) {
    PrintError(out + " is a file, but csv writes a directory of tables; pass -o with a directory");
    return kExitError;
  }
  if (invocation.format != "csv" && IsDirectory(out)) {
    PrintError(out + " is a directory; pass -o with a file name, e.g. " + out + "/" + job +
               (invocation.format == "chrome" ? ".trace.json" : ".sqlite"));
    return kExitError;
  }

  std::string summary;
  if (invocation.format == "chrome") {
    auto stats = exporting::ExportChromeTrace(*model, out, {.range = *range});
    if (!stats.ok()) {
      PrintError(stats.status().message());
      return kExitError;
    }
    summary = range->description + ": " + std::to_string(stats->slices) + " slices (" +
              std::to_string(stats->overflow_slices) + " on overlap tracks), " +
              std::to_string(stats->counter_events) + " counter events, " + std::to_string(stats->flows) +
              " flows, " + std::to_string(stats->step_flows) + " step flows";
  } else {
    exporting::ExportRunFacts facts;
    facts.run_path = invocation.run;
    facts.job = job;
    facts.rules = FindingsDocument(invocation.run, *model, facts.findings_origin);
    auto counts = invocation.format == "sqlite" ? exporting::ExportSqlite(*model, facts, out)
                                                : exporting::ExportCsv(*model, facts, out);
    if (!counts.ok()) {
      PrintError(counts.status().message());
      return kExitError;
    }
    summary = std::to_string(counts->spans) + " spans, " + std::to_string(counts->steps) + " steps, " +
              std::to_string(counts->samples) + " samples, " + std::to_string(counts->findings) +
              " findings (from " + facts.findings_origin + ")";
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%s\n%s: %s in %.1f s\n", out.c_str(), invocation.format.c_str(), summary.c_str(), seconds);
  return 0;
}

}  // namespace stepscope::cli
