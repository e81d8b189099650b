#include "platform/nvml/gpu_capability.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_nvml_script.h"

namespace stepscope {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::FakeNvmlPath;
using testing::ScopedFakeNvmlScript;

TEST(GpuCapabilityTest, NoNvmlIsOffWithTheLoadError) {
  auto nvml = NvmlLoader::Load("/nonexistent/libnvidia-ml.so.1");
  GpuCapability capability = DescribeGpuCapability(nvml);
  EXPECT_FALSE(capability.available);
  EXPECT_EQ(capability.reason, nvml.status().message());
  EXPECT_EQ(capability.driver_version, "");
  EXPECT_THAT(capability.gpu_names, IsEmpty());
  EXPECT_EQ(FormatGpuCapability(capability), "GPU/NVML: off (" + nvml.status().message() + ")");
}

TEST(GpuCapabilityTest, LoadedGpusAreAvailable) {
  ScopedFakeNvmlScript script(R"({"driver_version": "550.54.15",
      "gpus": [{"name": "NVIDIA H100 80GB HBM3"}, {"name": "NVIDIA H100 80GB HBM3"}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  GpuCapability capability = DescribeGpuCapability(nvml);
  EXPECT_TRUE(capability.available);
  EXPECT_EQ(capability.reason, "");
  EXPECT_EQ(capability.driver_version, "550.54.15");
  EXPECT_THAT(capability.gpu_names,
              ElementsAre("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(FormatGpuCapability(capability),
            "GPU/NVML: 2 GPUs (NVIDIA H100 80GB HBM3, NVIDIA H100 80GB HBM3), driver 550.54.15");
}

TEST(GpuCapabilityTest, ZeroGpusIsOff) {
  ScopedFakeNvmlScript script(R"({"driver_version": "535.1"})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  GpuCapability capability = DescribeGpuCapability(nvml);
  EXPECT_FALSE(capability.available);
  EXPECT_EQ(capability.driver_version, "535.1");
  EXPECT_EQ(capability.reason,
            "NVML (driver 535.1) reports no GPUs: in a container, expose them (docker --gpus "
            "all); GPU metrics are off");
}

TEST(GpuCapabilityTest, UnusableGpuIsNamedInTheReason) {
  ScopedFakeNvmlScript script(R"({"driver_version": "1", "gpus": [{"name": "A"}, {"name": "B"}],
      "failures": [{"call": "nvmlDeviceGetHandleByIndex_v2", "gpu": 1, "code": 15}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  GpuCapability capability = DescribeGpuCapability(nvml);
  EXPECT_TRUE(capability.available);
  EXPECT_THAT(capability.gpu_names, ElementsAre("A", "unknown"));
  EXPECT_EQ(capability.reason, (*nvml)->gpus()[1].status.message());
  EXPECT_EQ(FormatGpuCapability(capability),
            "GPU/NVML: 2 GPUs (A, unknown), driver 1; " + capability.reason);
}

TEST(GpuCapabilityTest, EveryGpuUnusableIsOff) {
  ScopedFakeNvmlScript script(R"({"gpus": [{"name": "A"}],
      "failures": [{"call": "nvmlDeviceGetHandleByIndex_v2", "code": 4}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  GpuCapability capability = DescribeGpuCapability(nvml);
  EXPECT_FALSE(capability.available);
  EXPECT_EQ(capability.reason, (*nvml)->gpus()[0].status.message());
}

}  // namespace
}  // namespace stepscope
