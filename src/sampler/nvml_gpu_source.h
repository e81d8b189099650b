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
// and, where the driver and GPU offer them (issue 15 §3, docs/formats.md):
//   gpu/gpuN/pcie_tx_bytes_per_s, pcie_rx_bytes_per_s   nvmlDeviceGetPcieThroughput() KB/s * 1024
//   gpu/gpuN/throttle_<reason>   1 while <reason> holds the clocks down, else 0, one per reason
//                                of nvmlDeviceGetCurrentClocksEventReasons (kThrottleReasons)
//   gpu/gpuN/ecc_corrected_errors, ecc_uncorrected_errors   volatile ECC totals (since the
//                                driver loaded; a rise during the run is a new error)
//   gpu/gpuN/xid                 one sample per Xid critical-error event, value = the Xid code
//                                (nvmlEventSetWait_v2 with timeout 0: never blocks the poll)
//   gpu/gpuN/sm_activity_pct, tensor_activity_pct   GPM SM_UTIL and ANY_TENSOR_UTIL between
//                                this poll and the last (Hopper+, from the second poll on)
//   gpu/gpuN/pid<P>/memory_used_bytes, pid<P>/sm_util_pct   per process of the training job
//                                only (SetJobPidFilter), from nvmlDeviceGetComputeRunningProcesses
//                                and nvmlDeviceGetProcessUtilization
//
// Failures never stop sampling and are each reported once, not every poll:
//   - a missing optional symbol, or NOT_SUPPORTED / NO_PERMISSION for a reading: that
//     reading's metrics are absent for that GPU for the rest of the run, the call is no longer
//     made, and AbsentMetrics() names it (the run manifest's capability records it);
//   - GPU_IS_LOST and, for the basic readings, any other code: none of that GPU's metrics for
//     that poll; it is tried again next poll;
//   - any other code of a deeper reading: only that reading is missing for that poll.
// Poll() returns a kUnavailable Status naming the GPU, the call, NVML's code and text the
// first time each (GPU, call, code) is seen; the samples it appended are valid even then.
//
// Callers: the CLI adds it to the SystemSampler when DescribeGpuCapability() says available.
// Threading: Poll() from one thread at a time (the sampler's); SetJobPidFilter() and
// AbsentMetrics() only while the sampler is not running.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "platform/nvml/nvml_entry_points.h"
#include "platform/nvml/nvml_loader.h"
#include "sampler/metric_source.h"

namespace stepscope {

// A clock event reason bit and the leaf of its metric, gpu/gpuN/throttle_<leaf>.
struct ThrottleReason {
  unsigned long long bit;
  std::string_view leaf;
};
// The reasons recorded, in metric order. Idle and application clocks are recorded too, though
// idle is not a slowdown (the rules leave it out). The leaves are stored metric names: the
// analysis reads them through analysis/vocabulary.h's GpuThrottleReasons(), same order.
inline constexpr std::array<ThrottleReason, 8> kThrottleReasons = {{
    {nvml::kClocksEventReasonSwPowerCap, "power_cap"},
    {nvml::kClocksThrottleReasonHwSlowdown, "hw_slowdown"},
    {nvml::kClocksEventReasonSwThermalSlowdown, "sw_thermal"},
    {nvml::kClocksThrottleReasonHwThermalSlowdown, "hw_thermal"},
    {nvml::kClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake"},
    {nvml::kClocksEventReasonSyncBoost, "sync_boost"},
    {nvml::kClocksEventReasonGpuIdle, "idle"},
    {nvml::kClocksEventReasonApplicationsClocksSetting, "app_clocks"},
}};

class NvmlGpuSource final : public MetricSource {
 public:
  // Whether a pid (as NVML reports it) belongs to the training job's process tree.
  using JobPidFilter = std::function<bool(uint32_t pid)>;

  // Takes ownership of a loaded NVML (non-null); NVML stays initialized while this lives.
  // Registers for Xid events and allocates GPM samples where supported.
  explicit NvmlGpuSource(std::unique_ptr<NvmlLoader> nvml);
  ~NvmlGpuSource() override;

  NvmlGpuSource(const NvmlGpuSource&) = delete;
  NvmlGpuSource& operator=(const NvmlGpuSource&) = delete;

  std::string_view name() const override { return "nvml"; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

  // Per-process metrics are kept for the pids `filter` accepts; without a filter (the default)
  // there are none, so other users' processes on a shared GPU never reach the run.
  void SetJobPidFilter(JobPidFilter filter) { job_pid_filter_ = std::move(filter); }

  // What is absent and why, one sentence each ("gpu1 (NVIDIA A10): ECC error counts absent:
  // nvmlDeviceGetTotalEccErrors ... Not Supported"), in the order found: missing symbols and
  // unsupported GPM/events at construction, unsupported readings as polls find them.
  const std::vector<std::string>& AbsentMetrics() const { return absent_; }

 private:
  // One NVML call (or group of calls) per reading.
  enum class Reading : uint8_t {
    kUtilization, kMemory, kPower, kTemperature, kSmClock,  // basic: a failure voids the poll
    kPcie, kThrottle, kEcc, kProcessMemory, kProcessUtilization, kGpm,
  };
  static constexpr size_t kReadingCount = 11;

  struct ProcessNames {
    std::string memory_used_bytes, sm_util_pct;
  };

  struct GpuState {
    const NvmlGpu* nvml_gpu = nullptr;  // owned by nvml_
    std::string label;             // "gpu1 (NVIDIA A10)" for messages
    std::string prefix;            // "gpu/gpu1/"
    // Metric names built once, not per poll.
    std::string util_pct, memory_used_bytes, memory_total_bytes, memory_used_pct, power_w,
        temperature_c, sm_clock_mhz, pcie_tx, pcie_rx, ecc_corrected, ecc_uncorrected, xid,
        sm_activity_pct, tensor_activity_pct;
    std::array<std::string, kThrottleReasons.size()> throttle;
    std::unordered_map<uint32_t, ProcessNames> process_names;  // per job pid seen
    std::array<bool, kReadingCount> unsupported{};
    bool handle_error_reported = false;
    std::vector<std::pair<Reading, nvml::nvmlReturn_t>> reported_failures;
    // Reused buffers and cursors of the deeper readings.
    std::vector<nvml::nvmlProcessInfo_t> processes;
    std::vector<nvml::nvmlProcessUtilizationSample_t> process_samples;
    unsigned long long last_process_sample_us = 0;
    nvml::nvmlGpmSample_t gpm_previous = nullptr;  // owned; null when GPM is unsupported
    nvml::nvmlGpmSample_t gpm_current = nullptr;
    bool gpm_has_previous = false;
  };

  void SetUpXidEvents();
  void SetUpGpm(GpuState& gpu);
  // Appends `gpu`'s samples; returns false on a failure that voids this GPU's poll. New
  // problems are appended to `problems`.
  bool PollGpu(GpuState& gpu, std::vector<MetricSample>& out, std::vector<std::string>& problems);
  // The deeper readings of one GPU; false when the GPU was lost.
  bool PollDepth(GpuState& gpu, std::vector<MetricSample>& out, std::vector<std::string>& problems);
  bool PollProcesses(GpuState& gpu, std::vector<MetricSample>& out, std::vector<std::string>& problems);
  bool PollGpm(GpuState& gpu, std::vector<MetricSample>& out, std::vector<std::string>& problems);
  void PollXidEvents(std::vector<MetricSample>& out, std::vector<std::string>& problems);
  // Handles a non-success code from `reading`; returns false when the GPU's poll is void.
  bool OnFailure(GpuState& gpu, Reading reading, nvml::nvmlReturn_t rc,
                 std::vector<std::string>& problems);
  ProcessNames& NamesFor(GpuState& gpu, uint32_t pid);

  std::unique_ptr<NvmlLoader> nvml_;
  std::vector<GpuState> gpus_;
  JobPidFilter job_pid_filter_;
  std::vector<std::string> absent_;
  nvml::nvmlEventSet_t xid_events_ = nullptr;  // owned; null when no GPU reports Xid events
  bool xid_failure_reported_ = false;
};

}  // namespace stepscope
