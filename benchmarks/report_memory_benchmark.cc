// Peak memory of `stepscope report` (issue: "<= 64 bytes per framework event + 16 per system
// sample + 150 MB"; SPEC.md §6's 24 h run stays <= 10 s and <= 1 GB: analysis_benchmark).
//
// Writes (or reuses) a synthetic stepscope run (synthetic_run.h) of ~4 M framework events: by
// default 8 h of 32 cores and 8 GPUs polled every 500 ms (11.6 M samples) and ~28 steps/s of
// five events each. Then measures, each in a child process of its own, --repetitions times
// (largest peak, median wall time):
//   read              every file of the run read into memory (baseline: the bytes at rest)
//   load              LoadRun(RUN): the analysis model alone (baseline: what the report reads)
//   stepscope report  `stepscope report RUN -o FILE`, the real command executed: the bar's figure
// with each child's peak RSS (wait4's ru_maxrss), per framework event and against the bar
// 64 B x events + 16 B x samples + 150 MB, PASS/FAIL for `stepscope report`; then where the
// peak comes from: the report's stages run one after another in one child as the command runs
// them (load, rules evaluated as the synthetic run has no rules.json, run facts, sections, HTML),
// each stage's own peak RSS (the high-water mark is reset before it: /proc/self/clear_refs) and
// what the process holds after it. Exit status 1 on FAIL.
//
// This process stays small (child_measure.h): it generates the run in a child too.
//
// Usage: report_memory_benchmark [--out=DIR] [--run=JOB_DIR] [--hours=8] [--steps_per_s=30]
//                                [--cores=32] [--gpus=8] [--repetitions=1] [--stepscope=PATH]
//                                [--per-rule]
//   --out        where to generate (default /tmp/stepscope-report-memory-benchmark); a complete
//                run of the same sizes there is reused
//   --run        measure this run instead (events and samples are counted from its model)
//   --stepscope  the command to measure (default: this build's)
//   --per-rule   also each built-in rule alone over the loaded model: the peak RSS it adds
#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "analysis/model.h"
#include "analysis/run_loader.h"
#include "base/file_system.h"
#include "child_measure.h"
#include "report/run_info.h"
#include "report/run_report.h"
#include "rules/profiler_report.h"
#include "report/report_html.h"
#include "report/report_model.h"
#include "rules/builtin_rules.h"
#include "rules/profiler_report.h"
#include "synthetic_run.h"

namespace stepscope::benchmarks {
namespace {

constexpr double kBytesPerEvent = 64;
constexpr double kBytesPerSample = 16;
constexpr double kFixedBytes = 150e6;

// One stage of the report measured inside a child: its own peak and what is held after it.
struct StageFigures {
  char name[32] = {};
  double wall_s = 0;
  int64_t peak_bytes = 0;
  int64_t held_bytes = 0;
};

// What a measuring child sends back (plain bytes through a pipe).
struct ChildFigures {
  bool ok = false;
  double wall_s = 0;  // of the work alone
  int64_t events = 0;
  int64_t samples = 0;
  int stage_count = 0;
  StageFigures stages[8];
  char error[256] = {};
};

double WallNow() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void Fail(ChildFigures& f, const std::string& message) { std::snprintf(f.error, sizeof f.error, "%s", message.c_str()); }

// VmHWM or VmRSS of this process, in bytes (0 when /proc says nothing).
int64_t ProcStatusBytes(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with(field)) return std::atoll(line.c_str() + std::strlen(field)) * 1024;
  }
  return 0;
}

// From here on VmHWM is the current RSS (Linux >= 4.0); returns that RSS. Freed heap is given
// back first, so a stage is not charged for what the one before it left in malloc's free lists.
int64_t ResetPeak() {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
  return ProcStatusBytes("VmRSS:");
}

uint64_t BytesUnder(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code error;
  for (const std::string& file : FilesUnder(dir)) bytes += std::filesystem::file_size(file, error);
  return bytes;
}

// Every file held at once, as a reader that slurped the run would.
void ReadFiles(const std::string& run, ChildFigures& f) {
  const double start = WallNow();
  std::vector<std::string> contents;
  LocalFileSystem fs;
  for (const std::string& path : FilesUnder(run)) {
    auto bytes = fs.ReadFile(path);
    if (!bytes.ok()) return Fail(f, bytes.status().message());
    contents.push_back(std::move(*bytes));
  }
  f.wall_s = WallNow() - start;
  f.ok = true;
}

void Load(const std::string& run, ChildFigures& f) {
  const double start = WallNow();
  auto model = analysis::LoadRun(run);
  if (!model.ok()) return Fail(f, model.status().message());
  f.wall_s = WallNow() - start;
  f.events = static_cast<int64_t>(model->events().size());
  for (const analysis::SystemSeries& series : model->series()) f.samples += static_cast<int64_t>(series.time_ns.size());
  f.ok = true;
}

// `work` as one stage: its wall time, its own peak RSS and the RSS held after it.
void RunStage(ChildFigures& f, const char* name, const std::function<void()>& work) {
  StageFigures& stage = f.stages[f.stage_count++];
  std::snprintf(stage.name, sizeof stage.name, "%s", name);
  ResetPeak();
  const double start = WallNow();
  work();
  stage.wall_s = WallNow() - start;
  stage.peak_bytes = ProcStatusBytes("VmHWM:");
  stage.held_bytes = ProcStatusBytes("VmRSS:");
}

// The stages of `stepscope report` (report/run_report.cc: BuildRunReport, then the HTML),
// one after another in this process, each holding what the command holds at that point.
void Stages(const std::string& run, ChildFigures& f) {
  StatusOr<analysis::Model> model = InternalError("not loaded");
  RunStage(f, "load", [&] { model = analysis::LoadRun(run); });
  if (!model.ok()) return Fail(f, model.status().message());
  report::ReportInputs inputs;
  inputs.model = &*model;
  inputs.path = run;
  Status rules = OkStatus();
  RunStage(f, "rules", [&] {
    auto loaded = report::LoadOrEvaluateRules(rules::DefaultRulesOutputDir(run) + "/rules.json", *model, &inputs.rules_source);
    if (loaded.ok()) inputs.rules = std::move(*loaded);
    rules = loaded.status();
  });
  if (!rules.ok()) return Fail(f, rules.message());
  RunStage(f, "run facts", [&] { inputs.run_info = report::BuildRunInfo(run, *model); });
  nlohmann::json document;
  RunStage(f, "sections", [&] { document = report::BuildReportModel(inputs); });
  size_t html_bytes = 0;
  RunStage(f, "html", [&] { html_bytes = report::RenderReportHtml(document).size(); });
  if (html_bytes == 0) return Fail(f, "no HTML rendered");
  f.ok = true;
}

// Each built-in rule alone over the loaded model: wall time and the peak RSS it adds.
void PerRule(const std::string& run, ChildFigures& f) {
  auto model = analysis::LoadRun(run);
  if (!model.ok()) return Fail(f, model.status().message());
  for (const rules::RuleFactory& factory : rules::BuiltinRules()) {
    const std::string name(factory.name);
    auto report = rules::ProfilerReport::Create(rules::BuiltinRules(), {name});
    if (!report.ok()) continue;
    const int64_t before = ResetPeak();
    const double start = WallNow();
    (*report)->Finish(*model);
    const nlohmann::json outputs = (*report)->RulesJson();
    std::printf("  rule %-28s %8.3f s %+9.1f MB\n", name.c_str(), WallNow() - start,
                static_cast<double>(ProcStatusBytes("VmHWM:") - before) / 1e6);
    std::fflush(stdout);
  }
  f.ok = true;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

double PerEvent(double bytes, int64_t events) { return events > 0 ? bytes / static_cast<double>(events) : 0.0; }

// One row: `measure` --repetitions times, the median wall time and the largest peak.
struct Row {
  bool ok = false;
  std::string error;
  double wall_s = 0;
  double peak_bytes = 0;
  ChildFigures figures;  // of the last repetition
};

Row Repeat(int repetitions, const std::function<ChildOutcome(ChildFigures&)>& measure) {
  Row row;
  std::vector<double> walls;
  for (int i = 0; i < repetitions; ++i) {
    row.figures = ChildFigures();
    const ChildOutcome outcome = measure(row.figures);
    if (!outcome.ok) {
      row.error = outcome.error;
      return row;
    }
    walls.push_back(row.figures.wall_s > 0 ? row.figures.wall_s : outcome.wall_s);
    row.peak_bytes = std::max(row.peak_bytes, static_cast<double>(outcome.peak_rss_bytes));
  }
  std::sort(walls.begin(), walls.end());
  row.wall_s = walls[walls.size() / 2];
  row.ok = true;
  return row;
}

}  // namespace
}  // namespace stepscope::benchmarks

int main(int argc, char** argv) {
  using namespace stepscope::benchmarks;
  std::string out = "/tmp/stepscope-report-memory-benchmark";
  std::string run;
  std::string stepscope = STEPSCOPE_CLI_PATH;
  SyntheticRunOptions options;
  options.duration_s = 8 * 3600;
  options.train_steps_per_s = 30;  // nominal: ~28/s with the generator's fixed gaps
  options.write_sagemaker = false;
  int repetitions = 1;
  bool per_rule = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--out=")) out = v;
    else if (const char* v = value("--run=")) run = v;
    else if (const char* v = value("--hours=")) options.duration_s = static_cast<int64_t>(std::atof(v) * 3600);
    else if (const char* v = value("--steps_per_s=")) options.train_steps_per_s = std::atof(v);
    else if (const char* v = value("--cores=")) options.cpu_cores = std::atoi(v);
    else if (const char* v = value("--gpus=")) options.gpus = std::atoi(v);
    else if (const char* v = value("--repetitions=")) repetitions = std::max(1, std::atoi(v));
    else if (const char* v = value("--stepscope=")) stepscope = v;
    else if (arg == "--per-rule") per_rule = true;
    else {
      std::fprintf(stderr, "report_memory_benchmark: unknown argument '%s'; see the usage at the top of "
                           "benchmarks/report_memory_benchmark.cc\n", argv[i]);
      return 2;
    }
  }
  if (run.empty()) {
    options.out_dir = out + "/" + std::to_string(options.duration_s) + "s-" +
                      std::to_string(static_cast<int64_t>(options.train_steps_per_s * 1000)) + "mstep-" +
                      std::to_string(options.cpu_cores) + "c-" + std::to_string(options.gpus) + "g";
    run = options.out_dir + "/stepscope/synthetic";
    const std::string done = options.out_dir + "/complete";
    if (!Exists(done)) {
      std::error_code error;
      std::filesystem::remove_all(options.out_dir, error);
      std::printf("generating %.1f h synthetic run (%d cores, %d GPUs, %.1f steps/s nominal) in %s ...\n",
                  static_cast<double>(options.duration_s) / 3600, options.cpu_cores, options.gpus,
                  options.train_steps_per_s, options.out_dir.c_str());
      std::fflush(stdout);
      ChildFigures generated;
      const ChildOutcome outcome = InChild<ChildFigures>(
          [&](ChildFigures& f) {
            auto summary = WriteSyntheticRun(options);
            if (!summary.ok()) return Fail(f, summary.status().message());
            f.ok = stepscope::WriteFileAtomically(done, "ok\n").ok();
          },
          &generated);
      if (!outcome.ok || !generated.ok) {
        std::fprintf(stderr, "report_memory_benchmark: %s\n", outcome.ok ? generated.error : outcome.error.c_str());
        return 2;
      }
    } else {
      std::printf("reusing the synthetic run in %s\n", options.out_dir.c_str());
    }
  }
  const uint64_t disk_bytes = BytesUnder(run);
  const std::string html = run + "/report-memory-benchmark.html";
  std::printf("\nrun: %s (%.1f MB at rest)\n", run.c_str(), static_cast<double>(disk_bytes) / 1e6);
  std::printf("  %-18s %9s %12s %14s %12s\n", "what", "wall s", "peak RSS MB", "RSS B / event", "x at rest");
  std::fflush(stdout);
  // A forked child's work reports its own failure in its figures.
  auto forked = [&](const std::function<void(ChildFigures&)>& work) {
    return [&, work](ChildFigures& f) {
      ChildOutcome outcome = InChild<ChildFigures>(work, &f);
      if (outcome.ok && !f.ok) outcome = {false, f.error, outcome.wall_s, outcome.peak_rss_bytes};
      return outcome;
    };
  };
  int64_t events = 0, samples = 0;
  double load_peak = 0, report_peak = 0;
  bool report_ok = false;
  const struct {
    const char* name;
    std::function<ChildOutcome(ChildFigures&)> measure;
  } rows[] = {
      {"read (baseline)", forked([&](ChildFigures& f) { ReadFiles(run, f); })},
      {"load (baseline)", forked([&](ChildFigures& f) { Load(run, f); })},
      {"stepscope report", [&](ChildFigures&) { return ExecAndMeasure({stepscope, "report", run, "-o", html}); }},
  };
  for (const auto& [name, measure] : rows) {
    const Row row = Repeat(repetitions, measure);
    if (!row.ok) {
      std::printf("  %-18s FAILED: %s\n", name, row.error.c_str());
      std::fflush(stdout);
      continue;
    }
    if (std::strcmp(name, "load (baseline)") == 0) {
      events = row.figures.events;
      samples = row.figures.samples;
      load_peak = row.peak_bytes;
    }
    if (std::strcmp(name, "stepscope report") == 0) {
      report_peak = row.peak_bytes;
      report_ok = true;
    }
    std::printf("  %-18s %9.3f %12.1f %14.1f %11.1fx\n", name, row.wall_s, row.peak_bytes / 1e6,
                PerEvent(row.peak_bytes, events), row.peak_bytes / static_cast<double>(std::max<uint64_t>(disk_bytes, 1)));
    std::fflush(stdout);
  }
  std::remove(html.c_str());

  std::printf("\n  the report's stages in one child (each stage's own peak; RSS held after it)\n");
  std::printf("  %-18s %9s %12s %14s %12s\n", "stage", "wall s", "peak RSS MB", "RSS B / event", "held MB");
  ChildFigures stages;
  const ChildOutcome staged = InChild<ChildFigures>([&](ChildFigures& f) { Stages(run, f); }, &stages);
  for (int i = 0; staged.ok && i < stages.stage_count; ++i) {
    const StageFigures& stage = stages.stages[i];
    std::printf("  %-18s %9.3f %12.1f %14.1f %12.1f\n", stage.name, stage.wall_s, static_cast<double>(stage.peak_bytes) / 1e6,
                PerEvent(static_cast<double>(stage.peak_bytes), events), static_cast<double>(stage.held_bytes) / 1e6);
  }
  if (!staged.ok || !stages.ok) std::printf("  stages FAILED: %s\n", staged.ok ? stages.error : staged.error.c_str());
  std::fflush(stdout);
  if (per_rule) {
    std::printf("\n  each rule alone over the loaded model (peak RSS it adds)\n");
    std::fflush(stdout);
    ChildFigures unused;
    InChild<ChildFigures>([&](ChildFigures& f) { PerRule(run, f); }, &unused);
  }

  const double bar = kBytesPerEvent * static_cast<double>(events) + kBytesPerSample * static_cast<double>(samples) + kFixedBytes;
  const bool pass = report_ok && events > 0 && report_peak <= bar;
  std::printf("\n  framework events %lld, system samples %lld, %.1f MB at rest\n", static_cast<long long>(events),
              static_cast<long long>(samples), static_cast<double>(disk_bytes) / 1e6);
  std::printf("  stepscope report: peak RSS %.1f MB = %.1f B per framework event (%.2fx load's %.1f MB)\n",
              report_peak / 1e6, PerEvent(report_peak, events), load_peak > 0 ? report_peak / load_peak : 0.0,
              load_peak / 1e6);
  std::printf("  bar 64 B x %lld + 16 B x %lld + 150 MB = %.1f MB: %s (%.1f MB %s)\n", static_cast<long long>(events),
              static_cast<long long>(samples), bar / 1e6, pass ? "PASS" : "FAIL", std::abs(bar - report_peak) / 1e6,
              report_peak <= bar ? "to spare" : "over");
  return pass ? 0 : 1;
}
