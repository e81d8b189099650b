// Each section builder of the report model on small hand-built models: exact phases,
// percentiles, histogram counts, operator and function tables, and the "why" of sections the data
// cannot fill.
#include <cmath>
#include <map>
#include <utility>
#include <vector>
#include <string>

#include <gtest/gtest.h>

#include "analysis/model.h"
#include "analysis/vocabulary.h"
#include "report/report_model.h"
#include "report/report_model_context.h"
#include "report/report_sections_detail.h"
#include "report/report_sections_gpu.h"
#include "report/report_sections_job.h"
#include "report/report_sections_overhead.h"
#include "report/report_sections_rules.h"
#include "report/report_sections_steps.h"
#include "report/report_sections_verdict.h"

namespace stepscope::report {
namespace {

constexpr int64_t kBaseNs = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

// One node "n0": two cores sampled at 0, 1 and 3 s; TRAIN steps 0-4 from 1 s, 200 ms apart,
// lasting 10, 20, 30, 40, 100 ms; operators on pid 7 and a Forward span in step 0.
analysis::Model SmallModel(analysis::ModelSource source = analysis::ModelSource::kStepscope, bool gpu = false) {
  analysis::ModelBuilder builder(source);
  analysis::NodeFacts facts;
  facts.name = "n0";
  const uint32_t node = builder.AddNode(facts);
  const uint32_t cpu0 = builder.SeriesFor(node, "cpu", "cpu0", "CPUUtilization");
  const uint32_t cpu1 = builder.SeriesFor(node, "cpu", "cpu1", "CPUUtilization");
  const int64_t times[] = {0, 1 * kS, 3 * kS};
  const double v0[] = {10, 20, 30}, v1[] = {30, 40, 50};
  for (int i = 0; i < 3; ++i) {
    builder.AddSample(cpu0, kBaseNs + times[i], v0[i]);
    builder.AddSample(cpu1, kBaseNs + times[i], v1[i]);
  }
  if (gpu) {
    const uint32_t g = builder.SeriesFor(node, "gpu", "gpu0", "GPUUtilization");
    for (int i = 0; i <= 10; ++i) builder.AddSample(g, kBaseNs + i * 100 * kMs, 10.0 * i);
  }
  const int64_t durations_ms[] = {10, 20, 30, 40, 100};
  for (int i = 0; i < 5; ++i) {
    analysis::FrameworkEvent step;
    step.start_ns = kBaseNs + 1 * kS + i * 200 * kMs;
    step.end_ns = step.start_ns + durations_ms[i] * kMs;
    step.step = i;
    step.node = node;
    step.phase = builder.Intern("Step:ModeKeys.TRAIN");
    step.name = builder.Intern("Step:ModeKeys.TRAIN");
    builder.AddEvent(step);
  }
  analysis::FrameworkEvent op;
  op.node = node;
  op.pid = 7;
  op.phase = builder.Intern("cpu_functions");
  op.category = builder.Intern("cpu_op");
  op.name = builder.Intern("aten::mm");
  for (int i = 0; i < 2; ++i) {
    op.start_ns = kBaseNs + 1 * kS + i * 5 * kMs;
    op.end_ns = op.start_ns + 5 * kMs;
    const analysis::EventArg args[] = {builder.IntArg("cpu_ns", 5 * kMs), builder.IntArg("self_cpu_ns", 4 * kMs)};
    builder.AddEvent(op, args);
  }
  op.name = builder.Intern("aten::relu");
  op.start_ns = kBaseNs + 1 * kS + 1 * kMs;
  op.end_ns = op.start_ns + 2 * kMs;
  builder.AddEvent(op);
  analysis::FrameworkEvent forward;
  forward.node = node;
  forward.phase = builder.Intern("Forward");
  forward.name = builder.Intern("Forward");
  forward.start_ns = kBaseNs + 1 * kS;
  forward.end_ns = forward.start_ns + 8 * kMs;
  builder.AddEvent(forward);
  return std::move(builder).Finish();
}

struct Fixture {
  analysis::Model model;
  nlohmann::json rules = nlohmann::json::object();
  nlohmann::json run_info;
  nlohmann::json python_tables;
  ReportContext Context() const {
    ReportContext context;
    context.model = &model;
    context.rules = &rules;
    context.run_info = run_info.is_object() ? &run_info : nullptr;
    context.python_tables = python_tables.is_array() ? &python_tables : nullptr;
    context.start_ns = model.first_ns();
    context.end_ns = model.last_ns();
    return context;
  }
};

TEST(JobSummaryTest, SplitsTheJobAtTheFirstStepStartAndTheLastStepEnd) {
  Fixture f{SmallModel()};
  const nlohmann::json summary = BuildJobSummary(f.Context());
  ASSERT_EQ(summary["available"], true);
  ASSERT_EQ(summary["phases"].size(), 3u);
  EXPECT_EQ(summary["phases"][0]["name"], "initialization");
  EXPECT_EQ(summary["phases"][0]["start_ns"], kBaseNs);
  EXPECT_EQ(summary["phases"][0]["end_ns"], kBaseNs + 1 * kS);
  EXPECT_DOUBLE_EQ(summary["phases"][0]["share"].get<double>(), 1.0 / 3.0);
  EXPECT_EQ(summary["phases"][1]["name"], "training_loop");
  EXPECT_EQ(summary["phases"][1]["end_ns"], kBaseNs + 1900 * kMs);
  EXPECT_DOUBLE_EQ(summary["phases"][1]["duration_s"].get<double>(), 0.9);
  EXPECT_EQ(summary["phases"][2]["name"], "finalization");
  EXPECT_DOUBLE_EQ(summary["phases"][2]["duration_s"].get<double>(), 1.1);
}

TEST(JobSummaryTest, WithoutStepsSaysWhy) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  builder.AddNode(analysis::NodeFacts{.name = "n0"});
  Fixture f{std::move(builder).Finish()};
  const nlohmann::json summary = BuildJobSummary(f.Context());
  EXPECT_EQ(summary["available"], false);
  EXPECT_NE(summary["why"].get<std::string>().find("No training step"), std::string::npos);
}

TEST(StepsSectionTest, ReadsStepOutliersInTheReferencesOnePhaseShapeWithStringNumbers) {
  // One phase on a node: step_details[node] = {"phase", "step_numbers": ["4"]}, as SageMaker writes.
  Fixture f{SmallModel()};
  f.rules = nlohmann::json::parse(R"({"rules": [{"Rule": "StepOutlier", "Details": {"step_details": {"n0":
      {"phase": "Step:ModeKeys.TRAIN", "step_numbers": ["4"], "number_of_outliers": 1}}}}]})");
  const nlohmann::json steps = BuildStepsSection(f.Context());
  ASSERT_EQ(steps["nodes"].size(), 1u);
  EXPECT_EQ(steps["nodes"][0]["outliers"], nlohmann::json::array({4}));
  EXPECT_EQ(steps["nodes"][0]["outlier_points"]["step"], nlohmann::json::array({4}));
}

TEST(StepsSectionTest, ExactStatisticsHistogramAndOutliers) {
  Fixture f{SmallModel()};
  f.rules = nlohmann::json::parse(R"({"rules": [{"Rule": "StepOutlier", "Details": {"step_details": {"n0":
      {"Step:ModeKeys.TRAIN": {"step_numbers": [4]}}}}}]})");
  const nlohmann::json steps = BuildStepsSection(f.Context());
  ASSERT_EQ(steps["available"], true);
  ASSERT_EQ(steps["nodes"].size(), 1u);
  const nlohmann::json& train = steps["nodes"][0];
  EXPECT_EQ(train["node"], "n0");
  EXPECT_EQ(train["phase"], "TRAIN");
  EXPECT_EQ(train["count"], 5);
  EXPECT_DOUBLE_EQ(train["mean_ms"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(train["std_ms"].get<double>(), std::sqrt(1000.0));
  EXPECT_DOUBLE_EQ(train["min_ms"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(train["p50_ms"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(train["p95_ms"].get<double>(), 88.0);  // numpy: 40 + 0.8 * 60
  EXPECT_DOUBLE_EQ(train["p99_ms"].get<double>(), 97.6);
  EXPECT_DOUBLE_EQ(train["max_ms"].get<double>(), 100.0);
  EXPECT_EQ(train["outliers"], nlohmann::json::parse("[4]"));
  // The outlier with its duration, for the per-step line.
  EXPECT_EQ(train["outlier_points"]["step"], nlohmann::json::parse("[4]"));
  EXPECT_EQ(train["outlier_points"]["duration_ms"], nlohmann::json::parse("[100.0]"));
  // One node, one phase: the shared histogram has one series.
  const nlohmann::json& histogram = steps["histogram"];
  ASSERT_EQ(histogram["series"].size(), 1u);
  EXPECT_EQ(histogram["series"][0]["label"], "n0 · TRAIN");
  EXPECT_EQ(histogram["series"][0]["rank"], nullptr);
  const nlohmann::json& counts = histogram["series"][0]["counts"];
  ASSERT_EQ(counts.size(), 50u);
  ASSERT_EQ(histogram["bin_edges_ms"].size(), 51u);
  EXPECT_DOUBLE_EQ(histogram["bin_edges_ms"][0].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(histogram["bin_edges_ms"][50].get<double>(), 100.0);
  for (int bin : {0, 5, 11, 16, 49}) EXPECT_EQ(counts[bin], 1) << "bin " << bin;
  int64_t total = 0;
  for (const auto& count : counts) total += count.get<int64_t>();
  EXPECT_EQ(total, 5);
  EXPECT_EQ(train["series"]["step"], nlohmann::json::parse("[0, 1, 2, 3, 4]"));
  EXPECT_EQ(train["series"]["duration_ms"], nlohmann::json::parse("[10.0, 20.0, 30.0, 40.0, 100.0]"));
  EXPECT_EQ(train["series"]["downsampled"], false);
  // One process, no ranks: no per-rank rows.
  EXPECT_EQ(steps["ranks"], nlohmann::json::array());
  EXPECT_EQ(steps["ranks_total"], 0);
}

TEST(StepsSectionTest, OneHistogramOnSharedBinEdgesWithASeriesPerNode) {
  // Node a: TRAIN steps of 10 and 20 ms; node b: 30 and 110 ms. One set of edges spans 10..110.
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  const uint32_t a = builder.AddNode(analysis::NodeFacts{.name = "a"});
  const uint32_t b = builder.AddNode(analysis::NodeFacts{.name = "b"});
  const std::pair<uint32_t, int64_t> steps[] = {{a, 10}, {a, 20}, {b, 30}, {b, 110}};
  for (int i = 0; i < 4; ++i) {
    analysis::FrameworkEvent step;
    step.node = steps[i].first;
    step.start_ns = kBaseNs + i * kS;
    step.end_ns = step.start_ns + steps[i].second * kMs;
    step.step = i % 2;
    step.phase = step.name = builder.Intern("Step:ModeKeys.TRAIN");
    builder.AddEvent(step);
  }
  Fixture f{std::move(builder).Finish()};
  const nlohmann::json histogram = BuildStepsSection(f.Context())["histogram"];
  ASSERT_EQ(histogram["bin_edges_ms"].size(), 51u);
  EXPECT_DOUBLE_EQ(histogram["bin_edges_ms"][0].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(histogram["bin_edges_ms"][50].get<double>(), 110.0);
  ASSERT_EQ(histogram["series"].size(), 2u);
  EXPECT_EQ(histogram["series"][0]["label"], "a · TRAIN");
  EXPECT_EQ(histogram["series"][1]["label"], "b · TRAIN");
  // 2 ms bins from 10 ms: 10 -> bin 0, 20 -> bin 5, 30 -> bin 10, 110 -> the last bin (closed).
  const auto bins_of = [](const nlohmann::json& counts) {
    std::vector<int> bins;
    for (size_t i = 0; i < counts.size(); ++i) {
      for (int64_t k = 0; k < counts[i].get<int64_t>(); ++k) bins.push_back(static_cast<int>(i));
    }
    return bins;
  };
  EXPECT_EQ(bins_of(histogram["series"][0]["counts"]), (std::vector<int>{0, 5}));
  EXPECT_EQ(bins_of(histogram["series"][1]["counts"]), (std::vector<int>{10, 49}));
}

// torchrun --nproc-per-node 2 on node "n": ranks 0 and 1 (pids 20, 21) with steps of 40 ms, rank 0
// waiting 30 ms of each in backward; the agent (pid 19) has no rank.
TEST(StepsSectionTest, NodesWithSeveralRanksGetPerRankRows) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "n";
  const uint32_t node = builder.AddNode(facts);
  for (int32_t pid : {19, 20, 21}) {
    analysis::ProcessFacts process;
    process.node = node;
    process.pid = pid;
    if (pid != 19) {
      process.rank = process.local_rank = pid - 20;
      process.world_size = 2;
    }
    builder.AddProcess(process);
  }
  for (int i = 0; i < 3; ++i) {
    for (int32_t pid : {20, 21}) {
      analysis::FrameworkEvent step;
      step.node = node;
      step.pid = pid;
      step.start_ns = kBaseNs + i * 100 * kMs;
      step.end_ns = step.start_ns + (40 + i) * kMs;
      step.step = i;
      step.phase = step.name = builder.Intern("Step:ModeKeys.TRAIN");
      builder.AddEvent(step);
      analysis::FrameworkEvent backward = step;
      backward.step = -1;
      backward.start_ns = step.start_ns + 5 * kMs;
      backward.end_ns = backward.start_ns + (pid == 20 ? 30 : 2) * kMs;
      backward.phase = backward.name = builder.Intern("Backward");
      builder.AddEvent(backward);
    }
  }
  Fixture f{std::move(builder).Finish()};
  const nlohmann::json steps = BuildStepsSection(f.Context());
  ASSERT_EQ(steps["nodes"].size(), 1u);
  EXPECT_EQ(steps["nodes"][0]["count"], 6);  // the node's row pools its ranks
  // The histogram has a series per rank instead of the pooled node.
  const nlohmann::json& series = steps["histogram"]["series"];
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0]["label"], "n · rank 0 · TRAIN");
  EXPECT_EQ(series[1]["rank"], 1);
  ASSERT_EQ(steps["ranks"].size(), 2u);
  EXPECT_EQ(steps["ranks_total"], 2);
  const nlohmann::json& rank0 = steps["ranks"][0];
  EXPECT_EQ(rank0["node"], "n");
  EXPECT_EQ(rank0["rank"], 0);
  EXPECT_EQ(rank0["local_rank"], 0);
  EXPECT_EQ(rank0["world_size"], 2);
  EXPECT_EQ(rank0["pid"], 20);
  EXPECT_EQ(rank0["pids"], nlohmann::json::array({20}));
  EXPECT_EQ(rank0["phase"], "TRAIN");
  EXPECT_EQ(rank0["count"], 3);
  EXPECT_DOUBLE_EQ(rank0["p50_ms"].get<double>(), 41.0);
  EXPECT_DOUBLE_EQ(rank0["p95_ms"].get<double>(), 41.9);
  EXPECT_DOUBLE_EQ(rank0["max_ms"].get<double>(), 42.0);
  EXPECT_DOUBLE_EQ(rank0["backward_p50_ms"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(rank0["outside_backward_p50_ms"].get<double>(), 11.0);
  const nlohmann::json& rank1 = steps["ranks"][1];
  EXPECT_EQ(rank1["rank"], 1);
  EXPECT_EQ(rank1["pid"], 21);
  EXPECT_DOUBLE_EQ(rank1["outside_backward_p50_ms"].get<double>(), 39.0);
}

TEST(FrameworkSectionTest, StepPhasesOthersOperatorsAndGeneral) {
  Fixture f{SmallModel()};
  const nlohmann::json framework = BuildFrameworkSection(f.Context());
  ASSERT_EQ(framework["available"], true);
  EXPECT_DOUBLE_EQ(framework["phases"]["TRAIN_s"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(framework["phases"]["EVAL_s"].get<double>(), 0.0);
  EXPECT_NEAR(framework["phases"]["others_s"].get<double>(), 0.7, 1e-12);  // 0.9 s loop - 0.2 s of steps
  EXPECT_DOUBLE_EQ(framework["general"]["Forward"].get<double>(), 0.008);
  ASSERT_EQ(framework["cpu_operators"].size(), 2u);
  EXPECT_EQ(framework["cpu_operators"][0]["name"], "aten::mm");
  EXPECT_DOUBLE_EQ(framework["cpu_operators"][0]["total_ms"].get<double>(), 10.0);
  // aten::relu (2 ms) runs inside the first aten::mm: shares are of self time and add up to 1.
  EXPECT_DOUBLE_EQ(framework["cpu_operators"][0]["self_ms"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(framework["cpu_operators"][0]["share"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(framework["cpu_operators"][1]["share"].get<double>(), 0.2);
  EXPECT_EQ(framework["cpu_operators"][0]["calls"], 2);
  EXPECT_EQ(framework["cpu_operators"][1]["name"], "aten::relu");
  EXPECT_EQ(framework["gpu_operators"], nlohmann::json::array());
}

TEST(FrameworkSectionTest, OptimizerStepIsFrameworkTimeInsideTheStepsNotASecondStep) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "n0";
  const uint32_t node = builder.AddNode(facts);
  auto span = [&](std::string_view phase, int64_t start_ms, int64_t end_ms, int64_t step) {
    analysis::FrameworkEvent event;
    event.node = node;
    event.phase = event.name = builder.Intern(phase);
    event.start_ns = kBaseNs + start_ms * kMs;
    event.end_ns = kBaseNs + end_ms * kMs;
    event.step = step;
    builder.AddEvent(event);
  };
  for (int i = 0; i < 2; ++i) {
    span("Step:ModeKeys.TRAIN", i * 100, i * 100 + 100, i);
    span("OptimizerStep", i * 100 + 80, i * 100 + 100, -1);
  }
  Fixture f{std::move(builder).Finish()};
  const nlohmann::json framework = BuildFrameworkSection(f.Context());
  EXPECT_DOUBLE_EQ(framework["phases"]["TRAIN_s"].get<double>(), 0.2);
  EXPECT_FALSE(framework["phases"].contains("OptimizerStep_s")) << framework["phases"];
  EXPECT_DOUBLE_EQ(framework["phases"]["others_s"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(framework["general"]["OptimizerStep"].get<double>(), 0.04);
}

TEST(FrameworkSectionTest, WorkerProcessTimeIsKeptApartAndKinetoCategoriesReadable) {
  // pid 1 trains (a step, 100 ms of CUDA runtime calls); pid 2, its DataLoader worker, is busy
  // 300 ms fetching batches in parallel: more than the loop's wall time, never added to it.
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  const uint32_t node = builder.AddNode(analysis::NodeFacts{.name = "n0"});
  auto span = [&](int32_t pid, const char* phase, int64_t start_ms, int64_t duration_ms, int64_t step = -1) {
    analysis::FrameworkEvent event;
    event.node = node;
    event.pid = pid;
    event.phase = event.name = builder.Intern(phase);
    event.start_ns = kBaseNs + start_ms * kMs;
    event.end_ns = event.start_ns + duration_ms * kMs;
    event.step = step;
    builder.AddEvent(event);
  };
  span(1, "Step:ModeKeys.TRAIN", 0, 200, 0);
  span(1, "cuda_runtime", 10, 60);
  span(1, "cat:cuda_runtime", 100, 40);
  span(2, "DataLoaderWorker", 0, 150);
  span(2, "DataLoaderWorker", 20, 150);
  Fixture f{std::move(builder).Finish()};
  const nlohmann::json framework = BuildFrameworkSection(f.Context());
  EXPECT_EQ(framework["general"], nlohmann::json::parse(R"({"CUDA runtime": 0.1})"));
  EXPECT_EQ(framework["workers"]["processes"], 1);
  EXPECT_DOUBLE_EQ(framework["workers"]["busy_s"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(framework["workers"]["phases"]["DataLoaderWorker"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(framework["phases"]["TRAIN_s"].get<double>(), 0.2);
}

TEST(SystemUsageTest, RuleStatisticsPerNodeAndTheCpuTotalTimeline) {
  Fixture f{SmallModel()};
  f.rules = nlohmann::json::parse(R"({"rules": [{"Rule": "OverallSystemUsage", "Details": {"CPU": {"n0":
      {"max": 45.0, "p99": 44.8, "p95": 44.0, "p50": 30.0, "min": 20.0}}, "GPU": {}}}]})");
  const nlohmann::json usage = BuildSystemUsage(f.Context());
  ASSERT_EQ(usage["available"], true);
  ASSERT_EQ(usage["nodes"][0]["metrics"].size(), 1u);
  EXPECT_EQ(usage["nodes"][0]["metrics"][0]["metric"], "CPU");
  EXPECT_EQ(usage["nodes"][0]["metrics"][0]["p95"], 44.0);
  EXPECT_EQ(usage["nodes"][0]["sentences"][0],
            "The 95th percentile of the total CPU utilization on node n0 is only 44%.");
  ASSERT_EQ(usage["timeline"].size(), 1u);
  EXPECT_EQ(usage["timeline"][0]["metric"], "cpu/total/util_pct");
  EXPECT_EQ(usage["timeline"][0]["t_s"], nlohmann::json::parse("[0.0, 1.0, 3.0]"));
  EXPECT_EQ(usage["timeline"][0]["values"], nlohmann::json::parse("[20.0, 30.0, 40.0]"));
}

TEST(SystemUsageTest, HeatmapHasARowPerCoreAndGpuAndAColumnPerTimeBucket) {
  // cpu0/cpu1 at 0, 1 and 3 s; gpu0 every 100 ms from 0 to 1 s (11 samples: 11 columns).
  Fixture f{SmallModel(analysis::ModelSource::kStepscope, /*gpu=*/true)};
  const nlohmann::json heatmap = BuildSystemUsage(f.Context())["heatmap"];
  ASSERT_TRUE(heatmap.is_object());
  EXPECT_EQ(heatmap["columns"], 11);
  EXPECT_EQ(heatmap["rows_total"], 3);
  const int64_t bucket_ns = (3 * kS + 10) / 11;  // the 3 s job in 11 columns, rounded up
  EXPECT_DOUBLE_EQ(heatmap["bucket_s"].get<double>(), static_cast<double>(bucket_ns) / 1e9);
  ASSERT_EQ(heatmap["rows"].size(), 3u);
  EXPECT_EQ(heatmap["rows"][0]["device"], "cpu0");
  EXPECT_EQ(heatmap["rows"][0]["kind"], "CPU");
  EXPECT_EQ(heatmap["rows"][2]["device"], "gpu0");
  EXPECT_EQ(heatmap["rows"][2]["kind"], "GPU");
  // cpu0: 10 % at 0 s (column 0), 20 % at 1 s (column 3), 30 % at the job's end (the last column).
  const nlohmann::json null;
  EXPECT_EQ(heatmap["rows"][0]["values"],
            nlohmann::json::array({10, null, null, 20, null, null, null, null, null, null, 30}));
  // gpu0: 0..100 % in 10 % steps, averaged per 273 ms column: (0+10+20)/3, (30+40+50)/3, ...
  EXPECT_EQ(heatmap["rows"][2]["values"],
            nlohmann::json::array({10, 40, 70, 95, null, null, null, null, null, null, null}));
}

TEST(SystemUsageTest, NoCoreOrGpuSeriesMeansNoHeatmap) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  const uint32_t node = builder.AddNode(analysis::NodeFacts{.name = "n0"});
  builder.AddSample(builder.SeriesFor(node, "memory", "MemoryUsedPercent", ""), kBaseNs, 40);
  Fixture f{std::move(builder).Finish()};
  EXPECT_TRUE(BuildSystemUsage(f.Context())["heatmap"].is_null());
}

TEST(GpuSectionTest, PercentilesPerGpu) {
  Fixture f{SmallModel(analysis::ModelSource::kSageMaker, /*gpu=*/true)};
  const nlohmann::json gpu = BuildGpuSection(f.Context(), "GPUUtilization");
  ASSERT_EQ(gpu["available"], true);
  ASSERT_EQ(gpu["gpus"].size(), 1u);
  const nlohmann::json& g = gpu["gpus"][0];
  EXPECT_EQ(g["node"], "n0");
  EXPECT_EQ(g["gpu"], 0);
  EXPECT_DOUBLE_EQ(g["min"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(g["p5"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(g["p25"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(g["p50"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(g["p95"].get<double>(), 95.0);
  EXPECT_DOUBLE_EQ(g["max"].get<double>(), 100.0);
  EXPECT_EQ(g["series"]["original_points"], 11);
  const nlohmann::json memory = BuildGpuSection(f.Context(), "GPUMemoryUtilization");
  EXPECT_EQ(memory["available"], false);
  EXPECT_EQ(memory["why"], "No GPU memory utilization was recorded (imported from SageMaker profiler output).");
}

TEST(GpuSectionTest, UtilizationRowsCarryWhatElseNvmlRecorded) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  const uint32_t node = builder.AddNode(analysis::NodeFacts{.name = "n0"});
  auto series = [&](const std::string& metric) {
    const analysis::SeriesKey key = analysis::SeriesKeyForMetric(metric);
    return builder.SeriesFor(node, key.type, key.name, key.dimension);
  };
  for (int i = 0; i < 4; ++i) {
    const int64_t t = kBaseNs + i * 1000 * kMs;
    builder.AddSample(series("gpu/gpu0/util_pct"), t, 90);
    builder.AddSample(series("gpu/gpu1/util_pct"), t, 90);
    builder.AddSample(series("gpu/gpu0/pcie_tx_bytes_per_s"), t, 1000.0 * (i + 1));
    // Power cap in polls 1 and 2, idle in poll 0: half the samples throttled.
    for (const char* reason : {"power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake", "sync_boost",
                               "idle", "app_clocks"}) {
      const std::string leaf = reason;
      const bool on = (leaf == "power_cap" && (i == 1 || i == 2)) || (leaf == "idle" && i == 0);
      builder.AddSample(series("gpu/gpu0/throttle_" + leaf), t, on ? 1 : 0);
    }
    builder.AddSample(series("gpu/gpu0/ecc_uncorrected_errors"), t, i < 2 ? 0 : 1);
    builder.AddSample(series("gpu/gpu0/pid4242/sm_util_pct"), t, 50 + 10 * i);
    builder.AddSample(series("gpu/gpu0/pid4242/memory_used_bytes"), t, 1e9);
  }
  builder.AddSample(series("gpu/gpu0/xid"), kBaseNs + 2000 * kMs, 79);
  Fixture f{std::move(builder).Finish()};  // starts at kBaseNs, its first sample
  const nlohmann::json gpu = BuildGpuSection(f.Context(), "GPUUtilization");
  ASSERT_EQ(gpu["gpus"].size(), 2u);
  const nlohmann::json& health = gpu["gpus"][0]["health"];
  EXPECT_DOUBLE_EQ(health["pcie_tx_bytes_per_s"]["mean"].get<double>(), 2500.0);
  EXPECT_DOUBLE_EQ(health["pcie_tx_bytes_per_s"]["max"].get<double>(), 4000.0);
  EXPECT_EQ(health["throttle"]["samples"], 4);
  EXPECT_DOUBLE_EQ(health["throttle"]["throttled_share"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(health["throttle"]["reasons"]["power_cap"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(health["throttle"]["reasons"]["idle"].get<double>(), 0.25);
  EXPECT_EQ(health["ecc_uncorrected_errors"], 1.0);
  EXPECT_EQ(health["xid"], nlohmann::json::parse(R"([{"t_s": 2.0, "code": 79}])"));
  EXPECT_EQ(health["xid_count"], 1);
  ASSERT_EQ(health["processes"].size(), 1u);
  EXPECT_EQ(health["processes"][0]["pid"], 4242);
  EXPECT_DOUBLE_EQ(health["processes"][0]["sm_util_pct"]["mean"].get<double>(), 65.0);
  EXPECT_DOUBLE_EQ(health["processes"][0]["memory_used_bytes"]["max"].get<double>(), 1e9);
  // gpu1 has no deeper series: no health at all; the memory section never carries it.
  EXPECT_FALSE(gpu["gpus"][1].contains("health"));
}

TEST(GpuSectionTest, NoGpuOnAStepscopeRunGivesNvmlsReason) {
  Fixture f{SmallModel()};
  f.run_info = nlohmann::json::parse(
      R"({"nodes": [{"name": "n0", "capabilities": {"gpu": {"available": false, "reason": "NVML not found"}}}]})");
  const nlohmann::json gpu = BuildGpuSection(f.Context(), "GPUUtilization");
  EXPECT_EQ(gpu, nlohmann::json::parse(R"({"available": false, "why": "No GPU was seen on any node: NVML not found"})"));
}

TEST(RulesSectionsTest, RulesByTriggersFindingsBySeverityThenSaving) {
  Fixture f{SmallModel()};
  f.rules = nlohmann::json::parse(R"({"rules": [
      {"Rule": "A", "RuleTriggered": 0, "RuleParameters": "threshold:50\nmode:None", "Details": {}, "findings": [
        {"id": "A/1", "severity": "warning", "estimated_saving": 0.1, "evidence": []}]},
      {"Rule": "B", "RuleTriggered": 3, "Details": {"x": [1, 2]}, "findings": [
        {"id": "B/1", "severity": "warning", "estimated_saving": 0.3, "evidence": [{"node": "n0"}]},
        {"id": "B/2", "severity": "critical", "estimated_saving": null},
        {"id": "B/3", "severity": "info", "estimated_saving": 0.9}]}]})");
  const nlohmann::json rules = BuildRulesList(f.Context());
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0]["rule"], "B");
  EXPECT_EQ(rules[0]["triggered"], 3);
  EXPECT_EQ(rules[0]["details"], nlohmann::json::parse(R"({"x": [1, 2]})"));
  EXPECT_EQ(rules[1]["parameters"], nlohmann::json::parse(R"({"threshold": "50", "mode": "None"})"));
  const nlohmann::json findings = BuildFindings(f.Context());
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[0]["id"], "B/2");
  EXPECT_EQ(findings[0]["estimated_saving"], nullptr);
  EXPECT_EQ(findings[1]["id"], "B/1");
  EXPECT_EQ(findings[1]["evidence_total"], 1);
  EXPECT_EQ(findings[2]["id"], "A/1");
  EXPECT_EQ(findings[3]["id"], "B/3");
}

TEST(VerdictTest, OneCardPerCauseNamingEveryNodeAndTheCostliestCauseFirst) {
  Fixture f{SmallModel()};
  nlohmann::json document;
  document["rules"] = nlohmann::json::array({nlohmann::json::object()});
  document["findings"] = nlohmann::json::parse(R"([
      {"id": "S/a", "rule": "S", "severity": "critical", "title": "waits on a", "recommendation": "r", "next_step": "n",
       "estimated_saving": 0.4, "evidence": [{"node": "a"}]},
      {"id": "S/b", "rule": "S", "severity": "critical", "title": "waits on b", "recommendation": "r", "next_step": "n",
       "estimated_saving": 0.3, "evidence": [{"node": "b", "rank": 3}]},
      {"id": "T/a", "rule": "T", "severity": "warning", "title": "slow", "recommendation": "q", "next_step": "m",
       "estimated_saving": 0.1, "evidence": []}])");
  const nlohmann::json verdict = BuildVerdict(f.Context(), document);
  ASSERT_EQ(verdict["groups"].size(), 2u);
  EXPECT_EQ(verdict["groups"][0]["nodes"], nlohmann::json::parse(R"(["a", "b"])"));
  EXPECT_EQ(verdict["groups"][0]["ranks"], nlohmann::json::parse("[3]"));
  EXPECT_EQ(verdict["groups"][0]["findings"], 2);
  EXPECT_EQ(verdict["groups"][0]["next_step"], "n");
  EXPECT_EQ(verdict["sentence"], "waits on a (the same on 2 nodes); fixing it could save about 40 % of step time.");
  EXPECT_EQ(verdict["severity"], "critical");
  // TRAIN step times of the model (10, 20, 30, 40, 100 ms): p50 30 ms.
  EXPECT_EQ(verdict["figures"][0]["key"], "step_time_TRAIN_p50");
  EXPECT_DOUBLE_EQ(verdict["figures"][0]["value"].get<double>(), 30.0);
}

TEST(VerdictTest, SamplesPerSecondFromTheTrainingLoadersBatchSizeAndTheRanks) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "n0";
  const uint32_t node = builder.AddNode(facts);
  analysis::FrameworkEvent init;
  init.node = node;
  init.phase = init.name = builder.Intern("DataLoaderIterInitialize");
  init.start_ns = init.end_ns = kBaseNs;
  const analysis::EventArg batch[] = {builder.IntArg("batch_size", 32)};
  builder.AddEvent(init, batch);
  // Two ranks run steps 0-9 together, 100 ms each: 10 steps/s over the 1 s loop.
  for (int32_t pid : {10, 11}) {
    for (int i = 0; i < 10; ++i) {
      analysis::FrameworkEvent step;
      step.node = node;
      step.pid = pid;
      step.phase = step.name = builder.Intern("Step:ModeKeys.TRAIN");
      step.start_ns = kBaseNs + i * 100 * kMs;
      step.end_ns = step.start_ns + 100 * kMs;
      step.step = i;
      builder.AddEvent(step);
    }
  }
  Fixture f{std::move(builder).Finish()};
  nlohmann::json document;
  document["findings"] = nlohmann::json::array();
  const nlohmann::json verdict = BuildVerdict(f.Context(), document);
  std::map<std::string, double> figures;
  for (const auto& figure : verdict["figures"]) figures[figure["key"]] = figure["value"].get<double>();
  EXPECT_DOUBLE_EQ(figures.at("train_steps_per_s"), 10.0);
  EXPECT_DOUBLE_EQ(figures.at("train_samples_per_s"), 10.0 * 32 * 2);
}

TEST(VerdictTest, OtherProcessesFillingTheHostAreSaidFirst) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "vm";
  facts.cpu_cores = 2;
  const uint32_t node = builder.AddNode(facts);
  const uint32_t host = builder.SeriesFor(node, "stepscope", "cpu/total/util_pct", "");
  const uint32_t job = builder.SeriesFor(node, "stepscope", "process/cpu_pct", "");
  for (int i = 0; i < 10; ++i) {
    builder.AddSample(host, kBaseNs + i * kS, 100.0);
    builder.AddSample(job, kBaseNs + i * kS, 37.5);
  }
  Fixture f{std::move(builder).Finish()};
  nlohmann::json document;
  document["rules"] = nlohmann::json::array({nlohmann::json::object()});
  document["findings"] = nlohmann::json::array();
  const nlohmann::json verdict = BuildVerdict(f.Context(), document);
  EXPECT_EQ(verdict["sentence"],
            "Other processes fill the CPU of vm: the host's CPU is 100 % busy and this job uses 37.5 % of one core "
            "(of 2 cores). No rule found a problem in the job itself.");
}

TEST(RulesSectionsTest, GpuSectionsOfARunWithoutGpusSayWhy) {
  Fixture f{SmallModel()};
  f.rules = nlohmann::json::parse(R"({"rules": [{"Rule": "CPUBottleneck", "Details": {"bottlenecks": {}}},
      {"Rule": "StepTimeBreakdown", "Details": {}}]})");
  nlohmann::json document;
  AddRuleDetailSections(f.Context(), document);
  EXPECT_EQ(document["cpu_bottlenecks"]["available"], false);
  EXPECT_EQ(document["cpu_bottlenecks"]["why"],
            "A CPU bottleneck is a GPU left idle by a busy CPU, and no GPU utilization was recorded (recorded by "
            "stepscope).");
  EXPECT_EQ(document["step_time_breakdown"]["available"], false);
  EXPECT_EQ(document["batch_size"]["available"], false);
  EXPECT_EQ(document["data_loading"]["available"], false);
}

TEST(RulesSectionsTest, BottlenecksAddUpToASentenceAndABandInsteadOfOneRowPerSnapshot) {
  Fixture f{SmallModel(analysis::ModelSource::kStepscope, /*gpu=*/true)};
  // Snapshots 1 s and 3 s after the model's first sample, of 40 the rule counted.
  const double t0 = static_cast<double>(kBaseNs) / 1e9;
  f.rules = {{"rules", nlohmann::json::array({{{"Rule", "CPUBottleneck"}, {"Datapoints", 40},
                                               {"Details", {{"bottlenecks", {{std::to_string(t0 + 1), {{"CPUs", 2}}},
                                                                             {std::to_string(t0 + 3), {{"CPUs", 2}}}}},
                                                            {"low_gpu_utilization", 2}}}}})}};
  nlohmann::json document;
  AddRuleDetailSections(f.Context(), document);
  const nlohmann::json& summary = document["cpu_bottlenecks"]["summary"];
  EXPECT_EQ(summary["snapshots"], 2);
  EXPECT_EQ(summary["sentence"],
            "The CPU was the bottleneck in 2 of 40 system snapshots (5.0 %), between 1 s and 3 s after the start.");
  int64_t in_band = 0;
  for (const auto& count : summary["band"]["counts"]) in_band += count.get<int64_t>();
  EXPECT_EQ(in_band, 2);
}

TEST(OperatorsSectionTest, TopOperatorsOfEachWindowFromTheModel) {
  Fixture f{SmallModel()};
  f.run_info = nlohmann::json::parse(R"({"detail_windows": [{"node": "n0", "kind": "operators", "pid": 7,
      "window": 0, "steps": [0, 0], "step_phase": "TRAIN", "start_ns": )" + std::to_string(kBaseNs + kS) +
                                     R"(, "end_ns": )" + std::to_string(kBaseNs + kS + 10 * kMs) + "}]}");
  const nlohmann::json operators = BuildOperatorsSection(f.Context());
  ASSERT_EQ(operators["available"], true);
  const nlohmann::json& rows = operators["windows"][0]["operators"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], nlohmann::json::parse(R"({"name": "aten::mm", "calls": 2, "cpu_total_us": 10000.0,
      "self_cpu_us": 8000.0, "device_total_us": 0.0})"));
  EXPECT_EQ(rows[1]["name"], "aten::relu");
  EXPECT_EQ(rows[1]["cpu_total_us"], 2000.0);
}

TEST(OperatorsSectionTest, ImportedAndMissingWindowsSayWhy) {
  Fixture stepscope_run{SmallModel()};
  EXPECT_NE(BuildOperatorsSection(stepscope_run.Context())["why"].get<std::string>().find("No operators detail window"),
            std::string::npos);
  Fixture imported{SmallModel(analysis::ModelSource::kSageMaker)};
  const nlohmann::json section = BuildOperatorsSection(imported.Context());
  EXPECT_EQ(section["available"], false);
  EXPECT_NE(section["why"].get<std::string>().find("imported from SageMaker profiler output"), std::string::npos);
  EXPECT_EQ(BuildPythonProfile(imported.Context())["available"], false);
  EXPECT_EQ(BuildOverhead(imported.Context())["available"], false);
  EXPECT_EQ(BuildCapabilities(imported.Context())["available"], false);
}

TEST(PythonProfileTest, MergesTheWallClockTablesAcrossWindows) {
  Fixture f{SmallModel()};
  f.python_tables = nlohmann::json::parse(R"([
      {"node": "n0", "pid": 7, "window": 2, "profiler": "cprofile", "timer": "total_time", "steps": [9, 9],
       "profiled_s": 1.0, "functions": [{"name": "f", "file": "a.py", "line": 1, "calls": 2, "self_s": 0.5,
       "cumulative_s": 0.6}, {"name": "g", "file": "a.py", "line": 9, "calls": 1, "self_s": 0.2, "cumulative_s": 0.2}]},
      {"node": "n0", "pid": 7, "window": 2, "profiler": "cprofile", "timer": "cpu_time", "steps": [10, 10],
       "profiled_s": 1.0, "functions": [{"name": "g", "file": "a.py", "line": 9, "calls": 1, "self_s": 9.0}]},
      {"node": "n0", "pid": 7, "window": 3, "profiler": "cprofile", "timer": "total_time", "steps": [12, 12],
       "profiled_s": 0.5, "functions": [{"name": "f", "file": "a.py", "line": 1, "calls": 1, "self_s": 0.25,
       "cumulative_s": 0.3}]}])");
  const nlohmann::json profile = BuildPythonProfile(f.Context());
  ASSERT_EQ(profile["available"], true);
  EXPECT_EQ(profile["timer"], "total_time");
  EXPECT_DOUBLE_EQ(profile["profiled_s"].get<double>(), 1.5);
  ASSERT_EQ(profile["functions"].size(), 2u);
  EXPECT_EQ(profile["functions"][0]["function"], "f");
  EXPECT_EQ(profile["functions"][0]["calls"], 3);
  EXPECT_DOUBLE_EQ(profile["functions"][0]["self_s"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(profile["functions"][1]["self_s"].get<double>(), 0.2);
  EXPECT_EQ(profile["windows"].size(), 2u);
}

TEST(ReportModelTest, TopLevelShapeAndJobBoundsFromTheRunFacts) {
  const analysis::Model model = SmallModel();
  ReportInputs inputs;
  inputs.model = &model;
  inputs.job = "small";
  inputs.path = "runs/small";
  inputs.rules_source = "evaluated";
  inputs.run_info = nlohmann::json::parse(R"({"job": "demo", "start_time_ns": )" + std::to_string(kBaseNs - kS) +
                                          R"(, "end_time_ns": )" + std::to_string(kBaseNs + 4 * kS) +
                                          R"(, "ended": {"code": 0, "description": "exited with code 0"}})");
  const nlohmann::json document = BuildReportModel(inputs);
  EXPECT_EQ(document["schema"], "stepscope.report");
  EXPECT_EQ(document["version"], 1);
  EXPECT_EQ(document["kind"], "report");
  EXPECT_EQ(document["limits"]["max_points_per_series"], 2000);
  EXPECT_EQ(document["run"]["job"], "demo");
  EXPECT_EQ(document["run"]["duration_s"], 5.0);
  EXPECT_EQ(document["run"]["ended"], nlohmann::json::parse(R"({"code": 0, "description": "exited with code 0"})"));
  EXPECT_EQ(document["job_summary"]["phases"][0]["duration_s"], 2.0);
  for (const char* section : {"job_summary", "system_usage", "framework", "steps", "gpu_utilization", "gpu_memory",
                              "workload_balancing", "data_loading", "batch_size", "cpu_bottlenecks", "io_bottlenecks",
                              "step_time_breakdown", "python_profile", "operators", "overhead", "capabilities"}) {
    ASSERT_TRUE(document.contains(section)) << section;
    EXPECT_TRUE(document[section]["available"].is_boolean()) << section;
    if (!document[section]["available"].get<bool>()) EXPECT_TRUE(document[section]["why"].is_string()) << section;
  }
}

TEST(OverheadSectionTest, SamplerShareComesFromTheBusiestNodesManifest) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  // 0.2 s of sampler CPU over 100 s is 0.2 % of a core; 0.1 s over 100 s is 0.1 %.
  auto node = [](const char* name, int64_t duration_ns, uint64_t cpu_ns) {
    analysis::NodeFacts facts{.name = name, .has_manifest = true};
    facts.manifest.start_time_ns = 1'000'000'000;
    facts.manifest.end_time_ns = duration_ns > 0 ? facts.manifest.start_time_ns + duration_ns : 0;
    facts.manifest.sampler.known = true;
    facts.manifest.sampler.cpu_ns = cpu_ns;
    return facts;
  };
  builder.AddNode(node("a", 100'000'000'000, 200'000'000));
  builder.AddNode(node("b", 100'000'000'000, 100'000'000));
  builder.AddNode(node("c", 0, 900'000'000));  // the job has not ended: no duration
  Fixture f{std::move(builder).Finish()};
  f.run_info = nlohmann::json::parse(R"({"dropped_events": 3, "bytes_on_disk": {"total": 10}})");
  const nlohmann::json section = BuildOverhead(f.Context());
  EXPECT_EQ(section["dropped_events"], 3);
  EXPECT_DOUBLE_EQ(section["sampler_cpu_pct"].get<double>(), 0.2);

  Fixture unknown{SmallModel()};
  unknown.run_info = nlohmann::json::object();
  EXPECT_TRUE(BuildOverhead(unknown.Context())["sampler_cpu_pct"].is_null());
}

}  // namespace
}  // namespace stepscope::report
