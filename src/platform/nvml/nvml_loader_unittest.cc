#include "platform/nvml/nvml_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_nvml_script.h"

namespace stepscope {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::FakeNvmlPath;
using testing::ScopedFakeNvmlScript;

constexpr char kTwoGpus[] = R"({
  "driver_version": "550.54.15",
  "gpus": [
    {"name": "NVIDIA H100 80GB HBM3", "utilization_gpu_pct": 1},
    {"name": "NVIDIA A10", "utilization_gpu_pct": 2}
  ]
})";

TEST(NvmlLoaderTest, MissingLibraryIsUnavailableAndSaysGpuMetricsAreOff) {
  auto nvml = NvmlLoader::Load("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nvml.status().message(),
              StartsWith("NVML not found (dlopen /nonexistent/libnvidia-ml.so.1: "));
  EXPECT_THAT(nvml.status().message(), HasSubstr("No such file or directory"));
  EXPECT_THAT(nvml.status().message(), HasSubstr("check the path; GPU metrics are off"));
}

TEST(NvmlLoaderTest, MissingSonameSaysNoDriverIsInstalled) {
  auto nvml = NvmlLoader::Load("libstepscope-no-such-nvml.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nvml.status().message(), HasSubstr("no NVIDIA driver is installed on this machine"));
  EXPECT_THAT(nvml.status().message(), HasSubstr("GPU metrics are off"));
}

TEST(NvmlLoaderTest, LoadsFakeAndEnumeratesGpus) {
  ScopedFakeNvmlScript script(kTwoGpus);
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  EXPECT_EQ((*nvml)->library_path(), FakeNvmlPath());
  EXPECT_EQ((*nvml)->driver_version(), "550.54.15");
  ASSERT_EQ((*nvml)->gpus().size(), 2u);
  EXPECT_EQ((*nvml)->gpus()[0].index, 0u);
  EXPECT_EQ((*nvml)->gpus()[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_NE((*nvml)->gpus()[0].handle, nullptr);
  EXPECT_TRUE((*nvml)->gpus()[0].status.ok());
  EXPECT_EQ((*nvml)->gpus()[1].index, 1u);
  EXPECT_EQ((*nvml)->gpus()[1].name, "NVIDIA A10");
  EXPECT_NE((*nvml)->gpus()[1].handle, (*nvml)->gpus()[0].handle);
}

TEST(NvmlLoaderTest, DestructorShutsNvmlDown) {
  testing::FakeNvmlProbe probe;
  ASSERT_TRUE(probe.ok());
  ScopedFakeNvmlScript script(kTwoGpus);
  ASSERT_TRUE(script.ok());
  {
    auto nvml = NvmlLoader::Load(FakeNvmlPath());
    ASSERT_TRUE(nvml.ok()) << nvml.status().message();
    EXPECT_EQ(probe.InitCount(), 1);
  }
  EXPECT_EQ(probe.InitCount(), 0);
}

TEST(NvmlLoaderTest, FailedEnumerationStillShutsNvmlDown) {
  testing::FakeNvmlProbe probe;
  ASSERT_TRUE(probe.ok());
  ScopedFakeNvmlScript script(R"({"gpus": [{}],
      "failures": [{"call": "nvmlDeviceGetCount_v2", "code": 999}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(nvml.status().message(),
            "nvmlDeviceGetCount_v2 failed with NVML error 999 (Unknown Error): check "
            "`nvidia-smi` on this machine; GPU metrics are off");
  EXPECT_EQ(probe.InitCount(), 0);
}

TEST(NvmlLoaderTest, InitFailureKeepsCallCodeNvmlTextAndNextStep) {
  ScopedFakeNvmlScript script(R"({"failures": [{"call": "nvmlInit_v2", "code": 9}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(nvml.status().message(),
            std::string("NVML found at ") + FakeNvmlPath() +
                " but nvmlInit_v2 failed with NVML error 9 (Driver Not Loaded): the NVIDIA "
                "kernel driver is not loaded; check `nvidia-smi` and `lsmod | grep nvidia`, "
                "then load the driver or reboot; GPU metrics are off");
}

TEST(NvmlLoaderTest, MissingEntryPointIsNamed) {
  ScopedFakeNvmlScript script(kTwoGpus);
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(testing::FakeNvmlWithoutClockInfoPath());
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nvml.status().message(),
              StartsWith(std::string("NVML at ") + testing::FakeNvmlWithoutClockInfoPath() +
                         " lacks nvmlDeviceGetClockInfo (dlsym: "));
  EXPECT_THAT(nvml.status().message(),
              HasSubstr("update the NVIDIA driver; GPU metrics are off"));
}

TEST(NvmlLoaderTest, ZeroGpusLoads) {
  ScopedFakeNvmlScript script(R"({"driver_version": "535.1"})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  EXPECT_EQ((*nvml)->driver_version(), "535.1");
  EXPECT_TRUE((*nvml)->gpus().empty());
}

TEST(NvmlLoaderTest, GpuWithoutHandleIsKeptWithItsError) {
  ScopedFakeNvmlScript script(R"({"gpus": [{"name": "A"}, {"name": "B"}],
      "failures": [{"call": "nvmlDeviceGetHandleByIndex_v2", "gpu": 1, "code": 15}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  ASSERT_EQ((*nvml)->gpus().size(), 2u);
  EXPECT_TRUE((*nvml)->gpus()[0].status.ok());
  EXPECT_EQ((*nvml)->gpus()[0].name, "A");
  const NvmlGpu& lost = (*nvml)->gpus()[1];
  EXPECT_EQ(lost.index, 1u);
  EXPECT_EQ(lost.handle, nullptr);
  EXPECT_EQ(lost.name, "unknown");
  EXPECT_EQ(lost.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(lost.status.message(),
            "nvmlDeviceGetHandleByIndex_v2(gpu1) failed with NVML error 15 (GPU is lost): the "
            "GPU stopped responding or fell off the bus; check `nvidia-smi` and the kernel log "
            "(dmesg) for Xid errors; gpu1 has no metrics in this run");
}

TEST(NvmlLoaderTest, DriverVersionFailureIsNotFatal) {
  ScopedFakeNvmlScript script(R"({"gpus": [{}],
      "failures": [{"call": "nvmlSystemGetDriverVersion", "code": 3}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  EXPECT_EQ((*nvml)->driver_version(), "unknown");
  ASSERT_EQ((*nvml)->gpus().size(), 1u);
  EXPECT_EQ((*nvml)->gpus()[0].name, "Fake GPU 0");
}

TEST(NvmlLoaderTest, ReloadReadsTheNewScript) {
  {
    ScopedFakeNvmlScript script(kTwoGpus);
    ASSERT_TRUE(script.ok());
    auto nvml = NvmlLoader::Load(FakeNvmlPath());
    ASSERT_TRUE(nvml.ok()) << nvml.status().message();
    EXPECT_EQ((*nvml)->gpus().size(), 2u);
  }
  ScopedFakeNvmlScript script(R"({"gpus": [{"name": "only"}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  ASSERT_EQ((*nvml)->gpus().size(), 1u);
  EXPECT_EQ((*nvml)->gpus()[0].name, "only");
}

TEST(NvmlLoaderTest, BadScriptFailsInitLoudly) {
  ScopedFakeNvmlScript script(R"({"gpus": [{"powr_mw": 1}]})");
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_FALSE(nvml.ok());
  EXPECT_THAT(nvml.status().message(),
              HasSubstr("nvmlInit_v2 failed with NVML error 999 (Unknown Error)"));
}

TEST(NvmlLoaderTest, ResolvesEveryOptionalEntryPointOfACompleteLibrary) {
  ScopedFakeNvmlScript script(kTwoGpus);
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  const nvml::NvmlEntryPoints& e = (*nvml)->entry_points();
  EXPECT_NE(e.nvmlDeviceGetComputeRunningProcesses_v3, nullptr);
  EXPECT_NE(e.nvmlDeviceGetProcessUtilization, nullptr);
  EXPECT_NE(e.nvmlDeviceGetPcieThroughput, nullptr);
  EXPECT_NE(e.nvmlDeviceGetCurrentClocksEventReasons, nullptr);
  EXPECT_NE(e.nvmlDeviceGetTotalEccErrors, nullptr);
  EXPECT_NE(e.nvmlEventSetWait_v2, nullptr);
  EXPECT_NE(e.nvmlGpmMetricsGet, nullptr);
  // The fake exports only the current names: the deprecated aliases are missing and named.
  EXPECT_EQ(e.nvmlDeviceGetComputeRunningProcesses_v2, nullptr);
  EXPECT_EQ(e.nvmlDeviceGetCurrentClocksThrottleReasons, nullptr);
  EXPECT_THAT((*nvml)->missing_optional(),
              ::testing::ElementsAre("nvmlDeviceGetComputeRunningProcesses_v2",
                                     "nvmlDeviceGetCurrentClocksThrottleReasons"));
}

TEST(NvmlLoaderTest, LibraryWithoutOptionalEntryPointsStillLoads) {
  ScopedFakeNvmlScript script(kTwoGpus);
  ASSERT_TRUE(script.ok());
  auto nvml = NvmlLoader::Load(testing::FakeNvmlBasicPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  EXPECT_EQ((*nvml)->gpus().size(), 2u);
  const nvml::NvmlEntryPoints& e = (*nvml)->entry_points();
  EXPECT_NE(e.nvmlDeviceGetClockInfo, nullptr);
  EXPECT_EQ(e.nvmlDeviceGetPcieThroughput, nullptr);
  EXPECT_EQ(e.nvmlGpmMetricsGet, nullptr);
  EXPECT_EQ(e.nvmlEventSetWait_v2, nullptr);
  EXPECT_EQ((*nvml)->missing_optional().size(), 16u);
  EXPECT_THAT((*nvml)->missing_optional(), ::testing::Contains("nvmlDeviceGetTotalEccErrors"));
}

}  // namespace
}  // namespace stepscope
