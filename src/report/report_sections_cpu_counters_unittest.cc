// The CPU performance counters of a node in the system usage section, on hand-built models: IPC
// per node and per CPU where instructions and cycles were counted, the software events' rates
// where only they were, and the capability's reason where none was.
#include "report/report_sections_cpu_counters.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "analysis/model.h"
#include "analysis/vocabulary.h"
#include "report/report_sections_job.h"

namespace stepscope::report {
namespace {

constexpr int64_t kBaseNs = 1'700'000'000'000'000'000;
constexpr int64_t kS = 1'000'000'000;

struct Built {
  analysis::Model model;
  ReportContext Context() const {
    ReportContext context;
    context.model = &model;
    context.start_ns = model.first_ns();
    context.end_ns = model.last_ns();
    return context;
  }
};

// A stepscope node "n0" with a manifest whose perf capability is `capabilities`, and the
// metrics' samples at 0, 1, 2 s.
class NodeWithCounters {
 public:
  explicit NodeWithCounters(store::ManifestCapabilities capabilities) {
    analysis::NodeFacts facts;
    facts.name = "n0";
    facts.has_manifest = true;
    facts.manifest.capabilities = std::move(capabilities);
    node_ = builder_.AddNode(facts);
  }
  void Add(const std::string& metric, std::initializer_list<double> values) {
    const analysis::SeriesKey key = analysis::SeriesKeyForMetric(metric);
    const uint32_t series = builder_.SeriesFor(node_, key.type, key.name, key.dimension);
    int64_t t = kBaseNs;
    for (double value : values) builder_.AddSample(series, (t += kS), value);
  }
  Built Finish() && { return Built{std::move(builder_).Finish()}; }

 private:
  analysis::ModelBuilder builder_{analysis::ModelSource::kStepscope};
  uint32_t node_ = 0;
};

store::ManifestCapabilities Counted(const std::string& scope, const std::string& summary) {
  store::ManifestCapabilities c;
  c.perf_counters_available = true;
  c.perf_scope = scope;
  c.perf_reason = summary;
  return c;
}

TEST(CpuCountersTest, IpcPerNodeAndPerCpuWhereInstructionsAndCyclesWereCounted) {
  NodeWithCounters n(Counted("per_cpu", "per CPU: cycles, instructions"));
  n.Add("perf/total/ipc", {1.0, 2.0, 3.0});
  n.Add("perf/total/context_switches_per_s", {100, 300, 200});
  n.Add("perf/cpu0/instructions_per_s", {100, 300, 0});
  n.Add("perf/cpu0/cycles_per_s", {100, 100, 0});
  n.Add("perf/cpu10/instructions_per_s", {50, 50, 50});
  n.Add("perf/cpu10/cycles_per_s", {100, 100, 100});
  n.Add("perf/cpu2/instructions_per_s", {0, 0, 0});
  n.Add("perf/cpu2/cycles_per_s", {0, 0, 0});  // idle the whole job: no IPC, not a division by 0
  const Built built = std::move(n).Finish();
  const nlohmann::json counters = BuildCpuCounters(built.Context(), 0);
  EXPECT_EQ(counters["scope"], "per_cpu");
  EXPECT_FALSE(counters.contains("why"));
  ASSERT_EQ(counters["metrics"].size(), 2u);
  const nlohmann::json& ipc = counters["metrics"][0];
  EXPECT_EQ(ipc["metric"], "IPC");
  EXPECT_EQ(ipc["unit"], "instructions/cycle");
  EXPECT_DOUBLE_EQ(ipc["max"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(ipc["p50"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(ipc["min"].get<double>(), 1.0);
  EXPECT_EQ(counters["metrics"][1]["metric"], "Context switches");
  EXPECT_DOUBLE_EQ(counters["metrics"][1]["p50"].get<double>(), 200.0);
  // By CPU number, each Σ instructions / Σ cycles over the job.
  EXPECT_EQ(counters["per_cpu"], nlohmann::json::parse(R"([{"cpu": "cpu0", "ipc": 2.0}, {"cpu": "cpu10", "ipc": 0.5}])"));
  // The node-wide IPC also gets its timeline in the section.
  const nlohmann::json usage = BuildSystemUsage(built.Context());
  ASSERT_EQ(usage["nodes"].size(), 1u);
  EXPECT_EQ(usage["nodes"][0]["cpu_counters"], counters);
  bool ipc_timeline = false;
  for (const nlohmann::json& series : usage["timeline"]) ipc_timeline = ipc_timeline || series["metric"] == "perf/total/ipc";
  EXPECT_TRUE(ipc_timeline);
}

TEST(CpuCountersTest, SoftwareEventsOnlyInAVmGiveTheirRatesAndNoIpc) {
  NodeWithCounters n(Counted("job", "the job's processes: task-clock, context-switches, page-faults"));
  n.Add("perf/job/context_switches_per_s", {10, 20, 30});
  n.Add("perf/job/page_faults_per_s", {1000, 0, 0});
  n.Add("perf/job/task_clock_pct", {150, 150, 150});
  const Built built = std::move(n).Finish();
  const nlohmann::json counters = BuildCpuCounters(built.Context(), 0);
  EXPECT_EQ(counters["scope"], "job");
  std::vector<std::string> rows;
  for (const nlohmann::json& row : counters["metrics"]) rows.push_back(row["metric"].get<std::string>());
  EXPECT_EQ(rows, (std::vector<std::string>{"Context switches", "Page faults", "Job CPU time (task-clock)"}));
  EXPECT_DOUBLE_EQ(counters["metrics"][1]["max"].get<double>(), 1000.0);
  EXPECT_EQ(counters["metrics"][2]["unit"], "% of one core");
  EXPECT_TRUE(counters["per_cpu"].empty());
}

TEST(CpuCountersTest, NothingCountedGivesTheCapabilitysReason) {
  store::ManifestCapabilities c;
  c.perf_scope = "none";
  c.perf_reason = "not counted: cycles (not permitted (kernel.perf_event_paranoid=3): run stepscope as root)";
  NodeWithCounters n(c);
  n.Add("cpu/cpu0/util_pct", {1, 2});
  const Built built = std::move(n).Finish();
  const nlohmann::json counters = BuildCpuCounters(built.Context(), 0);
  EXPECT_TRUE(counters["metrics"].empty());
  EXPECT_EQ(counters["why"],
            "No CPU performance counter could be opened on node n0: not counted: cycles (not permitted "
            "(kernel.perf_event_paranoid=3): run stepscope as root).");
}

TEST(CpuCountersTest, ImportedNodesWithoutCounterSeriesHaveNoEntry) {
  analysis::ModelBuilder builder(analysis::ModelSource::kSageMaker);
  const uint32_t node = builder.AddNode(analysis::NodeFacts{.name = "algo-1"});
  builder.AddSample(builder.SeriesFor(node, "cpu", "cpu0", "CPUUtilization"), kBaseNs, 10);
  const Built built{std::move(builder).Finish()};
  EXPECT_TRUE(BuildCpuCounters(built.Context(), 0).is_null());
  EXPECT_FALSE(BuildSystemUsage(built.Context())["nodes"][0].contains("cpu_counters"));
}

}  // namespace
}  // namespace stepscope::report
