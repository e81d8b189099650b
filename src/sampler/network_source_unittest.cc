#include "sampler/network_source.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "platform/linux/proc_test_data.h"
#include "sampler/fake_file_system.h"

namespace stepscope {
namespace {

using testing::FakeFileSystem;
using testing::ReadProcTestData;

constexpr uint64_t kSecondNs = 1'000'000'000;
constexpr char kHeader[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop "
    "fifo colls "
    "carrier compressed\n";

std::string Line(const std::string& name, uint64_t rx_bytes, uint64_t tx_bytes) {
  return name + ": " + std::to_string(rx_bytes) + " 0 0 0 0 0 0 0 " + std::to_string(tx_bytes) +
         " 0 0 0 0 0 0 0\n";
}

class NetworkSourceTest : public ::testing::Test {
 protected:
  std::map<std::string, double> PollWith(const std::string& text, uint64_t now_ns) {
    fs_.SetFile("/proc/net/dev", text);
    std::vector<MetricSample> out;
    Status status = source_.Poll(now_ns, out);
    EXPECT_TRUE(status.ok()) << status.message();
    std::map<std::string, double> by_name;
    for (const MetricSample& sample : out) by_name[sample.name] = sample.value;
    return by_name;
  }

  FakeFileSystem fs_;
  NetworkSource source_{fs_};
};

TEST_F(NetworkSourceTest, ReportsZeroBetweenTwoCapturedSnapshotsOfAnIdleLink) {
  EXPECT_TRUE(PollWith(ReadProcTestData("snapshot_1/net/dev"), kSecondNs).empty());
  std::map<std::string, double> values =
      PollWith(ReadProcTestData("snapshot_2/net/dev"), 2 * kSecondNs);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_DOUBLE_EQ(values["network/rx_bytes_per_s"], 0.0);
  EXPECT_DOUBLE_EQ(values["network/tx_bytes_per_s"], 0.0);
}

TEST_F(NetworkSourceTest, SumsInterfacesButNotLoopback) {
  PollWith(std::string(kHeader) + Line("lo", 0, 0) + Line("eth0", 1000, 500) + Line("ib0", 0, 0),
           kSecondNs);
  std::map<std::string, double> values =
      PollWith(std::string(kHeader) + Line("lo", 999999, 999999) + Line("eth0", 3000, 1500) +
                   Line("ib0", 2000, 4000),
               kSecondNs + 500'000'000);
  EXPECT_DOUBLE_EQ(values["network/rx_bytes_per_s"], 8000.0);  // 4000 bytes in 0.5 s
  EXPECT_DOUBLE_EQ(values["network/tx_bytes_per_s"], 10000.0);
}

TEST_F(NetworkSourceTest, ACounterResetYieldsNoSampleForThatDirection) {
  PollWith(std::string(kHeader) + Line("eth0", 1000, 1000), kSecondNs);
  std::map<std::string, double> values =
      PollWith(std::string(kHeader) + Line("eth0", 10, 1100), 2 * kSecondNs);
  EXPECT_EQ(values.count("network/rx_bytes_per_s"), 0u);
  EXPECT_DOUBLE_EQ(values["network/tx_bytes_per_s"], 100.0);
}

TEST_F(NetworkSourceTest, AnInterfaceThatDisappearedYieldsNoSampleThatPoll) {
  PollWith(std::string(kHeader) + Line("eth0", 0, 0) + Line("veth1", 0, 0), kSecondNs);
  EXPECT_TRUE(PollWith(std::string(kHeader) + Line("eth0", 10, 10), 2 * kSecondNs).empty());
  std::map<std::string, double> values =
      PollWith(std::string(kHeader) + Line("eth0", 30, 10), 3 * kSecondNs);
  EXPECT_DOUBLE_EQ(values["network/rx_bytes_per_s"], 20.0);
}

}  // namespace
}  // namespace stepscope
