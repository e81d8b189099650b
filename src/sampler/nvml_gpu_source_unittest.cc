#include "sampler/nvml_gpu_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>

#include "fake_nvml_script.h"

namespace stepscope {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using testing::FakeNvmlPath;
using testing::ScopedFakeNvmlScript;

using Samples = std::vector<std::pair<std::string, double>>;

// Two GPUs: gpu0 changes every poll for two polls, gpu1 is constant.
constexpr char kTwoGpus[] = R"({
  "driver_version": "550.54.15",
  "gpus": [
    {"name": "NVIDIA H100 80GB HBM3",
     "utilization_gpu_pct": [35, 90], "utilization_memory_pct": [5, 6],
     "memory_total_bytes": 85899345920, "memory_used_bytes": [21474836480, 42949672960],
     "power_mw": [71500, 300250], "temperature_c": [40, 55], "sm_clock_mhz": [1980, 1755]},
    {"name": "NVIDIA A10",
     "utilization_gpu_pct": 7, "memory_total_bytes": 24146608128, "memory_used_bytes": 0,
     "power_mw": 15000, "temperature_c": 30, "sm_clock_mhz": 210}
  ]
})";

class NvmlGpuSourceTest : public ::testing::Test {
 protected:
  // Loads the fake with `json` and builds the source; false (with a failure) if it cannot.
  void Start(const char* json) {
    script_ = std::make_unique<ScopedFakeNvmlScript>(json);
    ASSERT_TRUE(script_->ok());
    auto nvml = NvmlLoader::Load(FakeNvmlPath());
    ASSERT_TRUE(nvml.ok()) << nvml.status().message();
    source_ = std::make_unique<NvmlGpuSource>(std::move(nvml).value());
  }

  // One poll; its samples as (name, value) pairs, and its status in `status`.
  Samples Poll(Status* status = nullptr) {
    std::vector<MetricSample> out;
    Status s = source_->Poll(/*monotonic_ns=*/0, out);
    if (status) {
      *status = s;
    } else {
      EXPECT_TRUE(s.ok()) << s.message();
    }
    Samples samples;
    for (const MetricSample& sample : out) samples.emplace_back(sample.name, sample.value);
    return samples;
  }

  std::unique_ptr<ScopedFakeNvmlScript> script_;
  std::unique_ptr<NvmlGpuSource> source_;
};

TEST_F(NvmlGpuSourceTest, NameIsNvml) {
  ASSERT_NO_FATAL_FAILURE(Start(kTwoGpus));
  EXPECT_EQ(source_->name(), "nvml");
}

TEST_F(NvmlGpuSourceTest, EmitsEveryMetricOfEveryGpuWithExactValues) {
  ASSERT_NO_FATAL_FAILURE(Start(kTwoGpus));
  EXPECT_THAT(Poll(), ElementsAre(Pair("gpu/gpu0/util_pct", 35.0),
                                  Pair("gpu/gpu0/memory_used_bytes", 21474836480.0),
                                  Pair("gpu/gpu0/memory_total_bytes", 85899345920.0),
                                  Pair("gpu/gpu0/memory_used_pct", 25.0),
                                  Pair("gpu/gpu0/power_w", 71.5),
                                  Pair("gpu/gpu0/temperature_c", 40.0),
                                  Pair("gpu/gpu0/sm_clock_mhz", 1980.0),
                                  Pair("gpu/gpu1/util_pct", 7.0),
                                  Pair("gpu/gpu1/memory_used_bytes", 0.0),
                                  Pair("gpu/gpu1/memory_total_bytes", 24146608128.0),
                                  Pair("gpu/gpu1/memory_used_pct", 0.0),
                                  Pair("gpu/gpu1/power_w", 15.0),
                                  Pair("gpu/gpu1/temperature_c", 30.0),
                                  Pair("gpu/gpu1/sm_clock_mhz", 210.0)));
}

TEST_F(NvmlGpuSourceTest, ValuesFollowTheScriptFromPollToPoll) {
  ASSERT_NO_FATAL_FAILURE(Start(kTwoGpus));
  Poll();
  const auto second = ElementsAre(Pair("gpu/gpu0/util_pct", 90.0),
                                  Pair("gpu/gpu0/memory_used_bytes", 42949672960.0),
                                  Pair("gpu/gpu0/memory_total_bytes", 85899345920.0),
                                  Pair("gpu/gpu0/memory_used_pct", 50.0),
                                  Pair("gpu/gpu0/power_w", 300.25),
                                  Pair("gpu/gpu0/temperature_c", 55.0),
                                  Pair("gpu/gpu0/sm_clock_mhz", 1755.0),
                                  Pair("gpu/gpu1/util_pct", 7.0),
                                  Pair("gpu/gpu1/memory_used_bytes", 0.0),
                                  Pair("gpu/gpu1/memory_total_bytes", 24146608128.0),
                                  Pair("gpu/gpu1/memory_used_pct", 0.0),
                                  Pair("gpu/gpu1/power_w", 15.0),
                                  Pair("gpu/gpu1/temperature_c", 30.0),
                                  Pair("gpu/gpu1/sm_clock_mhz", 210.0));
  EXPECT_THAT(Poll(), second);
  // The script's last value repeats.
  EXPECT_THAT(Poll(), second);
}

TEST_F(NvmlGpuSourceTest, NotSupportedOmitsJustThatMetricAndIsReportedOnce) {
  // Only the first call fails: if the source asked again, power would come back.
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 1, "memory_total_bytes": 8, "memory_used_bytes": 2,
       "power_mw": 1000, "temperature_c": 31, "sm_clock_mhz": 100},
      {"name": "NVIDIA A10", "utilization_gpu_pct": 2, "memory_total_bytes": 8,
       "memory_used_bytes": 4, "power_mw": 2000, "temperature_c": 32, "sm_clock_mhz": 200}],
      "failures": [{"call": "nvmlDeviceGetPowerUsage", "gpu": 1, "code": 3, "times": 1}]})"));
  const auto expected = ElementsAre(Pair("gpu/gpu0/util_pct", 1.0),
                                    Pair("gpu/gpu0/memory_used_bytes", 2.0),
                                    Pair("gpu/gpu0/memory_total_bytes", 8.0),
                                    Pair("gpu/gpu0/memory_used_pct", 25.0),
                                    Pair("gpu/gpu0/power_w", 1.0),
                                    Pair("gpu/gpu0/temperature_c", 31.0),
                                    Pair("gpu/gpu0/sm_clock_mhz", 100.0),
                                    Pair("gpu/gpu1/util_pct", 2.0),
                                    Pair("gpu/gpu1/memory_used_bytes", 4.0),
                                    Pair("gpu/gpu1/memory_total_bytes", 8.0),
                                    Pair("gpu/gpu1/memory_used_pct", 50.0),
                                    Pair("gpu/gpu1/temperature_c", 32.0),
                                    Pair("gpu/gpu1/sm_clock_mhz", 200.0));
  Status status;
  EXPECT_THAT(Poll(&status), expected);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "nvmlDeviceGetPowerUsage(gpu1 (NVIDIA A10)) failed with NVML error 3 (Not "
            "Supported): this GPU or driver does not report it; nothing to do; power_w omitted "
            "for gpu1");
  EXPECT_THAT(Poll(&status), expected);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST_F(NvmlGpuSourceTest, UnscriptedReadingsAreNotSupportedAndOmitted) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"temperature_c": 61}]})"));
  Status status;
  EXPECT_THAT(Poll(&status), ElementsAre(Pair("gpu/gpu0/temperature_c", 61.0)));
  EXPECT_EQ(status.message(),
            "nvmlDeviceGetUtilizationRates(gpu0 (Fake GPU 0)) failed with NVML error 3 (Not "
            "Supported): this GPU or driver does not report it; nothing to do; util_pct omitted "
            "for gpu0; "
            "nvmlDeviceGetMemoryInfo(gpu0 (Fake GPU 0)) failed with NVML error 3 (Not "
            "Supported): this GPU or driver does not report it; nothing to do; "
            "memory_used_bytes, memory_total_bytes and memory_used_pct omitted for gpu0; "
            "nvmlDeviceGetPowerUsage(gpu0 (Fake GPU 0)) failed with NVML error 3 (Not "
            "Supported): this GPU or driver does not report it; nothing to do; power_w omitted "
            "for gpu0; "
            "nvmlDeviceGetClockInfo(gpu0 (Fake GPU 0)) failed with NVML error 3 (Not "
            "Supported): this GPU or driver does not report it; nothing to do; sm_clock_mhz "
            "omitted for gpu0");
  EXPECT_THAT(Poll(), ElementsAre(Pair("gpu/gpu0/temperature_c", 61.0)));
}

TEST_F(NvmlGpuSourceTest, LostGpuDropsAllItsMetricsForThePollAndIsReportedOnce) {
  // gpu1's temperature read (after util, memory and power succeeded) fails from poll 1 on.
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 10, "temperature_c": 40},
      {"name": "NVIDIA A10", "utilization_gpu_pct": 20, "power_mw": 5000, "temperature_c": 50}],
      "failures": [{"call": "nvmlDeviceGetTemperature", "gpu": 1, "code": 15, "from": 1}]})"));
  Status status;
  // Poll 0: the unscripted readings are reported as unsupported; the rest is there.
  EXPECT_THAT(Poll(&status), ElementsAre(Pair("gpu/gpu0/util_pct", 10.0),
                                         Pair("gpu/gpu0/temperature_c", 40.0),
                                         Pair("gpu/gpu1/util_pct", 20.0),
                                         Pair("gpu/gpu1/power_w", 5.0),
                                         Pair("gpu/gpu1/temperature_c", 50.0)));
  EXPECT_THAT(Poll(&status), ElementsAre(Pair("gpu/gpu0/util_pct", 10.0),
                                         Pair("gpu/gpu0/temperature_c", 40.0)));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "nvmlDeviceGetTemperature(gpu1 (NVIDIA A10)) failed with NVML error 15 (GPU is "
            "lost): the GPU stopped responding or fell off the bus; check `nvidia-smi` and the "
            "kernel log (dmesg) for Xid errors; gpu1 has no metrics while this lasts (reported "
            "once)");
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(Poll(&status), ElementsAre(Pair("gpu/gpu0/util_pct", 10.0),
                                           Pair("gpu/gpu0/temperature_c", 40.0)));
    EXPECT_TRUE(status.ok()) << status.message();
  }
}

TEST_F(NvmlGpuSourceTest, GpuComesBackAfterTransientFailures) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": [10, 11, 12, 13], "sm_clock_mhz": 1400}],
      "failures": [
        {"call": "nvmlDeviceGetUtilizationRates", "code": 10, "from": 1, "times": 1},
        {"call": "nvmlDeviceGetUtilizationRates", "code": 15, "from": 2, "times": 1}]})"));
  Status status;
  Poll(&status);  // memory, power and temperature are unscripted: reported here
  Samples first = Poll(&status);
  EXPECT_THAT(first, IsEmpty());
  EXPECT_EQ(status.message(),
            "nvmlDeviceGetUtilizationRates(gpu0 (Fake GPU 0)) failed with NVML error 10 "
            "(Timeout): the driver did not answer in time; check `nvidia-smi` and the kernel "
            "log (dmesg); gpu0 has no metrics while this lasts (reported once)");
  // A different code is a different problem: reported too.
  EXPECT_THAT(Poll(&status), IsEmpty());
  EXPECT_THAT(status.message(), ::testing::StartsWith(
      "nvmlDeviceGetUtilizationRates(gpu0 (Fake GPU 0)) failed with NVML error 15 (GPU is lost)"));
  EXPECT_THAT(Poll(&status), ElementsAre(Pair("gpu/gpu0/util_pct", 13.0),
                                         Pair("gpu/gpu0/sm_clock_mhz", 1400.0)));
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST_F(NvmlGpuSourceTest, ZeroTotalMemoryOmitsOnlyThePercentage) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 0, "memory_total_bytes": 0, "memory_used_bytes": 0,
       "power_mw": 0, "temperature_c": 0, "sm_clock_mhz": 0}]})"));
  EXPECT_THAT(Poll(), ElementsAre(Pair("gpu/gpu0/util_pct", 0.0),
                                  Pair("gpu/gpu0/memory_used_bytes", 0.0),
                                  Pair("gpu/gpu0/memory_total_bytes", 0.0),
                                  Pair("gpu/gpu0/power_w", 0.0),
                                  Pair("gpu/gpu0/temperature_c", 0.0),
                                  Pair("gpu/gpu0/sm_clock_mhz", 0.0)));
}

TEST_F(NvmlGpuSourceTest, GpuWithoutHandleIsReportedOnceAndSkipped) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 3, "memory_total_bytes": 1000, "memory_used_bytes": 1,
       "power_mw": 1, "temperature_c": 1, "sm_clock_mhz": 1},
      {"utilization_gpu_pct": 4}],
      "failures": [{"call": "nvmlDeviceGetHandleByIndex_v2", "gpu": 1, "code": 15}]})"));
  Status status;
  Samples first = Poll(&status);
  ASSERT_EQ(first.size(), 7u);
  EXPECT_EQ(first[0], std::make_pair(std::string("gpu/gpu0/util_pct"), 3.0));
  EXPECT_EQ(first[3], std::make_pair(std::string("gpu/gpu0/memory_used_pct"), 0.1));
  EXPECT_EQ(status.message(),
            "nvmlDeviceGetHandleByIndex_v2(gpu1) failed with NVML error 15 (GPU is lost): the "
            "GPU stopped responding or fell off the bus; check `nvidia-smi` and the kernel log "
            "(dmesg) for Xid errors; gpu1 has no metrics in this run");
  EXPECT_EQ(Poll(&status).size(), 7u);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST_F(NvmlGpuSourceTest, AppendsAfterExistingSamples) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"utilization_gpu_pct": 9,
      "memory_total_bytes": 4, "memory_used_bytes": 1, "power_mw": 1, "temperature_c": 1,
      "sm_clock_mhz": 1}]})"));
  std::vector<MetricSample> out = {{"cpu/total/util_pct", 50.0}};
  ASSERT_TRUE(source_->Poll(0, out).ok());
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(out[0].name, "cpu/total/util_pct");
  EXPECT_EQ(out[1].name, "gpu/gpu0/util_pct");
  EXPECT_EQ(out[4].value, 25.0);
}

}  // namespace
}  // namespace stepscope
