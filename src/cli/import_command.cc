#include "cli/import_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "analysis/model_file.h"
#include "base/file_system.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/sagemaker/sagemaker_importer.h"

namespace stepscope::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kImportFormatVersion = 1;

int Fail(const std::string& what) {
  std::string line = what;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "stepscope import: %s\n", line.c_str());
  return kExitError;
}

std::string Utc(int64_t ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// "1817180.569 s": spans of imported data run from milliseconds to weeks; seconds read for all.
std::string SecondsText(int64_t ns) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.3f s", static_cast<double>(ns) / 1e9);
  return text;
}

std::string Absolute(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

// The files under <root>/system and <root>/framework, relative to `root`, sorted, except the
// job-end markers (which hold no data): what an import that recognised nothing skipped.
std::vector<std::string> SkippedSageMakerFiles(const std::string& root) {
  std::vector<std::string> skipped;
  for (const char* part : {"system", "framework"}) {
    std::error_code error;
    const std::filesystem::path dir = std::filesystem::path(root) / part;
    if (!std::filesystem::is_directory(dir, error)) continue;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      if (!it->is_regular_file(error) || it->path().filename() == "training_job_end.ts") continue;
      skipped.push_back(it->path().lexically_relative(root).string());
    }
  }
  std::sort(skipped.begin(), skipped.end());
  return skipped;
}

// "a, b, c and 4 more": a one-line list that stays short for folders of thousands of files.
std::string ListSome(const std::vector<std::string>& names, size_t shown = 5) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < shown; ++i) text += (i > 0 ? ", " : "") + names[i];
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

}  // namespace

std::string DefaultImportJobName(const std::string& input) {
  std::string base = std::filesystem::path(input).lexically_normal().filename().string();
  if (base.empty()) base = std::filesystem::path(input).lexically_normal().parent_path().filename().string();
  // "rank0.pt.trace.json.gz" -> "rank0"
  if (auto dot = base.find('.'); dot != std::string::npos && dot > 0) base.resize(dot);
  if (base.empty() || base == "." || base == "..") base = "imported";
  return base + "-import";
}

nlohmann::json ImportManifest(const analysis::Model& model, const std::string& job,
                              const std::vector<std::string>& imported_from, int64_t imported_at_ns) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const analysis::NodeFacts& node : model.nodes()) nodes.push_back(node.name);
  return {
      {"format_version", kImportFormatVersion},
      {"job", job},
      {"source", analysis::ModelSourceName(model.source())},
      {"imported_from", imported_from},
      {"imported_at_ns", imported_at_ns},
      {"nodes", nodes},
      {"model_file", "model.stepscope"},
      {"model_file_version", analysis::kModelFileVersion},
  };
}

std::string ImportSummary(const analysis::Model& model) {
  size_t samples = 0;
  for (const analysis::SystemSeries& series : model.series()) samples += series.time_ns.size();
  std::string summary = std::to_string(model.nodes().size()) + " nodes, " + std::to_string(model.series().size()) +
                        " series, " + std::to_string(samples) + " samples, " + std::to_string(model.events().size()) +
                        " events";
  if (model.last_ns() > model.first_ns() || samples + model.events().size() > 0) {
    summary += ", " + Utc(model.first_ns()) + " .. " + Utc(model.last_ns()) + " (" +
               SecondsText(model.last_ns() - model.first_ns()) + ")";
  }
  if (!model.problems().empty()) summary += ", " + std::to_string(model.problems().size()) + " problems noted";
  return summary;
}

int ImportCommand(const ImportInvocation& invocation) {
  if (invocation.inputs.empty()) {
    std::fprintf(stderr, "stepscope import %s: no input given; see `stepscope import --help`\n", invocation.format.c_str());
    return kExitUsage;
  }
  StatusOr<analysis::Model> model = InternalError("no importer ran");
  std::string source_hint;
  if (invocation.format == "sagemaker") {
    if (invocation.inputs.size() != 1) {
      std::fprintf(stderr, "stepscope import sagemaker: takes one profiler-output directory, got %zu inputs\n",
                   invocation.inputs.size());
      return kExitUsage;
    }
    analysis::SageMakerImportStats stats;
    model = analysis::ImportSageMaker(invocation.inputs[0], &stats);
    source_hint = "check that it is the job's profiler-output directory";
    if (model.ok() && stats.system_files + stats.pevents_files + stats.tf_trace_files == 0) {
      // An empty run would look like a successful import of a job that did nothing.
      const std::vector<std::string> skipped = SkippedSageMakerFiles(invocation.inputs[0]);
      return Fail("'" + invocation.inputs[0] + "' holds no SageMaker profiler file (" +
                  (skipped.empty() ? std::string("system/ and framework/ hold no files")
                                   : "skipped " + std::to_string(skipped.size()) + " unrecognised: " + ListSome(skipped)) +
                  "); system files are system/**/<10 digits>.algo-<N>.json, framework files "
                  "framework/pevents/**/<time>_<node>_<timeline>.json or framework/**/*.trace.json.gz; " + source_hint);
    }
  } else if (invocation.format == "kineto") {
    model = analysis::ImportKineto(invocation.inputs);
    source_hint = "check that the files are PyTorch profiler traces (*.pt.trace.json[.gz])";
  } else {
    std::fprintf(stderr, "stepscope import: unknown format '%s'; use sagemaker or kineto\n", invocation.format.c_str());
    return kExitUsage;
  }
  if (!model.ok()) {
    const std::string& message = model.status().message();
    // Importer messages already end with a next step after "; ".
    return Fail(message.find("; ") != std::string::npos ? message : message + "; " + source_hint);
  }

  const std::string root = invocation.out.empty() ? "stepscope-runs" : invocation.out;
  const std::string job = invocation.job.empty() ? DefaultImportJobName(invocation.inputs[0]) : invocation.job;
  if (job.find('/') != std::string::npos || job == "." || job == "..") {
    std::fprintf(stderr, "stepscope import: --job '%s' must be a plain name without '/'\n", job.c_str());
    return kExitUsage;
  }
  const std::string run_dir = root + "/" + job;
  if (Status status = CreateDirectories(run_dir); !status.ok()) {
    return Fail(status.message() + "; pass a writable --out");
  }
  if (Status status = analysis::SaveModelFile(*model, run_dir + "/model.stepscope"); !status.ok()) {
    return Fail(status.message() + "; check free space and permissions of " + run_dir);
  }
  std::vector<std::string> imported_from;
  for (const std::string& input : invocation.inputs) imported_from.push_back(Absolute(input));
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  // The manifest goes last: a directory with a manifest always has its model file.
  const nlohmann::json manifest = ImportManifest(*model, job, imported_from, now_ns);
  if (Status status = WriteFileAtomically(run_dir + "/manifest.json", manifest.dump(2) + "\n"); !status.ok()) {
    return Fail(status.message() + "; check free space and permissions of " + run_dir);
  }
  std::printf("%s\n%s\n", run_dir.c_str(), ImportSummary(*model).c_str());
  return kExitOk;
}

}  // namespace stepscope::cli
