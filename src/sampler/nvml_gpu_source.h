// NvmlGpuSource: the sampler's source of per-GPU metrics, read through a loaded NVML.
//
// Each Poll() reads every GPU the loader found and appends, per GPU N (NVML index):
//   gpu/gpuN/util_pct            nvmlDeviceGetUtilizationRates().gpu
//   gpu/gpuN/memory_used_bytes   nvmlDeviceGetMemoryInfo().used
//   gpu/gpuN/memory_total_bytes  nvmlDeviceGetMemoryInfo().total
//   gpu/gpuN/memory_used_pct     used / total * 100 (omitted when total is 0)
//   gpu/gpuN/power_w             nvmlDeviceGetPowerUsage() milliwatts / 1000
//   gpu/gpuN/temperature_c       nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)
//   gpu/gpuN/sm_clock_mhz        nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
//
// Failures never stop sampling and are each reported once, not every poll:
//   - NOT_SUPPORTED for a reading (power on some boards): that reading's metrics are dropped
//     for that GPU for the rest of the run and the call is no longer made;
//   - any other code (GPU_IS_LOST, ...): none of that GPU's metrics for that poll; it is
//     tried again next poll.
// Poll() returns a kUnavailable Status naming the GPU, the call, NVML's code and text the
// first time each (GPU, call, code) is seen; the samples it appended are valid even then.
//
// Callers: the CLI adds it to the SystemSampler when DescribeGpuCapability() says available.
// Threading: Poll() from one thread at a time (the sampler's).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "platform/nvml/nvml_entry_points.h"
#include "platform/nvml/nvml_loader.h"
#include "sampler/metric_source.h"

namespace stepscope {

class NvmlGpuSource final : public MetricSource {
 public:
  // Takes ownership of a loaded NVML (non-null); NVML stays initialized while this lives.
  explicit NvmlGpuSource(std::unique_ptr<NvmlLoader> nvml);

  std::string_view name() const override { return "nvml"; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

 private:
  // One NVML call per reading; kMemory yields three metrics.
  enum class Reading : uint8_t { kUtilization, kMemory, kPower, kTemperature, kSmClock };
  static constexpr size_t kReadingCount = 5;

  struct GpuState {
    const NvmlGpu* nvml_gpu = nullptr;  // owned by nvml_
    std::string label;             // "gpu1 (NVIDIA A10)" for messages
    // Metric names built once, not per poll.
    std::string util_pct, memory_used_bytes, memory_total_bytes, memory_used_pct, power_w,
        temperature_c, sm_clock_mhz;
    std::array<bool, kReadingCount> unsupported{};
    bool handle_error_reported = false;
    std::vector<std::pair<Reading, nvml::nvmlReturn_t>> reported_failures;
  };

  // Appends `gpu`'s samples; returns false on a failure that voids this GPU's poll. New
  // problems are appended to `problems`.
  bool PollGpu(GpuState& gpu, std::vector<MetricSample>& out, std::vector<std::string>& problems);
  // Handles a non-success code from `reading`; returns false when the GPU's poll is void.
  bool OnFailure(GpuState& gpu, Reading reading, nvml::nvmlReturn_t rc,
                 std::vector<std::string>& problems);

  std::unique_ptr<NvmlLoader> nvml_;
  std::vector<GpuState> gpus_;
};

}  // namespace stepscope
