#include "platform/linux/net_dev_parser.h"

#include <gtest/gtest.h>

#include "platform/linux/proc_test_data.h"

namespace stepscope {
namespace {

using testing::ReadProcTestData;

constexpr char kHeader[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop "
    "fifo colls "
    "carrier compressed\n";

TEST(ParseNetDev, KeepsEth0AndSkipsLoopbackAndIfbOfACapturedFile) {
  // The build VM: lo, ifb0, ifb1, eth0.
  StatusOr<NetDevStats> stats = ParseNetDev(ReadProcTestData("snapshot_1/net/dev"));
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(stats->interfaces.size(), 1u);
  EXPECT_EQ(stats->interfaces[0].name, "eth0");
  EXPECT_EQ(stats->interfaces[0].rx_bytes, 96612843u);
  EXPECT_EQ(stats->interfaces[0].tx_bytes, 84396u);
}

TEST(ParseNetDev, ReadsSeveralInterfacesIncludingOldKernelsWideCounters) {
  // Old kernels print no space between the colon and a wide first counter.
  std::string text = std::string(kHeader) +
                     "  eth0:123456789012 10 0 0 0 0 0 0 42 7 0 0 0 0 0 0\n"
                     "ib0: 5 1 0 0 0 0 0 0 6 1 0 0 0 0 0 0\n"
                     "ifb10: 9 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\n"
                     "ifbx: 1 1 0 0 0 0 0 0 2 1 0 0 0 0 0 0\n";
  StatusOr<NetDevStats> stats = ParseNetDev(text);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(stats->interfaces.size(), 3u);
  EXPECT_EQ(stats->interfaces[0].rx_bytes, 123456789012u);
  EXPECT_EQ(stats->interfaces[0].tx_bytes, 42u);
  EXPECT_EQ(stats->interfaces[1].name, "ib0");
  EXPECT_EQ(stats->interfaces[1].tx_bytes, 6u);
  EXPECT_EQ(stats->interfaces[2].name, "ifbx");  // not an ifb device, just a similar name
}

TEST(ParseNetDev, RejectsAMissingHeader) {
  StatusOr<NetDevStats> stats = ParseNetDev("  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(stats.status().message(),
            "/proc/net/dev line 1: expected the column header, got '  eth0: 1 2 3 4 5 6 7 8 9 10 "
            "11 12 13 14...'");
}

TEST(ParseNetDev, RejectsEmptyText) { EXPECT_FALSE(ParseNetDev("").ok()); }

TEST(ParseNetDev, RejectsALineCutShort) {
  StatusOr<NetDevStats> stats =
      ParseNetDev(std::string(kHeader) + "  eth0: 96612843    1941    0    0");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().message(), "/proc/net/dev line 3: 'eth0' has 4 counters, expected 16");
}

TEST(ParseNetDev, RejectsALineWithoutColon) {
  StatusOr<NetDevStats> stats = ParseNetDev(std::string(kHeader) + "eth0 1 2 3\n");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().message(),
            "/proc/net/dev line 3: no ':' after the interface name: 'eth0 1 2 3'");
}

TEST(ParseNetDev, RejectsANonNumericCounter) {
  StatusOr<NetDevStats> stats =
      ParseNetDev(std::string(kHeader) + "eth0: 1 2 3 4 5 6 7 8 -9 10 11 12 13 14 15 16\n");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().message(),
            "/proc/net/dev line 3: counter 9 of 'eth0' is not a number: '-9'");
}

}  // namespace
}  // namespace stepscope
