#include "sampler/memory_source.h"

#include <gtest/gtest.h>

#include "platform/linux/proc_test_data.h"
#include "sampler/fake_file_system.h"

namespace stepscope {
namespace {

using testing::FakeFileSystem;
using testing::ReadProcTestData;

TEST(MemorySource, ReportsUsedAsTotalMinusAvailableFromTheFirstPoll) {
  FakeFileSystem fs;
  fs.SetFile("/proc/meminfo", ReadProcTestData("snapshot_1/meminfo"));
  MemorySource source(fs);
  std::vector<MetricSample> out;
  ASSERT_TRUE(source.Poll(0, out).ok());
  ASSERT_EQ(out.size(), 3u);
  // MemTotal 24684092 kB, MemAvailable 24094768 kB.
  EXPECT_EQ(out[0].name, "memory/used_pct");
  EXPECT_DOUBLE_EQ(out[0].value, 100.0 * 589324 / 24684092);
  EXPECT_EQ(out[1].name, "memory/used_bytes");
  EXPECT_DOUBLE_EQ(out[1].value, 589324.0 * 1024);
  EXPECT_EQ(out[2].name, "memory/total_bytes");
  EXPECT_DOUBLE_EQ(out[2].value, 24684092.0 * 1024);
}

TEST(MemorySource, ReportsMalformedTextWithoutSamples) {
  FakeFileSystem fs;
  fs.SetFile("/proc/meminfo", "MemFree: 1 kB\n");
  MemorySource source(fs);
  std::vector<MetricSample> out;
  Status status = source.Poll(0, out);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace stepscope
