// Analysis speed and memory (SPEC.md §6: "analysis + report of a 24 h, 8-GPU, 500 ms job:
// <= 10 s, <= 1 GB RAM").
//
// Generates a synthetic run and its SageMaker twin (synthetic_run.h) unless given, then measures,
// each --repetitions times (median reported), each repetition in a forked child so that every
// figure has its own peak RSS (getrusage ru_maxrss of that child; the parent stays small):
//   read        baseline: read every file of the run and zstd-decompress every block frame's
//               columns (stepscope), or just read every file (SageMaker JSON)
//   load        LoadStepscopeRun / ImportSageMaker: the analysis model, and its ApproximateBytes
//   rules       ProfilerReport over BuiltinRules(), Finish(model) and Reports(), timed alone (the
//               model is loaded first in the same child, untimed; the peak includes it)
//   load+rules  both, timed together: the figure the bar is about
// Times are wall seconds (and the child's CPU seconds). PASS/FAIL compares the stepscope run's
// load+rules against the bar; the SageMaker twin's figures are printed against the same bar for
// reference. Exit status 1 when the stepscope run misses a bar.
//
// Usage: analysis_benchmark [--out=DIR] [--run=JOB_DIR] [--sagemaker=DIR] [--hours=24]
//                           [--repetitions=3] [--sagemaker-repetitions=1] [--skip-sagemaker]
//                           [--skip-rules] [--per-rule]
//   --per-rule  only: each rule alone over the stepscope run's model, its wall time
//   --out   where to generate (default /tmp/stepscope-analysis-benchmark); reused when it
//           already holds a complete run of the same --hours
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analysis/model.h"
#include "analysis/stepscope_loader.h"
#include "base/file_system.h"
#include "child_measure.h"
#include "importers/sagemaker/sagemaker_importer.h"
#include "rules/builtin_rules.h"
#include "rules/profiler_report.h"
#include "store/block_codec.h"
#include "store/log_file.h"
#include "synthetic_run.h"

namespace stepscope::benchmarks {
namespace {

constexpr double kBarSeconds = 10.0;
constexpr double kBarBytes = 1e9;

struct Result {
  bool ok = false;
  double wall_s = 0;
  double cpu_s = 0;
  int64_t peak_rss_bytes = 0;
  int64_t model_bytes = 0;
  int64_t samples = 0;
  int64_t events = 0;
  int64_t input_bytes = 0;
  char error[256] = {};
};

double WallNow() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double CpuNow() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Runs `work` in a forked child; the child fills the Result (times are measured by `work`).
Result InChild(const std::function<void(Result&)>& work) {
  int fds[2];
  Result result;
  if (pipe(fds) != 0) {
    std::snprintf(result.error, sizeof result.error, "pipe failed");
    return result;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Result child;
    work(child);
    rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    child.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
    (void)!write(fds[1], &child, sizeof child);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  if (pid < 0 || read(fds[0], &result, sizeof result) != static_cast<ssize_t>(sizeof result)) {
    result = Result();
    std::snprintf(result.error, sizeof result.error, "the measuring child died (out of memory?)");
  }
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return result;
}

void Fail(Result& r, const std::string& message) { std::snprintf(r.error, sizeof r.error, "%s", message.c_str()); }

// The floor: bytes off the disk (page cache) and, for stepscope logs, zstd of every block.
void ReadBaseline(const std::string& dir, bool decompress_blocks, Result& r) {
  const double wall = WallNow(), cpu = CpuNow();
  LocalFileSystem fs;
  std::string columns;
  for (const std::string& path : FilesUnder(dir)) {
    auto bytes = fs.ReadFile(path);
    if (!bytes.ok()) return Fail(r, bytes.status().message());
    r.input_bytes += static_cast<int64_t>(bytes->size());
    if (!decompress_blocks || !path.ends_with(".log")) continue;
    auto log = store::ParseLog(*bytes);
    if (!log.ok()) return Fail(r, log.status().message());
    for (const store::LogFrame& frame : log->frames) {
      if (frame.type != store::FrameType::kBlock || frame.payload.size() < store::kBlockFramePrefixBytes) continue;
      uint32_t columns_bytes;
      std::memcpy(&columns_bytes, frame.payload.data() + 24, sizeof columns_bytes);
      columns.resize(columns_bytes);
      const size_t n = ZSTD_decompress(columns.data(), columns.size(), frame.payload.data() + store::kBlockFramePrefixBytes,
                                       frame.payload.size() - store::kBlockFramePrefixBytes);
      if (ZSTD_isError(n)) return Fail(r, "a block does not decompress in " + path);
    }
  }
  r.wall_s = WallNow() - wall;
  r.cpu_s = CpuNow() - cpu;
  r.ok = true;
}

StatusOr<analysis::Model> LoadModel(const std::string& path, bool sagemaker) {
  return sagemaker ? analysis::ImportSageMaker(path) : analysis::LoadStepscopeRun(path);
}

void Describe(const analysis::Model& model, Result& r) {
  r.model_bytes = static_cast<int64_t>(model.ApproximateBytes());
  for (const analysis::SystemSeries& series : model.series()) r.samples += static_cast<int64_t>(series.time_ns.size());
  r.events = static_cast<int64_t>(model.events().size());
}

Status EvaluateRules(const analysis::Model& model) {
  STEPSCOPE_ASSIGN_OR_RETURN(auto report, rules::ProfilerReport::Create(rules::BuiltinRules()));
  report->Finish(model);
  const std::vector<rules::RuleReport> reports = report->Reports();
  return reports.empty() ? InternalError("no rule reported") : OkStatus();
}

enum class What { kRead, kLoad, kRules, kLoadRules };
const char* WhatName(What what) {
  switch (what) {
    case What::kRead: return "read (baseline)";
    case What::kLoad: return "load";
    case What::kRules: return "rules";
    case What::kLoadRules: return "load+rules";
  }
  return "";
}

void Measure(What what, const std::string& path, bool sagemaker, Result& r) {
  if (what == What::kRead) return ReadBaseline(path, !sagemaker, r);
  double wall = WallNow(), cpu = CpuNow();
  auto model = LoadModel(path, sagemaker);
  if (!model.ok()) return Fail(r, model.status().message());
  if (what == What::kLoad) {
    r.wall_s = WallNow() - wall;
    r.cpu_s = CpuNow() - cpu;
  }
  Describe(*model, r);
  if (what == What::kLoad) {
    r.ok = true;
    return;
  }
  if (what == What::kRules) wall = WallNow(), cpu = CpuNow();
  if (Status status = EvaluateRules(*model); !status.ok()) return Fail(r, status.message());
  r.wall_s = WallNow() - wall;
  r.cpu_s = CpuNow() - cpu;
  r.ok = true;
}

Result Median(std::vector<Result> results) {
  for (const Result& r : results) {
    if (!r.ok) return r;
  }
  std::sort(results.begin(), results.end(), [](const Result& a, const Result& b) { return a.wall_s < b.wall_s; });
  Result median = results[results.size() / 2];
  for (const Result& r : results) median.peak_rss_bytes = std::max(median.peak_rss_bytes, r.peak_rss_bytes);
  return median;
}

bool g_skip_rules = false;  // --skip-rules: read and load only

// --per-rule: each rule alone over the same model (one child), slowest first.
void PerRule(const std::string& path, bool sagemaker) {
  InChild([&](Result& r) {
    auto model = LoadModel(path, sagemaker);
    if (!model.ok()) return Fail(r, model.status().message());
    for (const rules::RuleFactory& factory : rules::BuiltinRules()) {
      auto report = rules::ProfilerReport::Create(rules::BuiltinRules(), {std::string(factory.name)});
      if (!report.ok()) continue;
      const double wall = WallNow();
      (*report)->Finish(*model);
      std::printf("  rule %-28s %8.3f s\n", std::string(factory.name).c_str(), WallNow() - wall);
      std::fflush(stdout);
    }
    r.ok = true;
  });
}

// One table for one input; returns whether load+rules met both bars.
bool Report(const char* label, const std::string& path, bool sagemaker, int repetitions) {
  std::printf("\n%s: %s\n", label, path.c_str());
  std::printf("  %-16s %9s %9s %12s %12s %11s %10s\n", "what", "wall s", "cpu s", "peak RSS MB", "model MB", "samples", "events");
  double read_s = 0;
  bool pass = false;
  for (What what : {What::kRead, What::kLoad, What::kRules, What::kLoadRules}) {
    if (g_skip_rules && (what == What::kRules || what == What::kLoadRules)) continue;
    std::vector<Result> results;
    for (int i = 0; i < repetitions; ++i) {
      results.push_back(InChild([&](Result& r) { Measure(what, path, sagemaker, r); }));
    }
    const Result r = Median(results);
    if (!r.ok) {
      std::printf("  %-16s FAILED: %s\n", WhatName(what), r.error);
      continue;
    }
    std::printf("  %-16s %9.3f %9.3f %12.1f %12.1f %11lld %10lld\n", WhatName(what), r.wall_s, r.cpu_s,
                static_cast<double>(r.peak_rss_bytes) / 1e6, static_cast<double>(r.model_bytes) / 1e6,
                static_cast<long long>(r.samples), static_cast<long long>(r.events));
    std::fflush(stdout);
    if (what == What::kRead) {
      read_s = r.wall_s;
      std::printf("  %-16s %lld bytes at rest\n", "", static_cast<long long>(r.input_bytes));
    }
    if (what == What::kLoadRules) {
      pass = r.wall_s <= kBarSeconds && static_cast<double>(r.peak_rss_bytes) <= kBarBytes;
      std::printf("  load+rules / read = %.1fx; bar <= %.0f s and <= %.0f MB: %s (%.2f s, %.0f MB)\n",
                  read_s > 0 ? r.wall_s / read_s : 0.0, kBarSeconds, kBarBytes / 1e6, pass ? "PASS" : "FAIL", r.wall_s,
                  static_cast<double>(r.peak_rss_bytes) / 1e6);
    }
  }
  return pass;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace
}  // namespace stepscope::benchmarks

int main(int argc, char** argv) {
  using namespace stepscope::benchmarks;
  std::string out = "/tmp/stepscope-analysis-benchmark";
  std::string run, sagemaker;
  double hours = 24;
  int repetitions = 3;
  int sagemaker_repetitions = 1;  // its JSON import takes far longer; one pass is enough to compare
  bool skip_sagemaker = false;
  bool per_rule = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--out=")) out = v;
    else if (const char* v = value("--run=")) run = v;
    else if (const char* v = value("--sagemaker=")) sagemaker = v;
    else if (const char* v = value("--hours=")) hours = std::atof(v);
    else if (const char* v = value("--repetitions=")) repetitions = std::max(1, std::atoi(v));
    else if (const char* v = value("--sagemaker-repetitions=")) sagemaker_repetitions = std::max(1, std::atoi(v));
    else if (arg == "--skip-sagemaker") skip_sagemaker = true;
    else if (arg == "--skip-rules") g_skip_rules = true;
    else if (arg == "--per-rule") per_rule = true;
    else {
      std::fprintf(stderr, "analysis_benchmark: unknown argument '%s'; see the usage at the top of benchmarks/analysis_benchmark.cc\n", argv[i]);
      return 2;
    }
  }
  if (run.empty()) {
    SyntheticRunOptions options;
    options.out_dir = out + "/" + std::to_string(static_cast<int64_t>(hours * 3600)) + "s";
    options.duration_s = static_cast<int64_t>(hours * 3600);
    options.write_sagemaker = !skip_sagemaker;
    run = options.out_dir + "/stepscope/synthetic";
    if (sagemaker.empty() && !skip_sagemaker) sagemaker = options.out_dir + "/sagemaker";
    const std::string done = options.out_dir + "/complete";
    if (!Exists(done) || (!skip_sagemaker && !Exists(sagemaker))) {
      std::error_code error;
      std::filesystem::remove_all(options.out_dir, error);
      std::printf("generating %.1f h synthetic run in %s ...\n", hours, options.out_dir.c_str());
      std::fflush(stdout);
      const double start = WallNow();
      auto summary = WriteSyntheticRun(options);
      if (!summary.ok()) {
        std::fprintf(stderr, "analysis_benchmark: %s\n", summary.status().message().c_str());
        return 2;
      }
      std::printf("  %.1f s: %lld polls, %lld samples, %lld SageMaker records, %lld events (%lld TRAIN / %lld EVAL steps, %lld slow); "
                  "stepscope %.1f MB, SageMaker %.1f MB\n",
                  WallNow() - start, static_cast<long long>(summary->polls), static_cast<long long>(summary->samples),
                  static_cast<long long>(summary->sagemaker_records), static_cast<long long>(summary->events),
                  static_cast<long long>(summary->train_steps), static_cast<long long>(summary->eval_steps),
                  static_cast<long long>(summary->slow_steps), static_cast<double>(summary->stepscope_bytes) / 1e6,
                  static_cast<double>(summary->sagemaker_bytes) / 1e6);
      (void)stepscope::WriteFileAtomically(done, "ok\n");
    } else {
      std::printf("reusing the synthetic run in %s\n", options.out_dir.c_str());
    }
  }
  std::fflush(stdout);
  if (per_rule) {
    PerRule(run, /*sagemaker=*/false);
    return 0;
  }
  const bool pass = Report("stepscope run", run, /*sagemaker=*/false, repetitions);
  if (!sagemaker.empty()) Report("SageMaker twin", sagemaker, /*sagemaker=*/true, sagemaker_repetitions);
  return pass ? 0 : 1;
}
