#include "launcher/control_watcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "base/file_system.h"
#include "base/test/manual_wait_clock.h"
#include "launcher/control_file.h"

namespace stepscope::launcher {
namespace {

constexpr int64_t kSecondNs = 1'000'000'000;
// The watcher's "now" (its WaitClock's Unix time): a whole second and 300 ms.
constexpr int64_t kNowSeconds = 1'700'000'000;
constexpr int64_t kNowNs = kNowSeconds * kSecondNs + 300'000'000;

class ControlWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.SetRealtimeNs(kNowNs);
    node_ = ::testing::TempDir() + "/watch-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(node_);
    ASSERT_TRUE(CreateDirectories(node_ + "/control").ok());
  }
  void TearDown() override { std::filesystem::remove_all(node_); }

  void WriteControl(int64_t sequence, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(node_ + "/control/" + std::to_string(sequence) + ".json", text).ok());
  }

  // Sets the directory's mtime, as a file system keeping `nanoseconds` = 0 (whole seconds) would.
  void SetDirectoryMtime(int64_t seconds, long nanoseconds) {
    timespec times[2] = {{0, UTIME_OMIT}, {static_cast<time_t>(seconds), nanoseconds}};
    ASSERT_EQ(utimensat(AT_FDCWD, (node_ + "/control").c_str(), times, 0), 0);
  }

  std::unique_ptr<ControlWatcher> MakeWatcher(int64_t poll_interval_ns = 1'000'000'000) {
    return std::make_unique<ControlWatcher>(
        node_, 500'000'000,
        [this](int64_t interval_ns) {
          applied_.push_back(interval_ns);
          return interval_ns == 20'000'000 ? InvalidArgumentError("refused for the test") : OkStatus();
        },
        [this](const nlohmann::json& entry) { entries_.push_back(entry); }, poll_interval_ns, &clock_);
  }

  ManualWaitClock clock_;
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
  EXPECT_EQ(entries_[1]["applied_at_ns"], kNowNs);
  EXPECT_FALSE(entries_[1].contains("error"));

  // Already applied files are not applied again.
  watcher->PollOnce();
  EXPECT_EQ(entries_.size(), 2u);
}

TEST_F(ControlWatcherTest, ListsTheDirectoryOnlyWhenItChanged) {
  WriteControl(1, R"({"sequence": 1, "time_ns": 10, "interval_ns": 100000000})");
  SetDirectoryMtime(kNowSeconds - 60, 0);  // a minute old: no newer file can hide behind it
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
  SetDirectoryMtime(kNowSeconds, 123);  // this very second, but not a whole second
  auto watcher = MakeWatcher();
  watcher->PollOnce();
  watcher->PollOnce();
  EXPECT_EQ(watcher->listings(), 1u);
}

TEST_F(ControlWatcherTest, ARecentWholeSecondMtimeIsListedAgain) {
  WriteControl(1, R"({"sequence": 1, "time_ns": 10, "interval_ns": 100000000})");
  SetDirectoryMtime(kNowSeconds, 0);  // this second, as a coarse file system keeps it
  auto watcher = MakeWatcher();
  watcher->PollOnce();  // listed 300 ms into that second
  // A second file in the same second, the mtime unchanged: found all the same.
  WriteControl(2, R"({"sequence": 2, "time_ns": 20, "interval_ns": 200000000})");
  SetDirectoryMtime(kNowSeconds, 0);
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
  std::mutex mutex;
  int recorded = 0;
  ControlWatcher watcher(
      node_, 500'000'000, [](int64_t) { return OkStatus(); },
      [&](const nlohmann::json&) {
        std::lock_guard<std::mutex> lock(mutex);
        ++recorded;
      },
      /*poll_interval_ns=*/kSecondNs, &clock_);
  // An old mtime, so the file written below changes it whatever the file system's granularity.
  SetDirectoryMtime(kNowSeconds - 60, 0);
  ASSERT_TRUE(watcher.Start().ok());
  // The first poll runs at once and finds nothing; then the thread sleeps a poll interval.
  ASSERT_TRUE(clock_.AwaitSleeperUntil(kSecondNs));
  ControlRequest request;
  request.interval_ns = 100'000'000;
  ASSERT_TRUE(WriteControlFile(node_, request, 1).ok());
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(recorded, 0);
  }
  clock_.AdvanceNs(kSecondNs);
  ASSERT_TRUE(clock_.AwaitSleeperUntil(2 * kSecondNs));
  watcher.Stop();
  EXPECT_EQ(recorded, 1);
  EXPECT_EQ(watcher.listings(), 2u);
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
}  // namespace stepscope::launcher
