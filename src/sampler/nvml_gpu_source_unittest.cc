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

  // One poll of a script that leaves basic readings out, which the first poll reports as
  // unsupported: anything else reported fails the test.
  Samples PollDepth() {
    Status status;
    Samples samples = Poll(&status);
    EXPECT_THAT(status.message(), ::testing::Not(::testing::HasSubstr("while this lasts")));
    EXPECT_THAT(status.message(), ::testing::Not(::testing::HasSubstr("Xid")));
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

// Only the named metrics of a poll, in order: the depth tests leave the basic readings out.
Samples Only(const Samples& samples, std::string_view infix) {
  Samples kept;
  for (const auto& sample : samples) {
    if (sample.first.find(infix) != std::string::npos) kept.push_back(sample);
  }
  return kept;
}

TEST_F(NvmlGpuSourceTest, PcieThroughputIsInBytesPerSecond) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 1, "pcie_tx_kb_per_s": [100, 0], "pcie_rx_kb_per_s": [2048, 1]}]})"));
  Status status;
  EXPECT_THAT(Only(Poll(&status), "/pcie_"), ElementsAre(Pair("gpu/gpu0/pcie_tx_bytes_per_s", 102400.0),
                                                         Pair("gpu/gpu0/pcie_rx_bytes_per_s", 2097152.0)));
  EXPECT_THAT(Only(Poll(&status), "/pcie_"), ElementsAre(Pair("gpu/gpu0/pcie_tx_bytes_per_s", 0.0),
                                                         Pair("gpu/gpu0/pcie_rx_bytes_per_s", 1024.0)));
}

TEST_F(NvmlGpuSourceTest, ThrottleReasonBitsBecomeNamedFlags) {
  // 0x4 power cap; 0x20|0x40 thermal (SW and HW); 0x1 idle; 0x8|0x80|0x10|0x2 the others.
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 1, "clock_event_reasons": [4, 96, 1, 154, 0]}]})"));
  Status status;
  auto flags = [&] {
    Samples throttle = Only(Poll(&status), "/throttle_");
    std::vector<std::string> active;
    for (const auto& [name, value] : throttle) {
      EXPECT_TRUE(value == 0.0 || value == 1.0) << name;
      if (value == 1.0) active.push_back(name.substr(std::string("gpu/gpu0/throttle_").size()));
    }
    EXPECT_EQ(throttle.size(), kThrottleReasons.size());
    return active;
  };
  EXPECT_THAT(flags(), ElementsAre("power_cap"));
  EXPECT_THAT(flags(), ElementsAre("sw_thermal", "hw_thermal"));
  EXPECT_THAT(flags(), ElementsAre("idle"));
  EXPECT_THAT(flags(), ElementsAre("hw_slowdown", "hw_power_brake", "sync_boost", "app_clocks"));
  EXPECT_THAT(flags(), IsEmpty());
}

TEST_F(NvmlGpuSourceTest, EccCountsAreTheVolatileTotals) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 1, "ecc_corrected": [0, 3], "ecc_uncorrected": [0, 1]}]})"));
  EXPECT_THAT(Only(PollDepth(), "/ecc_"), ElementsAre(Pair("gpu/gpu0/ecc_corrected_errors", 0.0),
                                                 Pair("gpu/gpu0/ecc_uncorrected_errors", 0.0)));
  EXPECT_THAT(Only(PollDepth(), "/ecc_"), ElementsAre(Pair("gpu/gpu0/ecc_corrected_errors", 3.0),
                                                 Pair("gpu/gpu0/ecc_uncorrected_errors", 1.0)));
}

TEST_F(NvmlGpuSourceTest, XidEventsArriveAtTheirPollWithoutBlocking) {
  // gpu1 registers for events but has none; gpu0's two events at poll 1 and one at poll 3.
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 1, "xid_events": [{"at": 1, "xid": 79}, {"at": 3, "xid": 48},
                                                {"at": 1, "xid": 13}]},
      {"utilization_gpu_pct": 2, "xid_events": []}]})"));
  EXPECT_THAT(Only(PollDepth(), "/xid"), IsEmpty());
  EXPECT_THAT(Only(PollDepth(), "/xid"), ElementsAre(Pair("gpu/gpu0/xid", 79.0), Pair("gpu/gpu0/xid", 13.0)));
  EXPECT_THAT(Only(PollDepth(), "/xid"), IsEmpty());
  EXPECT_THAT(Only(PollDepth(), "/xid"), ElementsAre(Pair("gpu/gpu0/xid", 48.0)));
  EXPECT_THAT(Only(PollDepth(), "/xid"), IsEmpty());
  EXPECT_THAT(source_->AbsentMetrics(), ::testing::Not(::testing::Contains(::testing::HasSubstr("Xid"))));
}

TEST_F(NvmlGpuSourceTest, XidEventOfALostGpuIsStillRecorded) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 1, "xid_events": [{"at": 1, "xid": 79}]}],
      "failures": [{"call": "nvmlDeviceGetUtilizationRates", "code": 15, "from": 1}]})"));
  PollDepth();
  Status status;
  EXPECT_THAT(Poll(&status), ElementsAre(Pair("gpu/gpu0/xid", 79.0)));
  EXPECT_THAT(status.message(), ::testing::StartsWith("nvmlDeviceGetUtilizationRates(gpu0 (Fake GPU 0)) failed "
                                                      "with NVML error 15 (GPU is lost)"));
}

TEST_F(NvmlGpuSourceTest, GpmActivityFromTheSecondPollOn) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"name": "NVIDIA H100 80GB HBM3", "utilization_gpu_pct": 1,
       "gpm_sm_util_pct": [55, 70], "gpm_tensor_util_pct": [20, 35]},
      {"name": "NVIDIA A10", "utilization_gpu_pct": 2}]})"));
  // Poll 0 takes the first GPM sample only.
  EXPECT_THAT(Only(PollDepth(), "_activity_pct"), IsEmpty());
  EXPECT_THAT(Only(PollDepth(), "_activity_pct"), ElementsAre(Pair("gpu/gpu0/sm_activity_pct", 55.0),
                                                         Pair("gpu/gpu0/tensor_activity_pct", 20.0)));
  EXPECT_THAT(Only(PollDepth(), "_activity_pct"), ElementsAre(Pair("gpu/gpu0/sm_activity_pct", 70.0),
                                                         Pair("gpu/gpu0/tensor_activity_pct", 35.0)));
  EXPECT_THAT(source_->AbsentMetrics(),
              ::testing::Contains("gpu1 (NVIDIA A10): GPM SM and tensor activity absent: GPM needs a Hopper or "
                                  "newer GPU"));
}

TEST_F(NvmlGpuSourceTest, GpmMetricTheDriverLacksIsLeftOut) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"utilization_gpu_pct": 1, "gpm_sm_util_pct": 40}]})"));
  PollDepth();
  EXPECT_THAT(Only(PollDepth(), "_activity_pct"), ElementsAre(Pair("gpu/gpu0/sm_activity_pct", 40.0)));
}

TEST_F(NvmlGpuSourceTest, FreesEventSetAndGpmSamples) {
  testing::FakeNvmlProbe probe;
  ASSERT_TRUE(probe.ok());
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [
      {"utilization_gpu_pct": 1, "gpm_sm_util_pct": 40, "xid_events": []},
      {"utilization_gpu_pct": 1, "gpm_tensor_util_pct": 40, "xid_events": []}]})"));
  PollDepth();
  Poll();
  source_.reset();
  EXPECT_EQ(probe.InitCount(), 0);
  EXPECT_EQ(probe.LeakedAtLastShutdown(), 0);
}

TEST_F(NvmlGpuSourceTest, PerProcessMetricsKeepOnlyTheJobsPids) {
  // 100 and 101 are the job's; 999 is another user's process on the same GPU. 101 starts at
  // poll 1, 100 reports no memory figure (as under WDDM or some containers).
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"utilization_gpu_pct": 1, "processes": [
      {"pid": 100, "sm_util_pct": [80, 60]},
      {"pid": 999, "used_memory_bytes": 5000, "sm_util_pct": 10},
      {"pid": 101, "used_memory_bytes": [1000, 2000], "sm_util_pct": 5, "from": 1}]}]})"));
  source_->SetJobPidFilter([](uint32_t pid) { return pid == 100 || pid == 101; });
  EXPECT_THAT(Only(PollDepth(), "/pid"), ElementsAre(Pair("gpu/gpu0/pid100/sm_util_pct", 80.0)));
  EXPECT_THAT(Only(PollDepth(), "/pid"), ElementsAre(Pair("gpu/gpu0/pid101/memory_used_bytes", 2000.0),
                                                Pair("gpu/gpu0/pid100/sm_util_pct", 60.0),
                                                Pair("gpu/gpu0/pid101/sm_util_pct", 5.0)));
}

TEST_F(NvmlGpuSourceTest, ManyProcessesGrowTheBufferInsteadOfLosingAny) {
  std::string processes;
  for (int pid = 1; pid <= 40; ++pid) {
    if (!processes.empty()) processes += ",";
    processes += R"({"pid": )" + std::to_string(pid) + R"(, "used_memory_bytes": )" + std::to_string(pid) +
                 R"(, "sm_util_pct": 1})";
  }
  ASSERT_NO_FATAL_FAILURE(Start((R"({"gpus": [{"utilization_gpu_pct": 1, "processes": [)" + processes +
                                 "]}]}")
                                    .c_str()));
  source_->SetJobPidFilter([](uint32_t) { return true; });
  Samples per_process = Only(PollDepth(), "/pid");
  EXPECT_EQ(per_process.size(), 80u);
  EXPECT_THAT(per_process, ::testing::Contains(Pair("gpu/gpu0/pid40/memory_used_bytes", 40.0)));
}

TEST_F(NvmlGpuSourceTest, WithoutAJobFilterNoProcessIsRecorded) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"utilization_gpu_pct": 1, "processes": [
      {"pid": 100, "used_memory_bytes": 1, "sm_util_pct": 80}]}]})"));
  EXPECT_THAT(Only(PollDepth(), "/pid"), IsEmpty());
}

TEST_F(NvmlGpuSourceTest, UnsupportedDeeperReadingsAreAbsentNotErrors) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"name": "NVIDIA A10", "utilization_gpu_pct": 1,
      "memory_total_bytes": 4, "memory_used_bytes": 1, "power_mw": 1, "temperature_c": 1,
      "sm_clock_mhz": 1}]})"));
  source_->SetJobPidFilter([](uint32_t) { return true; });
  Status status;
  const Samples first = Poll(&status);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(first.size(), 7u);
  EXPECT_THAT(source_->AbsentMetrics(),
              ElementsAre(
                  "gpu0 (NVIDIA A10): GPM SM and tensor activity absent: GPM needs a Hopper or newer GPU",
                  "gpu0 (NVIDIA A10): Xid error events absent: nvmlDeviceRegisterEvents failed with NVML error "
                  "3 (Not Supported)",
                  "gpu0 (NVIDIA A10): PCIe throughput absent: nvmlDeviceGetPcieThroughput(gpu0 (NVIDIA A10)) "
                  "failed with NVML error 3 (Not Supported)",
                  "gpu0 (NVIDIA A10): clock throttle reasons absent: nvmlDeviceGetCurrentClocksEventReasons(gpu0 "
                  "(NVIDIA A10)) failed with NVML error 3 (Not Supported)",
                  "gpu0 (NVIDIA A10): ECC error counts absent: nvmlDeviceGetTotalEccErrors(gpu0 (NVIDIA A10)) "
                  "failed with NVML error 3 (Not Supported)",
                  "gpu0 (NVIDIA A10): per-process GPU memory absent: nvmlDeviceGetComputeRunningProcesses(gpu0 "
                  "(NVIDIA A10)) failed with NVML error 3 (Not Supported)",
                  "gpu0 (NVIDIA A10): per-process SM utilization absent: nvmlDeviceGetProcessUtilization(gpu0 "
                  "(NVIDIA A10)) failed with NVML error 3 (Not Supported)"));
  // Never asked again: the list does not grow.
  EXPECT_EQ(Poll(&status).size(), 7u);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(source_->AbsentMetrics().size(), 7u);
}

TEST_F(NvmlGpuSourceTest, NoPermissionForProcessesIsAbsentToo) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"utilization_gpu_pct": 1, "processes": [
      {"pid": 100, "used_memory_bytes": 1, "sm_util_pct": 80}]}],
      "failures": [{"call": "nvmlDeviceGetComputeRunningProcesses_v3", "code": 4}]})"));
  source_->SetJobPidFilter([](uint32_t) { return true; });
  EXPECT_THAT(Only(PollDepth(), "/pid"), ElementsAre(Pair("gpu/gpu0/pid100/sm_util_pct", 80.0)));
  EXPECT_THAT(source_->AbsentMetrics(),
              ::testing::Contains(::testing::HasSubstr("per-process GPU memory absent: "
                                                       "nvmlDeviceGetComputeRunningProcesses(gpu0 (Fake GPU 0)) "
                                                       "failed with NVML error 4 (Insufficient Permissions)")));
}

TEST_F(NvmlGpuSourceTest, TransientDeeperFailureDropsOnlyThatReadingForThePoll) {
  ASSERT_NO_FATAL_FAILURE(Start(R"({"gpus": [{"utilization_gpu_pct": [1, 2, 3],
      "pcie_tx_kb_per_s": 1, "pcie_rx_kb_per_s": 1, "ecc_corrected": 0, "ecc_uncorrected": 0}],
      "failures": [{"call": "nvmlDeviceGetTotalEccErrors", "code": 10, "from": 2, "times": 2}]})"));
  PollDepth();
  Status status;
  const Samples second = Poll(&status);
  EXPECT_THAT(Only(second, "/util_pct"), ElementsAre(Pair("gpu/gpu0/util_pct", 2.0)));
  EXPECT_EQ(Only(second, "/pcie_").size(), 2u);
  EXPECT_THAT(Only(second, "/ecc_"), IsEmpty());
  EXPECT_EQ(status.message(),
            "nvmlDeviceGetTotalEccErrors(gpu0 (Fake GPU 0)) failed with NVML error 10 (Timeout): the driver did "
            "not answer in time; check `nvidia-smi` and the kernel log (dmesg); ecc_corrected_errors and "
            "ecc_uncorrected_errors of gpu0 missing while this lasts (reported once)");
  // Calls 2 and 3 fail (one poll's corrected call, then the next poll's): reported once.
  EXPECT_THAT(Only(Poll(&status), "/ecc_"), IsEmpty());
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(Only(Poll(&status), "/ecc_").size(), 2u);
}

TEST_F(NvmlGpuSourceTest, OldDriverWithoutTheSymbolsKeepsTheBasicMetrics) {
  script_ = std::make_unique<ScopedFakeNvmlScript>(R"({"driver_version": "418.1", "gpus": [
      {"utilization_gpu_pct": 5, "pcie_tx_kb_per_s": 1, "gpm_sm_util_pct": 1, "xid_events": []}]})");
  ASSERT_TRUE(script_->ok());
  auto nvml = NvmlLoader::Load(testing::FakeNvmlBasicPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  source_ = std::make_unique<NvmlGpuSource>(std::move(nvml).value());
  source_->SetJobPidFilter([](uint32_t) { return true; });
  Status status;
  EXPECT_THAT(Poll(&status), ElementsAre(Pair("gpu/gpu0/util_pct", 5.0)));
  const std::string lacks = std::string(" absent: NVML at ") + testing::FakeNvmlBasicPath() + " lacks ";
  ASSERT_GE(source_->AbsentMetrics().size(), 7u);
  // First what the library lacks (known at construction), then what the first poll found.
  EXPECT_THAT(std::vector<std::string>(source_->AbsentMetrics().begin(), source_->AbsentMetrics().begin() + 7),
              ElementsAre("PCIe throughput" + lacks + "nvmlDeviceGetPcieThroughput (driver 418.1 too old); update "
                          "the NVIDIA driver to record it",
                          "clock throttle reasons" + lacks + "nvmlDeviceGetCurrentClocksEventReasons (driver 418.1 "
                          "too old); update the NVIDIA driver to record it",
                          "ECC error counts" + lacks + "nvmlDeviceGetTotalEccErrors (driver 418.1 too old); update "
                          "the NVIDIA driver to record it",
                          "per-process GPU memory" + lacks + "nvmlDeviceGetComputeRunningProcesses_v3 (driver "
                          "418.1 too old); update the NVIDIA driver to record it",
                          "per-process SM utilization" + lacks + "nvmlDeviceGetProcessUtilization (driver 418.1 "
                          "too old); update the NVIDIA driver to record it",
                          "GPM SM and tensor activity" + lacks + "the GPM functions (nvmlGpmMetricsGet) (driver "
                          "418.1 too old); update the NVIDIA driver to record it",
                          "Xid error events absent: NVML at " + std::string(testing::FakeNvmlBasicPath()) +
                              " lacks the event functions (nvmlEventSetWait_v2); update the NVIDIA driver to "
                              "record them"));
}

}  // namespace
}  // namespace stepscope
