// LoadedRuns over a run that a live writer is still appending to (analysis/test_run_writer.h):
// the follower's pass refreshes it and announces what it gained; a run whose directory vanishes
// keeps its last model and says so.
#include "server/loaded_runs.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "analysis/test_run_writer.h"
#include "base/file_system.h"

namespace stepscope::server {
namespace {

using analysis::testing::TestManifest;
using analysis::testing::TestStream;
using std::chrono::milliseconds;

class LoadedRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = ::testing::TempDir() + "/loaded-runs-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(job_);
    ASSERT_TRUE(CreateDirectories(job_ + "/algo-1").ok());
    ASSERT_TRUE(WriteFileAtomically(job_ + "/algo-1/manifest.json", TestManifest("algo-1", "running")).ok());
  }
  void TearDown() override { std::filesystem::remove_all(job_); }

  // A live writer that recorded step 0, and the run loaded as "job".
  std::unique_ptr<TestStream> StartAndLoad() {
    auto proc = std::make_unique<TestStream>(job_ + "/algo-1", "proc-200-abcd", 200, false);
    EXPECT_TRUE(proc->ok());
    proc->StepBegin(1, 1'000, store::Phase::kTrain, 0);
    proc->StepEnd(1, 2'000, store::Phase::kTrain, 0);
    EXPECT_TRUE(runs_.Load("job", job_).ok());
    return proc;
  }

  size_t EventCount(LoadedRuns& runs) {
    size_t count = 0;
    EXPECT_TRUE(runs.Read("job", [&](const analysis::Model& model, const LiveState&) {
      count = model.events().size();
    }).ok());
    return count;
  }
  LiveState Live(LoadedRuns& runs) {
    LiveState live;
    EXPECT_TRUE(runs.Read("job", [&](const analysis::Model&, const LiveState& state) { live = state; }).ok());
    return live;
  }

  std::string job_;
  EventHub events_;
  LoadedRuns runs_{&events_};
};

TEST_F(LoadedRunsTest, TheFollowerRefreshesALiveRunAndAnnouncesWhatItGained) {
  std::unique_ptr<TestStream> proc = StartAndLoad();
  LoadedRuns& runs = runs_;
  EventHub& events = events_;
  EXPECT_TRUE(runs.IsLoaded("job"));
  EXPECT_EQ(runs.Directory("job"), job_);
  EXPECT_TRUE(Live(runs).following);
  const size_t before = EventCount(runs);
  const uint64_t cursor = events.Newest();

  runs.RefreshAll();  // nothing new: no event, no new generation
  EXPECT_TRUE(events.WaitAfter(cursor, milliseconds(1)).empty());
  EXPECT_EQ(Live(runs).generation, 0u);

  proc->StepBegin(1, 3'000, store::Phase::kTrain, 1);
  proc->StepEnd(1, 4'000, store::Phase::kTrain, 1);
  runs.RefreshAll();
  const std::vector<ServerEvent> announced = events.WaitAfter(cursor, milliseconds(1));
  ASSERT_EQ(announced.size(), 1u);
  EXPECT_EQ(announced[0].name, "run");
  EXPECT_EQ(announced[0].data["id"], "job");
  EXPECT_GE(announced[0].data["new_events"].get<size_t>(), 1u);
  EXPECT_GT(EventCount(runs), before);
  EXPECT_EQ(Live(runs).generation, 1u);

  runs.StoreValue("job", 1, {{"report", 1}});
  nlohmann::json value;
  uint64_t generation = 0;
  ASSERT_TRUE(runs.LastValue("job", &value, &generation));
  EXPECT_EQ(generation, 1u);
  EXPECT_EQ(value["report"], 1);
}

TEST_F(LoadedRunsTest, AVanishedRunKeepsItsLastModelAndSaysSo) {
  std::unique_ptr<TestStream> proc = StartAndLoad();
  LoadedRuns& runs = runs_;
  const size_t before = EventCount(runs);
  proc->Close();
  std::filesystem::remove_all(job_);
  runs.RefreshAll();
  EXPECT_EQ(EventCount(runs), before);
  EXPECT_NE(Live(runs).problem.find("gone"), std::string::npos);
  EXPECT_TRUE(LiveStateJson(Live(runs)).contains("problem"));
  EXPECT_TRUE(runs.Unload("job"));
  EXPECT_FALSE(runs.Unload("job"));
  EXPECT_EQ(runs.Read("job", [](const analysis::Model&, const LiveState&) {}).code(), StatusCode::kNotFound);
}

TEST_F(LoadedRunsTest, ARunThatCannotBeReadIsNotLoaded) {
  LoadedRuns& runs = runs_;
  ASSERT_TRUE(WriteFileAtomically(job_ + "/algo-1/manifest.json", "garbage").ok());
  EXPECT_FALSE(runs.Load("job", job_).ok());
  EXPECT_FALSE(runs.IsLoaded("job"));
  EXPECT_FALSE(runs.Load("nowhere", job_ + "/nowhere").ok());
}

}  // namespace
}  // namespace stepscope::server
