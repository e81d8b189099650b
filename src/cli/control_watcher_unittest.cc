#include "cli/control_watcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/file_system.h"
#include "cli/ctl_command.h"

namespace stepscope::cli {
namespace {

class ControlWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = ::testing::TempDir() + "/watch-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(node_);
    ASSERT_TRUE(CreateDirectories(node_ + "/control").ok());
  }
  void TearDown() override { std::filesystem::remove_all(node_); }

  void WriteControl(int64_t sequence, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(node_ + "/control/" + std::to_string(sequence) + ".json", text).ok());
  }

  // Moves the directory's mtime into the past, as if the last change were long ago.
  void AgeDirectory() {
    timespec times[2] = {{0, UTIME_OMIT}, {time(nullptr) - 60, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, (node_ + "/control").c_str(), times, 0), 0);
  }

  std::unique_ptr<ControlWatcher> MakeWatcher(int64_t poll_interval_ns = 1'000'000'000) {
    return std::make_unique<ControlWatcher>(
        node_, 500'000'000,
        [this](int64_t interval_ns) {
          applied_.push_back(interval_ns);
          return interval_ns == 20'000'000 ? InvalidArgumentError("refused for the test") : OkStatus();
        },
        [this](const nlohmann::json& entry) { entries_.push_back(entry); }, poll_interval_ns);
  }

  std::string node_;
  std::vector<int64_t> applied_;
  std::vector<nlohmann::json> entries_;
};

TEST_F(ControlWatcherTest, AppliesIntervalsInSequenceOrderAndRecordsEach) {
  WriteControl(2, R"({"sequence": 2, "time_ns": 20, "interval_ns": 200000000})");
  WriteControl(1, R"({"sequence": 1, "time_ns": 10, "interval_ns": 100000000})");
  auto watcher = MakeWatcher();
  watcher->PollOnce();
  EXPECT_EQ(applied_, (std::vector<int64_t>{100'000'000, 200'000'000}));
  ASSERT_EQ(entries_.size(), 2u);
  EXPECT_EQ(entries_[0]["sequence"], 1);
  EXPECT_EQ(entries_[0]["time_ns"], 10);
  EXPECT_EQ(entries_[0]["changes"], nlohmann::json({{"interval_ns", 100'000'000}, {"previous_interval_ns", 500'000'000}}));
  EXPECT_EQ(entries_[1]["changes"]["previous_interval_ns"], 100'000'000);
  EXPECT_GT(entries_[1]["applied_at_ns"].get<int64_t>(), 0);
  EXPECT_FALSE(entries_[1].contains("error"));

  // Already applied files are not applied again.
  watcher->PollOnce();
  EXPECT_EQ(entries_.size(), 2u);
}

TEST_F(ControlWatcherTest, ListsTheDirectoryOnlyWhenItChanged) {
  WriteControl(1, R"({"sequence": 1, "time_ns": 10, "interval_ns": 100000000})");
  AgeDirectory();
  auto watcher = MakeWatcher();
  watcher->PollOnce();
  EXPECT_EQ(watcher->listings(), 1u);
  watcher->PollOnce();
  watcher->PollOnce();
  EXPECT_EQ(watcher->listings(), 1u);
  EXPECT_EQ(entries_.size(), 1u);
  WriteControl(2, R"({"sequence": 2, "time_ns": 20, "interval_ns": 1000000000})");
  watcher->PollOnce();
  EXPECT_EQ(watcher->listings(), 2u);
  EXPECT_EQ(applied_.back(), 1'000'000'000);
}

TEST_F(ControlWatcherTest, AFineGrainedMtimeThatDidNotChangeCostsOneStat) {
  WriteControl(1, R"({"sequence": 1, "time_ns": 10, "interval_ns": 100000000})");
  timespec times[2] = {{0, UTIME_OMIT}, {time(nullptr), 123}};  // now, not a whole second
  ASSERT_EQ(utimensat(AT_FDCWD, (node_ + "/control").c_str(), times, 0), 0);
  auto watcher = MakeWatcher();
  watcher->PollOnce();
  watcher->PollOnce();
  EXPECT_EQ(watcher->listings(), 1u);
}

TEST_F(ControlWatcherTest, ARecentWholeSecondMtimeIsListedAgain) {
  WriteControl(1, R"({"sequence": 1, "time_ns": 10, "interval_ns": 100000000})");
  timespec times[2] = {{0, UTIME_OMIT}, {time(nullptr), 0}};  // as a coarse file system keeps it
  ASSERT_EQ(utimensat(AT_FDCWD, (node_ + "/control").c_str(), times, 0), 0);
  auto watcher = MakeWatcher();
  watcher->PollOnce();
  // A second file in the same second, the mtime unchanged: found all the same.
  WriteControl(2, R"({"sequence": 2, "time_ns": 20, "interval_ns": 200000000})");
  ASSERT_EQ(utimensat(AT_FDCWD, (node_ + "/control").c_str(), times, 0), 0);
  watcher->PollOnce();
  EXPECT_EQ(watcher->listings(), 2u);
  EXPECT_EQ(applied_, (std::vector<int64_t>{100'000'000, 200'000'000}));
}

TEST_F(ControlWatcherTest, RecordsDetailForTheJobsProcessesWithoutTouchingTheSampler) {
  WriteControl(1, R"({"sequence": 1, "time_ns": 10, "detail": [{"kind": "python", "start_step": 300, "num_steps": 2}]})");
  auto watcher = MakeWatcher();
  watcher->PollOnce();
  EXPECT_TRUE(applied_.empty());
  ASSERT_EQ(entries_.size(), 1u);
  const nlohmann::json& window = entries_[0]["changes"]["detail"][0];
  EXPECT_EQ(window["start_step"], 300);
  EXPECT_EQ(window["timer"], "cycle");  // normalised
  EXPECT_FALSE(entries_[0]["changes"].contains("interval_ns"));
}

TEST_F(ControlWatcherTest, InvalidFilesAreRecordedAsErrorsAndSkipped) {
  WriteControl(1, "not json");
  WriteControl(2, R"({"sequence": 5, "interval_ns": 100000000})");
  WriteControl(3, R"({"sequence": 3, "interval_ns": 5})");
  WriteControl(4, R"({"sequence": 4, "detail": [{"kind": "python"}]})");
  WriteControl(5, R"({"sequence": 5, "interval_ns": 20000000})");  // the setter refuses it
  WriteControl(6, R"({"sequence": 6, "interval_ns": 300000000})");
  auto watcher = MakeWatcher();
  watcher->PollOnce();
  ASSERT_EQ(entries_.size(), 6u);
  const char* expected[] = {"not a JSON object", "does not match its name", "from 10ms to 60s", "has no start",
                            "refused for the test"};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(entries_[i].contains("error")) << i;
    EXPECT_NE(entries_[i]["error"].get<std::string>().find(expected[i]), std::string::npos) << entries_[i]["error"];
    EXPECT_TRUE(entries_[i]["changes"].empty());
  }
  EXPECT_FALSE(entries_[5].contains("error"));
  // The refused interval was not taken as the current one.
  EXPECT_EQ(entries_[5]["changes"]["previous_interval_ns"], 500'000'000);
  EXPECT_EQ(applied_, (std::vector<int64_t>{20'000'000, 300'000'000}));
}

TEST_F(ControlWatcherTest, TheThreadPicksUpFilesWrittenWhileItRuns) {
  std::atomic<int> recorded{0};
  ControlWatcher watcher(
      node_, 500'000'000, [](int64_t) { return OkStatus(); }, [&](const nlohmann::json&) { recorded++; },
      /*poll_interval_ns=*/20'000'000);
  ASSERT_TRUE(watcher.Start().ok());
  ControlRequest request;
  request.interval_ns = 100'000'000;
  ASSERT_TRUE(WriteControlFile(node_, request, 1).ok());
  for (int i = 0; i < 500 && recorded.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  watcher.Stop();
  EXPECT_EQ(recorded.load(), 1);
  watcher.Stop();  // idempotent
}

TEST_F(ControlWatcherTest, StartCreatesTheControlDirectory) {
  std::filesystem::remove_all(node_ + "/control");
  auto watcher = MakeWatcher();
  ASSERT_TRUE(watcher->Start().ok());
  watcher->Stop();
  EXPECT_TRUE(std::filesystem::is_directory(node_ + "/control"));
}

}  // namespace
}  // namespace stepscope::cli
