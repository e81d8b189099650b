// Choosing instances for a need: by price among priced types, by capacity among all.
#include "rules/instance_fit.h"

#include <gtest/gtest.h>

#include "rules/instance_capacities.h"

namespace stepscope::rules {
namespace {

constexpr double kGiB = double(int64_t{1} << 30);

InstanceType Priced(const char* name, double price) {
  InstanceType type = *FindKnownInstanceType(name);
  type.price_per_hour = price;
  return type;
}

TEST(InstancesToFit, CountsTheFewestThatMeetEveryNeed) {
  const InstanceType g5 = *FindKnownInstanceType("g5.xlarge");  // 1 GPU, 4 vCPUs, 16 GiB
  EXPECT_EQ(InstancesToFit(g5, {.gpus = 1, .gpu_memory_bytes = 0, .vcpus = 4, .host_memory_bytes = 0}), 1);
  EXPECT_EQ(InstancesToFit(g5, {.gpus = 3, .gpu_memory_bytes = 0, .vcpus = 1, .host_memory_bytes = 0}), 3);
  EXPECT_EQ(InstancesToFit(g5, {.gpus = 1, .gpu_memory_bytes = 0, .vcpus = 9, .host_memory_bytes = 0}), 3);
  EXPECT_EQ(InstancesToFit(g5, {.gpus = 1, .gpu_memory_bytes = 0, .vcpus = 1, .host_memory_bytes = 32 * kGiB}), 2);
  EXPECT_EQ(InstancesToFit(g5, {.gpus = 1, .gpu_memory_bytes = 30 * kGiB, .vcpus = 1, .host_memory_bytes = 0}), 0)
      << "its GPUs hold less than the job used";
  EXPECT_EQ(InstancesToFit(*FindKnownInstanceType("c5.xlarge"), {.gpus = 1}), 0) << "no GPU";
}

TEST(CheapestFit, PicksTheLowestHourlyPriceOfTheSameModelAndSkipsUnpriced) {
  const std::vector<InstanceType> candidates = {Priced("g5.12xlarge", 7.09), Priced("g5.xlarge", 1.408),
                                                *FindKnownInstanceType("g5.2xlarge"), Priced("g4dn.xlarge", 0.5)};
  const InstanceFit fit = CheapestFit(candidates, "A10G", {.gpus = 2, .vcpus = 6});
  ASSERT_NE(fit.type, nullptr);
  EXPECT_EQ(fit.type->name, "g5.xlarge");
  EXPECT_EQ(fit.count, 2);
  EXPECT_EQ(CheapestFit({*FindKnownInstanceType("g5.2xlarge")}, "A10G", {.gpus = 1}).type, nullptr);
}

TEST(SmallestFit, PrefersFewerAcceleratorsThenFewerCpusAndIgnoresPrices) {
  const std::vector<InstanceType> candidates = KnownInstanceTypes();
  // One GPU's work and 6 busy vCPUs: a g5.2xlarge (1 GPU, 8 vCPUs), not two g5.xlarge.
  const InstanceFit fit = SmallestFit(candidates, "A10G", {.gpus = 1, .vcpus = 6, .host_memory_bytes = 20 * kGiB});
  ASSERT_NE(fit.type, nullptr);
  EXPECT_EQ(fit.type->name, "g5.2xlarge");
  EXPECT_EQ(fit.count, 1);
  const InstanceType current = *FindKnownInstanceType("g5.12xlarge");
  EXPECT_TRUE(IsSmallerFleet(fit, {&current, 1}));
  EXPECT_FALSE(IsSmallerFleet({&current, 1}, fit));
  // A CPU job needing 6 vCPUs and 20 GiB: one m5.2xlarge (8, 32 GiB), not three m5.large
  // (fewer vCPUs in all, but a job split across machines) nor a c5.2xlarge (16 GiB).
  const InstanceFit cpu = SmallestFit(candidates, "", {.vcpus = 6, .host_memory_bytes = 20 * kGiB});
  ASSERT_NE(cpu.type, nullptr);
  EXPECT_EQ(cpu.type->name, "m5.2xlarge");
  EXPECT_EQ(cpu.count, 1);
  EXPECT_EQ(SmallestFit(candidates, "A10G", {.gpus = 1, .gpu_memory_bytes = 40 * kGiB}).type, nullptr);
}

}  // namespace
}  // namespace stepscope::rules
