// A job of several nodes loaded as one: clock offsets applied to a skewed node, and the nodes'
// faults as problems (job_nodes.h), through the real loader on runs written by the real writer.
#include "analysis/job_nodes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "analysis/run_loader.h"
#include "analysis/test_run_writer.h"
#include "base/file_system.h"

namespace stepscope::analysis {
namespace {

using testing::kTestEpochNs;
using testing::TestStream;

constexpr int64_t kSkewNs = 2'500'000'000;  // node b's clock is 2.5 s ahead

class JobNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = ::testing::TempDir() + "/job-nodes-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(job_);
  }
  void TearDown() override { std::filesystem::remove_all(job_); }

  // A node whose clock anchor is off by `skew_ns`, with one process that ran `step_ticks`.
  void Node(const std::string& name, const std::string& status, int64_t skew_ns, const std::string& extra,
            int64_t pid, int64_t first_tick, int64_t last_tick, const std::string& ranks = "") {
    const std::string dir = job_ + "/" + name;
    ASSERT_TRUE(CreateDirectories(dir).ok());
    std::string manifest = R"({"schema_version":1,"node":")" + name + R"(","status":")" + status +
                           R"(","clock":{"monotonic_ns":0,"realtime_ns":)" + std::to_string(kTestEpochNs + skew_ns) +
                           R"(},"start_time_ns":)" + std::to_string(kTestEpochNs + skew_ns) +
                           (status == "exited" ? R"(,"end_time_ns":)" + std::to_string(kTestEpochNs + skew_ns + last_tick)
                                               : std::string()) +
                           (extra.empty() ? "" : "," + extra) + "}";
    ASSERT_TRUE(WriteFileAtomically(dir + "/manifest.json", manifest).ok());
    TestStream proc(dir, "proc-" + std::to_string(pid) + "-a", pid, false, ranks);
    ASSERT_TRUE(proc.ok());
    proc.Begin(1, static_cast<uint64_t>(first_tick), "Work");
    proc.End(1, static_cast<uint64_t>(last_tick), "Work");
    proc.Close();
  }
  void ClockSync(const std::string& name, const std::string& json) {
    ASSERT_TRUE(WriteFileAtomically(job_ + "/" + name + "/clock_sync.json", json).ok());
  }
  std::vector<Problem> Problems(const std::string& name) {
    auto model = LoadRun(job_);
    EXPECT_TRUE(model.ok()) << model.status().message();
    std::vector<Problem> found;
    if (!model.ok()) return found;
    for (const Problem& problem : model->problems()) {
      if (problem.name == name) found.push_back(problem);
    }
    return found;
  }

  std::string job_;
};

TEST_F(JobNodesTest, ASkewedNodesEventsLandOnTheReferenceClock) {
  Node("a", "exited", 0, R"("nodes_expected":2,"node_rank":0)", 10, 1'000'000, 9'000'000);
  Node("b", "exited", kSkewNs, R"("nodes_expected":2,"node_rank":1)", 20, 1'000'000, 9'000'000);
  ClockSync("a", R"({"node":"a","node_rank":0,"reference_node":"a","samples":[]})");
  ClockSync("b", R"({"node":"b","node_rank":1,"reference_node":"a","samples":[
      {"at_ns":1,"offset_ns":-2500040000,"round_trip_ns":100000},{"at_ns":2,"offset_ns":-2499960000,"round_trip_ns":90000}]})");
  auto model = LoadRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->nodes().size(), 2u);
  const NodeFacts& b = model->nodes()[1];
  EXPECT_EQ(b.clock.state, ClockAlignmentState::kAligned);
  EXPECT_EQ(b.clock.offset_ns, -2'500'000'000);
  EXPECT_EQ(b.clock.uncertainty_ns, 40'000 + 50'000);
  EXPECT_EQ(b.clock.drift_ns, 80'000);
  EXPECT_EQ(model->nodes()[0].clock.state, ClockAlignmentState::kReference);
  // The manifest's times move with the node's events.
  EXPECT_EQ(b.manifest.start_time_ns, kTestEpochNs);
  ASSERT_EQ(model->events().size(), 2u);
  for (const FrameworkEvent& event : model->events()) {
    EXPECT_EQ(event.start_ns, kTestEpochNs + 1'000'000) << model->nodes()[event.node].name;
  }
  for (const Problem& problem : model->problems()) {
    if (IsJobNodeProblem(problem.name)) ADD_FAILURE() << problem.sentence;
  }
}

TEST_F(JobNodesTest, ANodeWithoutAnAlignmentIsAnErrorThatSaysWhy) {
  Node("a", "exited", 0, "", 10, 1'000, 9'000);
  Node("b", "exited", 0, "", 20, 1'000, 9'000);
  Node("c", "exited", 0, "", 30, 1'000, 9'000);
  ClockSync("a", R"({"node":"a","node_rank":0,"reference_node":"a"})");
  ClockSync("b", R"({"node":"b","node_rank":1,"reference_node":"a","samples":[],
      "error":"the clock exchange with the reference node failed: DistStoreError: timed out"})");
  const std::vector<Problem> problems = Problems("node_clock_unaligned");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].severity, ProblemSeverity::kError);
  EXPECT_EQ(problems[0].sentence,
            "node 'b''s clock is not aligned with node 'a''s: the clock exchange with the reference node failed: "
            "DistStoreError: timed out; its events are placed by its own clock, which may differ from the others' by "
            "as much as the machines' time service allows");
  EXPECT_NE(problems[1].sentence.find("node 'c''s clock is not aligned with node 'a''s: it recorded no exchange"),
            std::string::npos)
      << problems[1].sentence;
}

TEST_F(JobNodesTest, AJobThatRecordedNoAlignmentSaysSoOnce) {
  Node("a", "exited", 0, "", 10, 1'000, 9'000);
  Node("b", "exited", 0, "", 20, 1'000, 9'000);
  const std::vector<Problem> problems = Problems("node_clock_unaligned");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].severity, ProblemSeverity::kInfo);
  EXPECT_NE(problems[0].sentence.find("the job's 2 nodes recorded no clock alignment"), std::string::npos);
}

TEST_F(JobNodesTest, ANodeThatNeverStartedIsNamedByItsRank) {
  Node("a", "exited", 0, R"("nodes_expected":3,"node_rank":0)", 10, 1'000, 9'000);
  Node("c", "exited", 0, R"("nodes_expected":3,"node_rank":2)", 30, 1'000, 9'000);
  const std::vector<Problem> problems = Problems("node_never_started");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].severity, ProblemSeverity::kDataLoss);
  EXPECT_EQ(problems[0].sentence.substr(0, 72),
            "node rank 1 of the job's 3 never started under stepscope: no node direct");
}

TEST_F(JobNodesTest, OneNodesOwnViewDoesNotCallTheOtherNodesMissing) {
  Node("a", "exited", 0, R"("nodes_expected":2,"node_rank":0)", 10, 1'000, 9'000,
       R"("ranks":{"RANK":"0","WORLD_SIZE":"2"})");
  Node("b", "exited", 0, R"("nodes_expected":2,"node_rank":1)", 20, 1'000, 9'000,
       R"("ranks":{"RANK":"1","WORLD_SIZE":"2"})");
  auto node_view = LoadRun(job_ + "/a");  // the node's report
  ASSERT_TRUE(node_view.ok()) << node_view.status().message();
  for (const Problem& problem : node_view->problems()) {
    EXPECT_FALSE(IsJobNodeProblem(problem.name)) << problem.sentence;
  }
  EXPECT_TRUE(Problems("node_never_started").empty());
  EXPECT_TRUE(Problems("ranks_missing").empty());
}

TEST_F(JobNodesTest, NodesWithoutTheirRanksAreCounted) {
  Node("a", "exited", 0, R"("nodes_expected":4)", 10, 1'000, 9'000);
  const std::vector<Problem> problems = Problems("node_never_started");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].count, 3u);
  EXPECT_EQ(problems[0].sentence.substr(0, 40), "3 nodes of the job's 4 never started und");
}

TEST_F(JobNodesTest, RanksThatRecordedNothingAreNamed) {
  Node("a", "exited", 0, "", 10, 1'000, 9'000, R"("ranks":{"RANK":"0","WORLD_SIZE":"6"})");
  Node("b", "exited", 0, "", 20, 1'000, 9'000, R"("ranks":{"RANK":"1","WORLD_SIZE":"6"})");
  const std::vector<Problem> problems = Problems("ranks_missing");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].count, 4u);
  EXPECT_EQ(problems[0].sentence.substr(0, 26), "ranks 2-5 of 6 recorded no");
}

TEST_F(JobNodesTest, ANodeLostMidRunSaysSinceWhenAndTheOthersAreComplete) {
  Node("a", "exited", 0, "", 10, 1'000, 100'000'000'000);
  Node("b", "running", 0, "", 20, 1'000, 30'000'000'000);  // its data stops 70 s before a's end
  const std::vector<Problem> problems = Problems("node_stopped_early");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].severity, ProblemSeverity::kDataLoss);
  EXPECT_EQ(problems[0].sentence,
            "node 'b' stopped recording at 2023-11-14 22:13:50 UTC, 70.0 s before the job's other nodes ended, and its "
            "launcher never finished its manifest: the node was lost then (killed, crashed, or cut off from the run's "
            "storage); its data up to then is complete and shown");
  auto model = LoadRun(job_);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->events().size(), 2u);
}

TEST_F(JobNodesTest, ANodeWhoseSamplerIsGoneIsLostWhenItsDataStopped) {
  Node("a", "running", 0, "", 10, 1'000, 100'000'000'000);
  Node("b", "running", 0, "", 20, 1'000, 95'000'000'000);
  {
    TestStream system(job_ + "/b", "system", 20, true);  // its writer closes: the launcher is gone
    ASSERT_TRUE(system.ok());
    system.Sample(96'000'000'000, "cpu/cpu0/util_pct", 50);
  }
  const std::vector<Problem> problems = Problems("node_stopped_early");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].sentence.substr(0, 62), "node 'b' stopped recording at 2023-11-14 22:14:56 UTC, and its");
}

TEST_F(JobNodesTest, ANodeStillRunningWithTheOthersIsNotLost) {
  Node("a", "exited", 0, "", 10, 1'000, 100'000'000'000);
  Node("b", "running", 0, "", 20, 1'000, 95'000'000'000);
  EXPECT_TRUE(Problems("node_stopped_early").empty());
}

}  // namespace
}  // namespace stepscope::analysis
