#include "store/clock_sync.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "base/file_system.h"

namespace stepscope::store {
namespace {

TEST(ClockSyncTest, ReadsWhatTheExchangeWrites) {
  auto sync = ParseClockSync(R"({"version": 1, "node": "b", "node_rank": 1, "nodes": 2, "reference_node": "a",
      "samples": [{"at_ns": 100, "offset_ns": -2500000000, "round_trip_ns": 80000},
                  {"at_ns": 60000000100, "offset_ns": -2499000000, "round_trip_ns": 120000}], "error": ""})",
                             "x/clock_sync.json");
  ASSERT_TRUE(sync.ok()) << sync.status().message();
  EXPECT_EQ(sync->node, "b");
  EXPECT_EQ(sync->node_rank, 1);
  EXPECT_EQ(sync->nodes, 2);
  EXPECT_EQ(sync->reference_node, "a");
  EXPECT_FALSE(sync->IsReference());
  ASSERT_EQ(sync->samples.size(), 2u);
  EXPECT_EQ(sync->samples[1].offset_ns, -2499000000);
  EXPECT_EQ(sync->samples[1].round_trip_ns, 120000);
}

TEST(ClockSyncTest, TheReferenceSaysSo) {
  auto sync = ParseClockSync(R"({"node": "a", "node_rank": 0, "reference_node": "a", "samples": []})", "p");
  ASSERT_TRUE(sync.ok());
  EXPECT_TRUE(sync->IsReference());
}

TEST(ClockSyncTest, DamagedSamplesAreLeftOutAndGarbageIsOneLine) {
  auto sync = ParseClockSync(R"({"node": "b", "samples": [{"at_ns": "x"}, 7, {"at_ns": 5, "offset_ns": 1,
      "round_trip_ns": -3}, {"at_ns": 5, "offset_ns": 2, "round_trip_ns": 3}], "error": "timed out"})", "p");
  ASSERT_TRUE(sync.ok());
  ASSERT_EQ(sync->samples.size(), 1u);
  EXPECT_EQ(sync->samples[0].offset_ns, 2);
  EXPECT_EQ(sync->error, "timed out");
  for (const char* text : {"", "[1]", "{\"node\":", "\xff\xfe"}) {
    auto bad = ParseClockSync(text, "n/clock_sync.json");
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find("'n/clock_sync.json' is not a clock alignment record"), std::string::npos);
  }
}

TEST(ClockSyncTest, ReadsOnlyARegularFileOfTheRun) {
  const std::string dir = ::testing::TempDir() + "/clock_sync_read";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(CreateDirectories(dir).ok());
  EXPECT_EQ(ReadClockSync(dir).status().code(), StatusCode::kNotFound);
  ASSERT_EQ(mkfifo((dir + "/clock_sync.json").c_str(), 0600), 0);
  auto fifo = ReadClockSync(dir);  // never waits for a writer
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().code(), StatusCode::kNotFound);
  std::filesystem::remove(dir + "/clock_sync.json");
  ASSERT_TRUE(WriteFileAtomically(dir + "/clock_sync.json", R"({"node": "a", "node_rank": 0})").ok());
  EXPECT_TRUE(ReadClockSync(dir).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stepscope::store
