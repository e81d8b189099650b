// Golden tests of the whole report model (docs/report-model.md; STYLE.md §6, the shape of
// Perfetto's diff tests). Each case builds the document and compares it with
// expected/<case>.json: numbers to 1e-9 relative, everything else exactly, each difference
// printed with its JSON path. generated_at_ns is 0 and run paths are normalized ("<RUN>", paths
// under the fixtures relative to them), so the documents are stable across machines.
//
// Cases: SageMaker profiler output imported in process (the shared fixtures' test_traces, and the
// rules goldens' two_nodes input: 2 nodes with GPUs), rules evaluated in process; a small
// stepscope run written by the real store writer (steps, phases, system samples with a GPU, a
// python and an operators detail window), read through report::BuildRunReport, as `stepscope report` reads a run;
// a PyTorch profiler trace of one GPU (tests/fixtures/kineto) imported in process.
//
// STEPSCOPE_REBASELINE=1 rewrites expected/ instead (review the diff; tests/report_golden/README.md).
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/test_run_writer.h"
#include "base/file_system.h"
#include "report/run_report.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/sagemaker/sagemaker_importer.h"
#include "report/report_model.h"
#include "rules/builtin_rules.h"
#include "rules/profiler_report.h"

namespace stepscope {
namespace {

constexpr double kRelativeTolerance = 1e-9;
constexpr size_t kMaxDifferencesShown = 40;
const std::string kExpectedDir = STEPSCOPE_REPORT_GOLDEN_DIR;
const std::string kFixturesDir = STEPSCOPE_FIXTURES_DIR;
const std::string kRulesGoldenDir = STEPSCOPE_RULES_GOLDEN_DIR;
const std::string kKinetoFixturesDir = STEPSCOPE_KINETO_FIXTURES_DIR;

bool NumbersEqual(double expected, double actual) {
  if (expected == actual) return true;
  return std::fabs(expected - actual) <= kRelativeTolerance * std::max(std::fabs(expected), std::fabs(actual));
}

std::string Short(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > 120 ? text.substr(0, 117) + "..." : text;
}

void Compare(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path,
             std::vector<std::string>& differences) {
  if (expected.is_number() && actual.is_number()) {
    if (!NumbersEqual(expected.get<double>(), actual.get<double>())) {
      differences.push_back(path + ": expected " + Short(expected) + ", got " + Short(actual));
    }
    return;
  }
  if (expected.type() != actual.type()) {
    differences.push_back(path + ": expected " + Short(expected) + ", got " + Short(actual));
    return;
  }
  if (expected.is_object()) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      if (!actual.contains(it.key())) differences.push_back(path + "." + it.key() + ": missing");
      else Compare(it.value(), actual[it.key()], path + "." + it.key(), differences);
    }
    for (auto it = actual.begin(); it != actual.end(); ++it) {
      if (!expected.contains(it.key())) differences.push_back(path + "." + it.key() + ": unexpected " + Short(it.value()));
    }
  } else if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      differences.push_back(path + ": expected " + std::to_string(expected.size()) + " items, got " +
                            std::to_string(actual.size()));
    }
    for (size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) {
      Compare(expected[i], actual[i], path + "[" + std::to_string(i) + "]", differences);
    }
  } else if (expected != actual) {
    differences.push_back(path + ": expected " + Short(expected) + ", got " + Short(actual));
  }
}

// Replaces every occurrence of `from` in the document's strings (temporary directories).
nlohmann::json Normalized(const nlohmann::json& document, const std::string& from, const std::string& to) {
  std::string text = document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return nlohmann::json::parse(text);
}

void CheckGolden(const std::string& name, const nlohmann::json& actual) {
  const std::string path = kExpectedDir + "/" + name + ".json";
  if (const char* rebaseline = std::getenv("STEPSCOPE_REBASELINE"); rebaseline != nullptr && *rebaseline == '1') {
    ASSERT_TRUE(WriteFileAtomically(path, actual.dump(1) + "\n").ok()) << path;
    GTEST_SKIP() << "rebaselined " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing: run with STEPSCOPE_REBASELINE=1 to create it";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const nlohmann::json expected = nlohmann::json::parse(buffer.str(), nullptr, false);
  ASSERT_FALSE(expected.is_discarded()) << path << " is not JSON";
  std::vector<std::string> differences;
  Compare(expected, actual, name, differences);
  std::string shown;
  for (size_t i = 0; i < differences.size() && i < kMaxDifferencesShown; ++i) shown += "  " + differences[i] + "\n";
  EXPECT_TRUE(differences.empty()) << differences.size() << " differences from " << path << ":\n" << shown;
}

nlohmann::json SageMakerReport(const std::string& input, const std::string& shown_path) {
  auto model = analysis::ImportSageMaker(input);
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return nullptr;
  report::ReportInputs inputs;
  inputs.model = &*model;
  inputs.job = "import";
  inputs.path = shown_path;
  inputs.generated_by = "stepscope test";
  auto rules = report::LoadOrEvaluateRules(input + "/no-rules-here/rules.json", *model, &inputs.rules_source);
  EXPECT_TRUE(rules.ok());
  inputs.rules = *rules;
  return report::BuildReportModel(inputs);
}

// A rules golden case (tests/golden/rules/<case>): its input imported and its parameters.json
// applied, as the rules goldens evaluate it, so the report shows the finding that case plants.
nlohmann::json RulesCaseReport(const std::string& name) {
  const std::string case_dir = kRulesGoldenDir + "/" + name;
  auto model = analysis::ImportSageMaker(case_dir + "/input");
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return nullptr;
  auto driver = rules::ProfilerReport::Create(rules::BuiltinRules());
  EXPECT_TRUE(driver.ok());
  if (!driver.ok()) return nullptr;
  std::ifstream in(case_dir + "/parameters.json");
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json parameters = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    const Status applied = (*driver)->ApplyParameterObject(parameters, case_dir + "/parameters.json");
    EXPECT_TRUE(applied.ok()) << applied.message();
  }
  (*driver)->Finish(*model);
  report::ReportInputs inputs;
  inputs.model = &*model;
  inputs.job = "import";
  inputs.path = "tests/golden/rules/" + name + "/input";
  inputs.generated_by = "stepscope test";
  inputs.rules = (*driver)->RulesJson();
  inputs.rules_source = "evaluated";
  return report::BuildReportModel(inputs);
}

// Issue 13: each section's chart data on the case that triggers its rule.
TEST(ReportGoldenTest, CpuBottleneckCausesAndBand) { CheckGolden("rules_cpu_bottleneck", RulesCaseReport("cpu_bottleneck")); }
TEST(ReportGoldenTest, LoadBalancingHistogramsOfFourGpus) { CheckGolden("rules_four_gpus", RulesCaseReport("four_gpus")); }
TEST(ReportGoldenTest, BatchSizeBoxesAtTheTrigger) { CheckGolden("rules_low_gpu_utilization", RulesCaseReport("low_gpu_utilization")); }
TEST(ReportGoldenTest, StepOutliersMarkedOnTheStepLine) { CheckGolden("rules_step_outliers", RulesCaseReport("step_outliers")); }

TEST(ReportGoldenTest, SageMakerTestTraces) {
  CheckGolden("sagemaker_test_traces",
              SageMakerReport(kFixturesDir + "/sagemaker/test_traces", "fixtures/sagemaker/test_traces"));
}

TEST(ReportGoldenTest, SageMakerTwoNodesWithGpus) {
  CheckGolden("sagemaker_two_nodes",
              SageMakerReport(kRulesGoldenDir + "/two_nodes/input", "tests/golden/rules/two_nodes/input"));
}

// PyTorch profiler traces (tests/fixtures/kineto, from HTA's test data) imported in process, rules
// evaluated in process.
nlohmann::json KinetoReport(const std::vector<std::string>& names) {
  std::vector<std::string> files;
  for (const std::string& name : names) files.push_back(kKinetoFixturesDir + "/" + name);
  auto model = analysis::ImportKineto(files);
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return nlohmann::json();
  report::ReportInputs inputs;
  inputs.model = &*model;
  inputs.job = "import";
  inputs.path = "tests/fixtures/kineto/" + names.front();
  inputs.generated_by = "stepscope test";
  auto rules = report::LoadOrEvaluateRules(files.front() + ".no-rules/rules.json", *model, &inputs.rules_source);
  EXPECT_TRUE(rules.ok());
  inputs.rules = *rules;
  return Normalized(report::BuildReportModel(inputs), kKinetoFixturesDir, "tests/fixtures/kineto");
}

// AlexNet on one GPU: kernels of FP32, TF32 and unknown precision, pageable host-to-device copies
// with byte counts, memsets, stream and context synchronization, and user annotations — the GPU
// page's sections.
TEST(ReportGoldenTest, KinetoAlexNetOnOneGpu) {
  CheckGolden("kineto_alexnet", KinetoReport({"critical_path_alexnet_trace.json.gz"}));
}

// Two ranks of a 128-rank job (sampled traces, two ProfilerSteps each, NCCL kernels on their own
// streams): gpu_idle's per-rank step breakdown into compute, communication, copies and idle by cause.
TEST(ReportGoldenTest, KinetoTwoRanksWithNccl) {
  CheckGolden("kineto_two_ranks",
              KinetoReport({"timeline_analysis_sampled_rank-0.json.gz", "trace_filter_sampled_rank-1.json.gz"}));
}

// The small stepscope run: node "vm", TRAIN steps 0-19 (10-29 ms, step 13 slow: 120 ms) from
// t = 1 s with Forward/Backward/DataLoaderIter inside, EVAL steps 0-1, system samples every
// 100 ms over 0-4 s (2 cores, total, memory, one GPU), a python window (cProfile, steps 9-10)
// and an operators window (step 5).
void WriteTinyRun(const std::string& job) {
  using analysis::testing::kTestEpochNs;
  const std::string node = job + "/vm";
  ASSERT_TRUE(CreateDirectories(node + "/detail").ok());
  constexpr int64_t kMs = 1'000'000;
  const std::string extra =
      R"("job":"tiny","command":["python3","train.py"],"start_time_ns":)" + std::to_string(kTestEpochNs) +
      R"(,"end_time_ns":)" + std::to_string(kTestEpochNs + 4000 * kMs) +
      R"(,"exit":{"code":0},"ended":"exited with code 0","hosts":["vm"],)" +
      R"("capabilities":{"gpu":{"available":true,"gpus":[{"index":0,"name":"Fake GPU"}]},"tick_clock":"tsc"})";
  ASSERT_TRUE(WriteFileAtomically(node + "/manifest.json", analysis::testing::TestManifest("vm", "exited", extra)).ok());
  {
    analysis::testing::TestStream system(node, "system", 100, /*system=*/true);
    ASSERT_TRUE(system.ok());
    for (int i = 0; i <= 40; ++i) {
      const uint64_t t = static_cast<uint64_t>(i) * 100 * kMs;
      system.Sample(t, "cpu/cpu0/util_pct", 20 + (i * 7) % 60);
      system.Sample(t, "cpu/cpu1/util_pct", 30 + (i * 11) % 50);
      system.Sample(t, "cpu/total/util_pct", 25 + ((i * 7) % 60 + (i * 11) % 50) / 2.0);
      system.Sample(t, "memory/used_pct", 40 + i * 0.25);
      system.Sample(t, "gpu/gpu0/util_pct", i >= 10 && i < 35 ? 60 + (i % 5) * 8 : 0);
      system.Sample(t, "gpu/gpu0/memory_used_pct", i >= 10 ? 35 : 1);
    }
  }
  {
    analysis::testing::TestStream proc(node, "proc-200-abcd", 200, /*system=*/false);
    ASSERT_TRUE(proc.ok());
    uint64_t t = 1000 * kMs;
    for (int step = 0; step < 20; ++step) {
      const uint64_t duration = (step == 13 ? 120 : 10 + step) * kMs;
      proc.StepBegin(11, t, store::Phase::kTrain, step);
      proc.Begin(11, t, "DataLoaderIter");
      proc.End(11, t + 2 * kMs, "DataLoaderIter");
      proc.Begin(11, t + 2 * kMs, "Forward");
      proc.End(11, t + 2 * kMs + duration / 2, "Forward");
      proc.Begin(11, t + 2 * kMs + duration / 2, "Backward");
      proc.End(11, t + duration - kMs, "Backward");
      proc.StepEnd(11, t + duration, store::Phase::kTrain, step);
      t += duration + 5 * kMs;
    }
    for (int step = 0; step < 2; ++step) {
      proc.StepBegin(11, t, store::Phase::kEval, step);
      proc.StepEnd(11, t + 8 * kMs, store::Phase::kEval, step);
      t += 10 * kMs;
    }
    proc.Begin(12, 3000 * kMs, "DetailWindowWrite");
    proc.End(12, 3004 * kMs, "DetailWindowWrite");
  }
  const int64_t op_start = kTestEpochNs + 1100 * kMs;
  const std::string operators =
      R"({"kind":"operators","pid":200,"window":{"index":0},"steps":[5,5],"step_phase":"TRAIN","complete":true,)"
      R"("start_ns":)" + std::to_string(op_start) + R"(,"end_ns":)" + std::to_string(op_start + 20 * kMs) +
      R"(,"events":[{"name":"aten::conv2d","start_ns":)" + std::to_string(op_start + kMs) + R"(,"end_ns":)" +
      std::to_string(op_start + 4 * kMs) + R"(,"tid":11,"cpu_ns":3000000,"self_cpu_ns":500000},)" +
      R"({"name":"aten::relu","start_ns":)" + std::to_string(op_start + 5 * kMs) + R"(,"end_ns":)" +
      std::to_string(op_start + 6 * kMs) + R"(,"tid":11,"cpu_ns":1000000,"self_cpu_ns":1000000}]})";
  ASSERT_TRUE(analysis::testing::WriteZstdFile(node + "/detail/operators-200-0.json.zst", operators));
  const std::string python =
      R"({"kind":"python","pid":200,"window":{"index":1},"steps":[9,10],"step_phase":"TRAIN","complete":true,)"
      R"("start_ns":)" + std::to_string(kTestEpochNs + 1300 * kMs) + R"(,"end_ns":)" +
      std::to_string(kTestEpochNs + 1340 * kMs) +
      R"(,"profiler":"cprofile","timers":["total_time"],"profiles":[)"
      R"({"step":9,"phase":"TRAIN","timer":"total_time","start_ns":0,"end_ns":20000000,"functions":[)"
      R"({"name":"forward","file":"train.py","line":42,"calls":1,"self_s":0.004,"cumulative_s":0.012},)"
      R"({"name":"collate","file":"data.py","line":7,"calls":32,"self_s":0.002,"cumulative_s":0.003}]},)"
      R"({"step":10,"phase":"TRAIN","timer":"total_time","start_ns":0,"end_ns":21000000,"functions":[)"
      R"({"name":"forward","file":"train.py","line":42,"calls":1,"self_s":0.005,"cumulative_s":0.013}]}]})";
  ASSERT_TRUE(analysis::testing::WriteZstdFile(node + "/detail/python-200-1.json.zst", python));
}

TEST(ReportGoldenTest, TinyStepscopeRun) {
  const std::string job = ::testing::TempDir() + "/report-golden-" + std::to_string(getpid()) + "/tiny";
  WriteTinyRun(job);
  if (HasFatalFailure()) return;
  auto built = report::BuildRunReport(job, 0, "stepscope test");
  ASSERT_TRUE(built.ok()) << built.status().message();
  nlohmann::json normalized = Normalized(built->model, job, "<RUN>");
  // Compressed sizes depend on the zstd build; the rest of the overhead section is exact.
  if (normalized["overhead"].contains("bytes_on_disk")) normalized["overhead"]["bytes_on_disk"] = "<bytes>";
  CheckGolden("stepscope_tiny", normalized);
}

// torchrun --nproc-per-node 2 on node "vm": the agent (pid 300, no rank), ranks 0 and 1 (pids
// 301, 302) with 20 TRAIN steps of 40 ms that start and end together, and a DataLoader worker of
// rank 1 (pid 303). Rank 1 spends 25 ms of each step in its own code before forward; rank 0
// waits those 25 ms in backward (DDP's all-reduce). System samples every 100 ms over 0-2 s.
void WriteTwoRankRun(const std::string& job) {
  using analysis::testing::kTestEpochNs;
  using analysis::testing::TestStream;
  const std::string node = job + "/vm";
  ASSERT_TRUE(CreateDirectories(node).ok());
  constexpr int64_t kMs = 1'000'000;
  const std::string extra =
      R"("job":"ddp","command":["torchrun","--nproc-per-node","2","train_ddp.py"],"start_time_ns":)" +
      std::to_string(kTestEpochNs) + R"(,"end_time_ns":)" + std::to_string(kTestEpochNs + 2000 * kMs) +
      R"(,"exit":{"code":0},"ended":"exited with code 0","hosts":["vm"],"capabilities":{"gpu":{"available":false,)"
      R"("reason":"no NVIDIA driver"},"tick_clock":"tsc"})";
  ASSERT_TRUE(WriteFileAtomically(node + "/manifest.json", analysis::testing::TestManifest("vm", "exited", extra)).ok());
  {
    TestStream system(node, "system", 299, /*system=*/true);
    ASSERT_TRUE(system.ok());
    for (int i = 0; i <= 20; ++i) {
      const uint64_t t = static_cast<uint64_t>(i) * 100 * kMs;
      system.Sample(t, "cpu/cpu0/util_pct", 50 + (i * 7) % 40);
      system.Sample(t, "cpu/cpu1/util_pct", 40 + (i * 11) % 50);
      system.Sample(t, "memory/used_pct", 30);
    }
  }
  TestStream agent(node, "proc-300-a", 300, /*system=*/false, "", 299);
  agent.Instant(1, 10 * kMs, "Lifecycle:ProcessStart");
  auto ranks = [](int rank) {
    return R"("ranks":{"RANK":")" + std::to_string(rank) + R"(","LOCAL_RANK":")" + std::to_string(rank) +
           R"(","WORLD_SIZE":"2","GROUP_RANK":"0"})";
  };
  TestStream rank0(node, "proc-301-b", 301, /*system=*/false, ranks(0), 300);
  TestStream rank1(node, "proc-302-c", 302, /*system=*/false, ranks(1), 300);
  TestStream worker(node, "proc-303-d", 303, /*system=*/false, ranks(1), 302);
  ASSERT_TRUE(rank0.ok() && rank1.ok() && worker.ok());
  for (int step = 0; step < 20; ++step) {
    const uint64_t t = (500 + step * 50) * kMs;
    for (TestStream* proc : {&rank0, &rank1}) {
      const uint64_t own = proc == &rank1 ? 25 * kMs : 0;  // rank 1's extra work
      proc->StepBegin(11, t, store::Phase::kTrain, step);
      proc->Begin(11, t, "DataLoaderIter");
      proc->End(11, t + 2 * kMs, "DataLoaderIter");
      proc->Begin(11, t + 2 * kMs + own, "Forward");
      proc->End(11, t + 7 * kMs + own, "Forward");
      proc->Begin(11, t + 7 * kMs + own, "Backward");
      proc->End(11, t + 37 * kMs, "Backward");
      proc->Begin(11, t + 37 * kMs, "OptimizerStep");
      proc->End(11, t + 39 * kMs, "OptimizerStep");
      proc->StepEnd(11, t + 40 * kMs, store::Phase::kTrain, step);
    }
    worker.Begin(1, t, "DataLoaderWorker");
    worker.End(1, t + 1 * kMs, "DataLoaderWorker");
  }
}

TEST(ReportGoldenTest, TwoRanksOnOneNode) {
  const std::string job = ::testing::TempDir() + "/report-golden-" + std::to_string(getpid()) + "/ddp";
  WriteTwoRankRun(job);
  if (HasFatalFailure()) return;
  auto built = report::BuildRunReport(job, 0, "stepscope test");
  ASSERT_TRUE(built.ok()) << built.status().message();
  nlohmann::json normalized = Normalized(built->model, job, "<RUN>");
  if (normalized["overhead"].contains("bytes_on_disk")) normalized["overhead"]["bytes_on_disk"] = "<bytes>";
  CheckGolden("stepscope_two_ranks", normalized);
}

}  // namespace
}  // namespace stepscope
