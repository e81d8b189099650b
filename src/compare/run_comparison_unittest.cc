// The compare document and its text from two runs written with the real store writer
// (analysis/test_run_writer.h): the seed example's cost (3 x p3.8xlarge for 503 s vs 2 x
// p3.2xlarge for 502 s -> $6.16 vs $1.07, saving 82.6 %), step-time statistics with the
// Mann-Whitney test, phase deltas per step, operator deltas and utilization p95.
#include "compare/run_comparison.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "analysis/run_loader.h"
#include "analysis/test_run_writer.h"
#include "base/file_system.h"
#include "compare/compare_text.h"
#include "analysis/run_facts.h"

namespace stepscope::compare {
namespace {

using analysis::testing::kTestEpochNs;
using analysis::testing::TestManifest;
using analysis::testing::TestStream;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

struct RunSpec {
  std::string job;
  int64_t duration_s = 0;
  std::string instance;  // "" for none
  int instance_count = 0;
  std::vector<double> step_ms;
  double forward_ms = 0;  // a Forward span at the start of every step
  bool cpu_samples = false;
  double op_ms = 0;  // one aten::mm operator of this length, when > 0
};

std::string WriteRun(const RunSpec& spec) {
  const std::string job = ::testing::TempDir() + "/compare-" + std::to_string(getpid()) + "-" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/" + spec.job;
  const std::string node = job + "/algo-1";
  EXPECT_TRUE(CreateDirectories(node + "/detail").ok());
  std::string extra = R"("job":")" + spec.job + R"(","start_time_ns":)" + std::to_string(kTestEpochNs) +
                      R"(,"end_time_ns":)" + std::to_string(kTestEpochNs + spec.duration_s * kS) +
                      R"(,"ended":"exited with code 0")";
  if (!spec.instance.empty()) extra += R"(,"instance_type":")" + spec.instance + R"(")";
  if (spec.instance_count > 0) extra += R"(,"instance_count":)" + std::to_string(spec.instance_count);
  EXPECT_TRUE(WriteFileAtomically(node + "/manifest.json", TestManifest("algo-1", "exited", extra)).ok());
  {
    TestStream proc(node, "proc-200-abcd", 200, /*system=*/false);
    EXPECT_TRUE(proc.ok());
    uint64_t t = 2 * kS;  // the loop starts 2 s into the job
    for (size_t i = 0; i < spec.step_ms.size(); ++i) {
      const uint64_t end = t + static_cast<uint64_t>(spec.step_ms[i] * kMs);
      proc.StepBegin(11, t, store::Phase::kTrain, static_cast<int64_t>(i));
      if (spec.forward_ms > 0) {
        proc.Begin(11, t, "Forward");
        proc.End(11, t + static_cast<uint64_t>(spec.forward_ms * kMs), "Forward");
      }
      proc.StepEnd(11, end, store::Phase::kTrain, static_cast<int64_t>(i));
      t = end;
    }
  }
  if (spec.cpu_samples) {
    TestStream system(node, "system", 100, /*system=*/true);
    system.Sample(1 * kS, "cpu/cpu0/util_pct", 50);
    system.Sample(1 * kS, "cpu/cpu1/util_pct", 70);
    system.Sample(2 * kS, "cpu/cpu0/util_pct", 20);
    system.Sample(2 * kS, "cpu/cpu1/util_pct", 40);
    system.Sample(2 * kS, "memory/used_pct", 40);
  }
  if (spec.op_ms > 0) {
    const int64_t start_ns = kTestEpochNs + 2 * kS;
    const std::string document =
        R"({"schema_version":1,"kind":"operators","pid":200,"window":0,"events":[{"name":"aten::mm","tid":11,"start_ns":)" +
        std::to_string(start_ns) + R"(,"end_ns":)" + std::to_string(start_ns + static_cast<int64_t>(spec.op_ms * kMs)) +
        R"(,"cpu_ns":1,"self_cpu_ns":1}],"device_events":[]})";
    EXPECT_TRUE(analysis::testing::WriteZstdFile(node + "/detail/operators-200-0.json.zst", document));
  }
  return job;
}

class RunComparisonTest : public ::testing::Test {
 protected:
  nlohmann::json Compare(const RunSpec& a_spec, const RunSpec& b_spec, ComparedRun a_overrides = {},
                         ComparedRun b_overrides = {}) {
    const std::string a_path = WriteRun(a_spec);
    const std::string b_path = WriteRun(b_spec);
    auto a = analysis::LoadRun(a_path);
    auto b = analysis::LoadRun(b_path);
    EXPECT_TRUE(a.ok()) << a.status().message();
    EXPECT_TRUE(b.ok()) << b.status().message();
    a_model_ = std::move(*a);
    b_model_ = std::move(*b);
    a_overrides.model = &a_model_;
    a_overrides.path = a_path;
    b_overrides.model = &b_model_;
    b_overrides.path = b_path;
    return BuildComparison(a_overrides, b_overrides, rules::BuiltinInstanceCatalog(), "stepscope test");
  }

  analysis::Model a_model_;
  analysis::Model b_model_;
};

const std::vector<double> kStepsA = {10.0, 10.5, 11.0, 10.2, 10.1, 10.3};
const std::vector<double> kStepsB = {12.0, 12.5, 11.9, 12.2, 13.0, 12.1, 12.4};

TEST_F(RunComparisonTest, TheSeedExampleFromData) {
  const nlohmann::json document = Compare({"big", 503, "p3.8xlarge", 3, kStepsA, 4.0, true, 0},
                                          {"small", 502, "p3.2xlarge", 2, kStepsB, 5.0, false, 0});
  EXPECT_EQ(document["schema"], "stepscope.report");
  EXPECT_EQ(document["kind"], "compare");
  const nlohmann::json& runs = document["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["label"], "A");
  EXPECT_EQ(runs[0]["job"], "big");
  EXPECT_DOUBLE_EQ(runs[0]["duration_s"].get<double>(), 503.0);
  EXPECT_EQ(runs[0]["instance_type"], "p3.8xlarge");
  EXPECT_EQ(runs[0]["instance_count"], 3);
  EXPECT_DOUBLE_EQ(runs[0]["price_per_hour"].get<double>(), 14.688);
  EXPECT_DOUBLE_EQ(runs[0]["cost"].get<double>(), 6.16);
  EXPECT_DOUBLE_EQ(runs[1]["duration_s"].get<double>(), 502.0);
  EXPECT_DOUBLE_EQ(runs[1]["cost"].get<double>(), 1.07);
  EXPECT_EQ(document["cost"], nlohmann::json::parse(
                                  R"({"available": true, "saving": 5.09, "saving_share": 0.826, "cheaper": "B"})"));
  // The JSON as printed carries the cents exactly.
  EXPECT_NE(document.dump().find(R"("cost":6.16)"), std::string::npos);

  const std::string text = FormatComparisonText(document);
  EXPECT_NE(text.find("  A   big                                    8 min 23 s  3 x p3.8xlarge"), std::string::npos) << text;
  EXPECT_NE(text.find("$14.688"), std::string::npos) << text;
  EXPECT_NE(text.find("$6.16"), std::string::npos) << text;
  EXPECT_NE(text.find("$1.07"), std::string::npos) << text;
  EXPECT_NE(text.find("Cost: B is cheaper, saving $5.09 (82.6 %) of A's cost."), std::string::npos) << text;
  // The verdict leads: step time (significant here), then cost; no rules were given.
  EXPECT_EQ(document["verdict"]["sentence"],
            "B's TRAIN steps are 19 % slower (p50 10.2 ms vs 12.2 ms, p = 0.0034); B costs $5.09 less (82.6 %).");
  EXPECT_EQ(text.rfind("Verdict: B's TRAIN steps are 19 % slower", 0), 0u) << text;
  EXPECT_EQ(document["findings"]["available"], false);
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    EXPECT_LE(end - start, kTextWidth) << text.substr(start, end - start);
    start = end + 1;
  }
}

TEST_F(RunComparisonTest, StepTimesAreTestedPerPhase) {
  const nlohmann::json document = Compare({"a", 100, "", 0, kStepsA, 4.0, true, 0},
                                          {"b", 100, "", 0, kStepsB, 5.0, false, 0});
  const nlohmann::json& steps = document["steps"];
  ASSERT_TRUE(steps["available"].get<bool>());
  ASSERT_EQ(steps["phases"].size(), 1u);
  const nlohmann::json& train = steps["phases"][0];
  EXPECT_EQ(train["phase"], "TRAIN");
  EXPECT_EQ(train["a"]["count"], 6);
  EXPECT_EQ(train["b"]["count"], 7);
  // numpy: median(a) = 10.25, median(b) = 12.2, percentile(a, 95) = 10.875.
  EXPECT_NEAR(train["a"]["p50_ms"].get<double>(), 10.25, 1e-9);
  EXPECT_NEAR(train["b"]["p50_ms"].get<double>(), 12.2, 1e-9);
  EXPECT_NEAR(train["a"]["p95_ms"].get<double>(), 10.875, 1e-9);
  EXPECT_NEAR(train["a"]["mean_ms"].get<double>(), 62.1 / 6, 1e-9);
  EXPECT_NEAR(train["delta_p50_share"].get<double>(), (12.2 - 10.25) / 10.25, 1e-9);
  EXPECT_EQ(train["test"]["name"], "Mann-Whitney U");
  EXPECT_DOUBLE_EQ(train["test"]["u"].get<double>(), 0.0);
  EXPECT_NEAR(train["test"]["p_value"].get<double>(), 0.0034052358212947687, 1e-12);
  EXPECT_TRUE(train["test"]["significant"].get<bool>());
  // Shared histogram edges over both runs: 20 bins on [10.0, 13.0].
  EXPECT_EQ(train["a"]["histogram"]["bin_edges_ms"], train["b"]["histogram"]["bin_edges_ms"]);
  ASSERT_EQ(train["a"]["histogram"]["bin_edges_ms"].size(), 21u);
  EXPECT_NEAR(train["a"]["histogram"]["bin_edges_ms"][0].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(train["a"]["histogram"]["bin_edges_ms"][20].get<double>(), 13.0, 1e-9);

  // Forward takes 4 ms of each of A's 6 steps and 5 ms of each of B's 7: per step 4 vs 5.
  const nlohmann::json& phases = document["phases"];
  EXPECT_EQ(phases["per"], "step");
  ASSERT_EQ(phases["rows"].size(), 1u);
  EXPECT_EQ(phases["rows"][0]["name"], "Forward");
  EXPECT_NEAR(phases["rows"][0]["a_ms"].get<double>(), 4.0, 1e-9);
  EXPECT_NEAR(phases["rows"][0]["b_ms"].get<double>(), 5.0, 1e-9);
  EXPECT_NEAR(phases["rows"][0]["delta_share"].get<double>(), 0.25, 1e-9);

  // CPU per timestamp: (50 + 70) / 2 = 60 and (20 + 40) / 2 = 30; p95 = 30 + 0.95 * 30.
  const nlohmann::json& utilization = document["utilization"];
  ASSERT_EQ(utilization["rows"].size(), 2u);
  EXPECT_EQ(utilization["rows"][0]["metric"], "CPU");
  EXPECT_NEAR(utilization["rows"][0]["a_p95"].get<double>(), 58.5, 1e-9);
  EXPECT_TRUE(utilization["rows"][0]["b_p95"].is_null());
  EXPECT_EQ(utilization["rows"][1]["metric"], "CPU memory");
  EXPECT_NEAR(utilization["rows"][1]["a_p95"].get<double>(), 40.0, 1e-9);

  EXPECT_FALSE(document["operators"]["available"].get<bool>());
  EXPECT_FALSE(document["cost"]["available"].get<bool>());
  const std::string text = FormatComparisonText(document);
  EXPECT_NE(text.find("  TRAIN        6    10.25    10.88    10.35      7    12.20"), std::string::npos) << text;
  EXPECT_NE(text.find("   +19.0 %  0.0034*\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Cost: not available."), std::string::npos) << text;
}

TEST_F(RunComparisonTest, OperatorsAndOverrides) {
  ComparedRun a_override;
  a_override.instance_type = "p3.16xlarge";
  ComparedRun b_override;
  b_override.instance_count = 4;
  const nlohmann::json document = Compare({"a", 3600, "", 0, {10.0}, 0, false, 8.0},
                                          {"b", 1800, "p3.2xlarge", 1, {10.0}, 0, false, 6.0}, a_override, b_override);
  // A: no count anywhere, one node -> 1 x $28.152 for an hour; B: 4 x $3.825 for half an hour.
  EXPECT_EQ(document["runs"][0]["instance_count"], 1);
  EXPECT_DOUBLE_EQ(document["runs"][0]["cost"].get<double>(), 28.15);
  EXPECT_EQ(document["runs"][1]["instance_count"], 4);
  EXPECT_DOUBLE_EQ(document["runs"][1]["cost"].get<double>(), 7.65);
  EXPECT_DOUBLE_EQ(document["cost"]["saving"].get<double>(), 20.5);
  EXPECT_DOUBLE_EQ(document["cost"]["saving_share"].get<double>(), 0.728);  // 2050 / 2815
  const nlohmann::json& operators = document["operators"];
  ASSERT_TRUE(operators["available"].get<bool>());
  ASSERT_EQ(operators["rows"].size(), 1u);
  EXPECT_EQ(operators["rows"][0]["name"], "aten::mm");
  EXPECT_EQ(operators["rows"][0]["kind"], "cpu");
  EXPECT_NEAR(operators["rows"][0]["a_ms"].get<double>(), 8.0, 1e-9);
  EXPECT_NEAR(operators["rows"][0]["b_ms"].get<double>(), 6.0, 1e-9);
  EXPECT_NEAR(operators["rows"][0]["delta_share"].get<double>(), -0.25, 1e-9);
  EXPECT_EQ(operators["rows"][0]["a_calls"], 1);
}

TEST(FindingsDiffTest, WhatTriggeredInOneRunAndNotTheOther) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "n";
  builder.AddNode(facts);
  const analysis::Model model = std::move(builder).Finish();
  ComparedRun a{&model, "a", "", 0, nlohmann::json::parse(R"({"rules": [
      {"Rule": "DataloaderStarvation", "findings": [{"title": "waits for data"}]},
      {"Rule": "StepOutlier", "findings": [{"title": "slow steps"}]}]})")};
  ComparedRun b{&model, "b", "", 0, nlohmann::json::parse(R"({"rules": [
      {"Rule": "StepOutlier", "findings": [{"title": "slow steps"}]},
      {"Rule": "GpuIdle", "findings": [{"title": "idle"}]},
      {"Rule": "CPUBottleneck", "findings": []}]})")};
  const nlohmann::json document = BuildComparison(a, b, rules::BuiltinInstanceCatalog(), "test");
  const nlohmann::json& findings = document["findings"];
  EXPECT_EQ(findings["only_a"], nlohmann::json::parse(R"([{"rule": "DataloaderStarvation", "titles": ["waits for data"]}])"));
  EXPECT_EQ(findings["only_b"], nlohmann::json::parse(R"([{"rule": "GpuIdle", "titles": ["idle"]}])"));
  EXPECT_EQ(findings["both"][0]["rule"], "StepOutlier");
  EXPECT_NE(document["verdict"]["sentence"].get<std::string>().find(
                "B no longer triggers DataloaderStarvation; B newly triggers GpuIdle."),
            std::string::npos)
      << document["verdict"];
  const std::string text = FormatComparisonText(document);
  EXPECT_NE(text.find("  only A   DataloaderStarvation     waits for data\n"), std::string::npos) << text;
}

TEST_F(RunComparisonTest, RunFactsSplitTheJob) {
  const std::string path = WriteRun({"facts", 10, "g5.xlarge", 0, {100.0, 200.0}, 0, false, 0});
  auto model = analysis::LoadRun(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const analysis::RunFacts facts = analysis::ComputeRunFacts(*model, path);
  EXPECT_EQ(facts.job, "facts");
  EXPECT_EQ(facts.ended, "exited with code 0");
  EXPECT_EQ(facts.start_ns, kTestEpochNs);
  EXPECT_DOUBLE_EQ(facts.duration_s, 10.0);
  EXPECT_EQ(facts.instance_type, "g5.xlarge");
  EXPECT_EQ(facts.instance_count, 1);  // one node, no count given
  ASSERT_EQ(facts.phases.size(), 3u);
  EXPECT_EQ(facts.phases[0].name, "initialization");
  EXPECT_EQ(facts.phases[0].end_ns - facts.phases[0].start_ns, 2 * kS);
  EXPECT_EQ(facts.phases[1].end_ns - facts.phases[1].start_ns, 300 * kMs);
  EXPECT_EQ(facts.phases[2].end_ns, kTestEpochNs + 10 * kS);
}

TEST(CompareTextTest, HumanDurations) {
  EXPECT_EQ(HumanDuration(20.14), "20.1 s");
  EXPECT_EQ(HumanDuration(99.96), "1 min 40 s");
  EXPECT_EQ(HumanDuration(503), "8 min 23 s");
  EXPECT_EQ(HumanDuration(1817180.6), "504 h 46 min");
  EXPECT_EQ(FitText("a\tb", 10), "a b");
  EXPECT_EQ(FitText("abcdefghijk", 8), "abcde...");
}

}  // namespace
}  // namespace stepscope::compare
