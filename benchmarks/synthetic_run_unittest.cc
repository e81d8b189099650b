// The synthetic run of the analysis benchmark, small: what it writes loads back exactly, as a
// stepscope run and as its SageMaker twin, and the same seed writes the same bytes; a job of
// several nodes and ranks loads back as torchrun's ranks on one aligned time axis.
#include "synthetic_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>
#include <utility>

#include "analysis/model.h"
#include "analysis/stepscope_loader.h"
#include "base/file_system.h"
#include "importers/sagemaker/sagemaker_importer.h"

namespace stepscope::benchmarks {
namespace {

// 2 min at 500 ms, 4 cores, 4 GPUs: 240 polls.
SyntheticRunOptions SmallRun(const std::string& name) {
  SyntheticRunOptions options;
  options.out_dir = ::testing::TempDir() + "/synthetic-" + std::to_string(getpid()) + "-" + name;
  options.duration_s = 120;
  options.cpu_cores = 4;
  options.gpus = 4;
  return options;
}

int64_t SampleCount(const analysis::Model& model) {
  int64_t n = 0;
  for (const analysis::SystemSeries& series : model.series()) n += static_cast<int64_t>(series.time_ns.size());
  return n;
}

const analysis::FrameworkEvent& FirstStep(const analysis::Model& model, std::string_view phase) {
  for (uint32_t index : model.steps()) {
    if (model.String(model.events()[index].phase) == phase) return model.events()[index];
  }
  static const analysis::FrameworkEvent none;
  return none;
}

TEST(SyntheticRun, LoadsBackExactlyAsAStepscopeRunAndAsItsSageMakerTwin) {
  auto summary = WriteSyntheticRun(SmallRun("both"));
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  // 61 metrics a poll (4 cpu/total, 4 x 4 per core, 3 memory, 5 disk, 2 network, 4 x 7 GPU,
  // 3 process); the 7 rates are missing from the first poll.
  EXPECT_EQ(summary->polls, 240);
  EXPECT_EQ(summary->samples, 240 * 61 - 7);
  // SageMaker keeps 22 of them (2 per core, 2 per GPU, memory, 3 i/o, 2 network; 5 rates).
  EXPECT_EQ(summary->sagemaker_records, 240 * 22 - 5);
  // One pass: the loader's instant, then TRAIN steps of ~242 ms for the rest of the 2 min.
  EXPECT_GT(summary->train_steps, 400);
  EXPECT_EQ(summary->eval_steps, 0);
  EXPECT_EQ(summary->events, 1 + summary->train_steps * 5);

  auto stepscope_model = analysis::LoadStepscopeRun(summary->stepscope_dir);
  ASSERT_TRUE(stepscope_model.ok()) << stepscope_model.status().message();
  EXPECT_EQ(stepscope_model->series().size(), 61u);
  EXPECT_EQ(SampleCount(*stepscope_model), summary->samples);
  EXPECT_EQ(static_cast<int64_t>(stepscope_model->events().size()), summary->events);
  EXPECT_EQ(static_cast<int64_t>(stepscope_model->steps().size()), summary->train_steps);
  ASSERT_EQ(stepscope_model->nodes().size(), 1u);
  EXPECT_EQ(stepscope_model->nodes()[0].cpu_cores, 4);
  EXPECT_EQ(stepscope_model->nodes()[0].gpu_count, 4);
  EXPECT_EQ(stepscope_model->nodes()[0].name, "algo-1");
  ASSERT_EQ(stepscope_model->processes().size(), 1u);
  EXPECT_EQ(stepscope_model->processes()[0].rank, -1);  // no torchrun variables in a one-process job
  EXPECT_TRUE(stepscope_model->problems().empty()) << stepscope_model->problems()[0].sentence;

  auto sagemaker_model = analysis::ImportSageMaker(summary->sagemaker_dir);
  ASSERT_TRUE(sagemaker_model.ok()) << sagemaker_model.status().message();
  EXPECT_EQ(sagemaker_model->series().size(), 22u);
  EXPECT_EQ(SampleCount(*sagemaker_model), summary->sagemaker_records);
  EXPECT_EQ(static_cast<int64_t>(sagemaker_model->events().size()), summary->events);
  EXPECT_EQ(static_cast<int64_t>(sagemaker_model->steps().size()), summary->train_steps);

  // The same first step in both, to the nanosecond: the job starts 5 s + 3 ms after the sampler.
  const analysis::FrameworkEvent& a = FirstStep(*stepscope_model, "Step:ModeKeys.TRAIN");
  const analysis::FrameworkEvent& b = FirstStep(*sagemaker_model, "Step:ModeKeys.TRAIN");
  EXPECT_EQ(a.start_ns, 1767571200'000'000'000 + 5'003'000'000);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.step, 0);
  EXPECT_EQ(b.step, 0);
}

TEST(SyntheticRun, TheSameSeedWritesTheSameData) {
  SyntheticRunOptions first = SmallRun("seed-a"), second = SmallRun("seed-b"), other = SmallRun("seed-c");
  other.seed = 2;
  ASSERT_TRUE(WriteSyntheticRun(first).ok());
  ASSERT_TRUE(WriteSyntheticRun(second).ok());
  ASSERT_TRUE(WriteSyntheticRun(other).ok());
  // The SageMaker files are plain text; the store's logs carry a random stream id, so compare
  // what they load to.
  LocalFileSystem fs;
  const std::string minute = "/sagemaker/system/incremental/2026010500/1767571200.algo-1.json";
  auto a = fs.ReadFile(first.out_dir + minute), b = fs.ReadFile(second.out_dir + minute), c = fs.ReadFile(other.out_dir + minute);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status().message();
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  auto model_a = analysis::LoadStepscopeRun(first.out_dir + "/stepscope/synthetic");
  auto model_b = analysis::LoadStepscopeRun(second.out_dir + "/stepscope/synthetic");
  auto model_c = analysis::LoadStepscopeRun(other.out_dir + "/stepscope/synthetic");
  ASSERT_TRUE(model_a.ok() && model_b.ok() && model_c.ok());
  ASSERT_EQ(model_a->series().size(), model_b->series().size());
  bool all_equal = true, any_differs = false;
  for (size_t i = 0; i < model_a->series().size(); ++i) {
    all_equal = all_equal && model_a->series()[i].value == model_b->series()[i].value;
    any_differs = any_differs || model_a->series()[i].value != model_c->series()[i].value;
  }
  EXPECT_TRUE(all_equal);
  EXPECT_TRUE(any_differs);
}

TEST(SyntheticRun, NodesAndRanksLoadBackAsTorchrunRanksOnOneTimeAxis) {
  SyntheticRunOptions options = SmallRun("multi");
  options.gpus = 2;
  options.nodes = 2;
  options.ranks_per_node = 2;
  options.write_sagemaker = false;
  auto summary = WriteSyntheticRun(options);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  // Each node samples 47 metrics a poll (4 + 4 x 4 + 3 + 5 + 2 + 2 x 7 + 3); 7 rates missing first.
  EXPECT_EQ(summary->samples, 2 * (240 * 47 - 7));
  EXPECT_GT(summary->train_steps, 400);
  EXPECT_EQ(summary->events, 4 * (1 + summary->train_steps * 5));

  auto model = analysis::LoadStepscopeRun(summary->stepscope_dir);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(model->problems().empty()) << model->problems()[0].sentence;
  ASSERT_EQ(model->nodes().size(), 2u);
  EXPECT_EQ(SampleCount(*model), summary->samples);
  EXPECT_EQ(static_cast<int64_t>(model->events().size()), summary->events);
  EXPECT_EQ(static_cast<int64_t>(model->steps().size()), 4 * summary->train_steps);
  std::map<std::string, uint32_t> node_index;
  for (uint32_t i = 0; i < model->nodes().size(); ++i) node_index[model->nodes()[i].name] = i;
  ASSERT_EQ(node_index.count("node0") + node_index.count("node1"), 2u);
  EXPECT_EQ(model->nodes()[node_index["node0"]].manifest.node_rank, 0);
  EXPECT_EQ(model->nodes()[node_index["node1"]].manifest.nodes_expected, 2);
  // node1's clock reads 2 ms ahead; its clock_sync.json says so.
  EXPECT_EQ(model->nodes()[node_index["node0"]].clock.state, analysis::ClockAlignmentState::kReference);
  EXPECT_EQ(model->nodes()[node_index["node1"]].clock.state, analysis::ClockAlignmentState::kAligned);
  EXPECT_EQ(model->nodes()[node_index["node1"]].clock.offset_ns, -2'000'000);

  // Global rank = group rank x 2 + local rank, each on its own node.
  std::map<std::pair<uint32_t, int32_t>, int32_t> rank_of;  // (node, pid) -> RANK
  ASSERT_EQ(model->processes().size(), 4u);
  for (const analysis::ProcessFacts& process : model->processes()) {
    EXPECT_EQ(process.world_size, 4);
    EXPECT_EQ(process.group_rank, model->nodes()[process.node].manifest.node_rank);
    EXPECT_EQ(process.rank, process.group_rank * 2 + process.local_rank);
    rank_of[{process.node, process.pid}] = process.rank;
  }
  ASSERT_EQ(rank_of.size(), 4u);
  // Every rank starts step 0 at the same time on the job's axis, up to its 100 us of skew: had
  // node1's clock not been aligned, its ranks would start 2 ms late.
  std::map<int32_t, int64_t> first_step_ns;
  for (uint32_t index : model->steps()) {
    const analysis::FrameworkEvent& step = model->events()[index];
    if (step.step == 0) first_step_ns[rank_of[{step.node, step.pid}]] = step.start_ns;
  }
  ASSERT_EQ(first_step_ns.size(), 4u);
  for (const auto& [rank, start_ns] : first_step_ns) {
    EXPECT_GE(start_ns, 1767571200'000'000'000 + 5'003'000'000) << "rank " << rank;
    EXPECT_LT(start_ns, 1767571200'000'000'000 + 5'003'100'000) << "rank " << rank;
  }
}

}  // namespace
}  // namespace stepscope::benchmarks
