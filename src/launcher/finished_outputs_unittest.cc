#include "launcher/finished_outputs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/file_system.h"
#include "store/run_manifest.h"

namespace stepscope::launcher {
namespace {

class FinishedOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = ::testing::TempDir() + "/finished_outputs_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(job_);
  }
  void TearDown() override { std::filesystem::remove_all(job_); }

  void Node(const std::string& name, store::ManifestStatus status) {
    store::RunManifest manifest;
    manifest.node = name;
    manifest.has_clock = true;
    manifest.status = status;
    ASSERT_TRUE(CreateDirectories(job_ + "/" + name).ok());
    ASSERT_TRUE(WriteFileAtomically(job_ + "/" + name + "/manifest.json", store::ManifestText(manifest)).ok());
  }

  std::string job_;
};

TEST_F(FinishedOutputsTest, AJobOfOneNodeWritesTheJobsOutputs) {
  Node("a", store::ManifestStatus::kExited);
  const FinishedOutputs plan = PlanFinishedOutputs(job_, "a");
  EXPECT_TRUE(plan.only_node);
  EXPECT_TRUE(plan.last_node);
}

TEST_F(FinishedOutputsTest, ANodeThatFinishesFirstWritesOnlyItsOwn) {
  Node("a", store::ManifestStatus::kExited);
  Node("b", store::ManifestStatus::kRunning);
  Node("c", store::ManifestStatus::kStarting);
  const FinishedOutputs plan = PlanFinishedOutputs(job_, "a");
  EXPECT_FALSE(plan.only_node);
  EXPECT_FALSE(plan.last_node);
  EXPECT_EQ(plan.unfinished_nodes, (std::vector<std::string>{"b", "c"}));
}

TEST_F(FinishedOutputsTest, TheLastNodeToFinishWritesTheJobsToo) {
  Node("a", store::ManifestStatus::kExited);
  Node("b", store::ManifestStatus::kKilled);
  Node("c", store::ManifestStatus::kFailedToStart);
  const FinishedOutputs plan = PlanFinishedOutputs(job_, "a");
  EXPECT_FALSE(plan.only_node);
  EXPECT_TRUE(plan.last_node);
  EXPECT_TRUE(plan.unfinished_nodes.empty());
}

TEST_F(FinishedOutputsTest, ADirectoryWithoutAManifestIsNoNodeToWaitFor) {
  Node("a", store::ManifestStatus::kExited);
  ASSERT_TRUE(CreateDirectories(job_ + "/stray").ok());
  ASSERT_TRUE(WriteFileAtomically(job_ + "/stray/manifest.json", "not json").ok());
  const FinishedOutputs plan = PlanFinishedOutputs(job_, "a");
  EXPECT_TRUE(plan.only_node);
  EXPECT_TRUE(plan.last_node);
}

}  // namespace
}  // namespace stepscope::launcher
