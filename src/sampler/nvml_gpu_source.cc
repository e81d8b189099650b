#include "sampler/nvml_gpu_source.h"

#include <algorithm>
#include <cassert>

#include "platform/nvml/nvml_errors.h"

namespace stepscope {
namespace {

constexpr double kMilliwattsPerWatt = 1000.0;
// NVML's PCIe counters have 1 KB granularity, KB meaning 1024 bytes (nvidia-smi dmon divides
// by 1024 to print MB/s).
constexpr double kBytesPerKb = 1024.0;
// Bounds on what one poll reads, so a misbehaving driver cannot make the sampler allocate or
// loop without end: processes per GPU, and Xid events drained per poll (the rest wait).
constexpr unsigned int kMaxProcesses = 4096;
constexpr int kMaxXidEventsPerPoll = 64;
// Per-process metric names are cached per pid; a job that churns through more pids than this
// starts the cache afresh.
constexpr size_t kMaxCachedPids = 4096;

struct ReadingInfo {
  const char* call;     // for messages
  const char* what;     // what is absent, for AbsentMetrics()
  const char* metrics;  // which metrics, for poll messages
};
// Indexed by NvmlGpuSource::Reading.
constexpr ReadingInfo kReadings[] = {
    {"nvmlDeviceGetUtilizationRates", "GPU utilization", "util_pct"},
    {"nvmlDeviceGetMemoryInfo", "GPU memory", "memory_used_bytes, memory_total_bytes and memory_used_pct"},
    {"nvmlDeviceGetPowerUsage", "power", "power_w"},
    {"nvmlDeviceGetTemperature", "temperature", "temperature_c"},
    {"nvmlDeviceGetClockInfo", "SM clock", "sm_clock_mhz"},
    {"nvmlDeviceGetPcieThroughput", "PCIe throughput", "pcie_tx_bytes_per_s and pcie_rx_bytes_per_s"},
    {"nvmlDeviceGetCurrentClocksEventReasons", "clock throttle reasons", "throttle_*"},
    {"nvmlDeviceGetTotalEccErrors", "ECC error counts", "ecc_corrected_errors and ecc_uncorrected_errors"},
    {"nvmlDeviceGetComputeRunningProcesses", "per-process GPU memory", "pid<P>/memory_used_bytes"},
    {"nvmlDeviceGetProcessUtilization", "per-process SM utilization", "pid<P>/sm_util_pct"},
    {"nvmlGpmMetricsGet", "GPM SM and tensor activity", "sm_activity_pct and tensor_activity_pct"},
};

}  // namespace

NvmlGpuSource::NvmlGpuSource(std::unique_ptr<NvmlLoader> nvml) : nvml_(std::move(nvml)) {
  assert(nvml_ != nullptr);
  const nvml::NvmlEntryPoints& e = nvml_->entry_points();
  gpus_.reserve(nvml_->gpus().size());
  for (const NvmlGpu& gpu : nvml_->gpus()) {
    GpuState& state = gpus_.emplace_back();
    state.nvml_gpu = &gpu;
    const std::string id = "gpu" + std::to_string(gpu.index);
    state.label = id + " (" + gpu.name + ")";
    state.prefix = "gpu/" + id + "/";
    const std::string& prefix = state.prefix;
    state.util_pct = prefix + "util_pct";
    state.memory_used_bytes = prefix + "memory_used_bytes";
    state.memory_total_bytes = prefix + "memory_total_bytes";
    state.memory_used_pct = prefix + "memory_used_pct";
    state.power_w = prefix + "power_w";
    state.temperature_c = prefix + "temperature_c";
    state.sm_clock_mhz = prefix + "sm_clock_mhz";
    state.pcie_tx = prefix + "pcie_tx_bytes_per_s";
    state.pcie_rx = prefix + "pcie_rx_bytes_per_s";
    state.ecc_corrected = prefix + "ecc_corrected_errors";
    state.ecc_uncorrected = prefix + "ecc_uncorrected_errors";
    state.xid = prefix + "xid";
    state.sm_activity_pct = prefix + "sm_activity_pct";
    state.tensor_activity_pct = prefix + "tensor_activity_pct";
    for (size_t r = 0; r < kThrottleReasons.size(); ++r) {
      state.throttle[r] = prefix + "throttle_" + std::string(kThrottleReasons[r].leaf);
    }
  }

  // A symbol the library lacks takes its reading away on every GPU; say so once.
  auto lacks = [this](Reading reading, const char* symbols) {
    for (GpuState& gpu : gpus_) gpu.unsupported[static_cast<size_t>(reading)] = true;
    absent_.push_back(std::string(kReadings[static_cast<size_t>(reading)].what) + " absent: NVML at " +
                      nvml_->library_path() + " lacks " + symbols + " (driver " + nvml_->driver_version() +
                      " too old); update the NVIDIA driver to record it");
  };
  if (!e.nvmlDeviceGetPcieThroughput) lacks(Reading::kPcie, "nvmlDeviceGetPcieThroughput");
  if (!e.nvmlDeviceGetCurrentClocksEventReasons && !e.nvmlDeviceGetCurrentClocksThrottleReasons) {
    lacks(Reading::kThrottle, "nvmlDeviceGetCurrentClocksEventReasons");
  }
  if (!e.nvmlDeviceGetTotalEccErrors) lacks(Reading::kEcc, "nvmlDeviceGetTotalEccErrors");
  if (!e.nvmlDeviceGetComputeRunningProcesses_v3 && !e.nvmlDeviceGetComputeRunningProcesses_v2) {
    lacks(Reading::kProcessMemory, "nvmlDeviceGetComputeRunningProcesses_v3");
  }
  if (!e.nvmlDeviceGetProcessUtilization) lacks(Reading::kProcessUtilization, "nvmlDeviceGetProcessUtilization");
  if (!e.nvmlGpmQueryDeviceSupport || !e.nvmlGpmSampleAlloc || !e.nvmlGpmSampleFree || !e.nvmlGpmSampleGet ||
      !e.nvmlGpmMetricsGet) {
    lacks(Reading::kGpm, "the GPM functions (nvmlGpmMetricsGet)");
  } else {
    for (GpuState& gpu : gpus_) SetUpGpm(gpu);
  }
  SetUpXidEvents();
}

NvmlGpuSource::~NvmlGpuSource() {
  const nvml::NvmlEntryPoints& e = nvml_->entry_points();
  // Nothing useful can be done with a failing free at teardown.
  if (xid_events_ != nullptr) (void)e.nvmlEventSetFree(xid_events_);
  for (GpuState& gpu : gpus_) {
    if (gpu.gpm_previous != nullptr) (void)e.nvmlGpmSampleFree(gpu.gpm_previous);
    if (gpu.gpm_current != nullptr) (void)e.nvmlGpmSampleFree(gpu.gpm_current);
  }
}

void NvmlGpuSource::SetUpGpm(GpuState& gpu) {
  const nvml::NvmlEntryPoints& e = nvml_->entry_points();
  gpu.unsupported[static_cast<size_t>(Reading::kGpm)] = true;
  if (gpu.nvml_gpu->handle == nullptr) return;
  const std::string what = gpu.label + ": GPM SM and tensor activity absent: ";
  nvml::nvmlGpmSupport_t support{};
  support.version = nvml::kGpmSupportVersion;
  nvml::nvmlReturn_t rc = e.nvmlGpmQueryDeviceSupport(gpu.nvml_gpu->handle, &support);
  if (rc != nvml::kSuccess) {
    absent_.push_back(what + FormatNvmlCallError(e, "nvmlGpmQueryDeviceSupport", rc));
    return;
  }
  if (!support.isSupportedDevice) {
    absent_.push_back(what + "GPM needs a Hopper or newer GPU");
    return;
  }
  rc = e.nvmlGpmSampleAlloc(&gpu.gpm_previous);
  if (rc == nvml::kSuccess) rc = e.nvmlGpmSampleAlloc(&gpu.gpm_current);
  if (rc != nvml::kSuccess) {
    if (gpu.gpm_previous != nullptr) (void)e.nvmlGpmSampleFree(gpu.gpm_previous);
    gpu.gpm_previous = gpu.gpm_current = nullptr;
    absent_.push_back(what + FormatNvmlCallError(e, "nvmlGpmSampleAlloc", rc));
    return;
  }
  gpu.unsupported[static_cast<size_t>(Reading::kGpm)] = false;
}

void NvmlGpuSource::SetUpXidEvents() {
  const nvml::NvmlEntryPoints& e = nvml_->entry_points();
  if (!e.nvmlEventSetCreate || !e.nvmlDeviceRegisterEvents || !e.nvmlEventSetWait_v2 || !e.nvmlEventSetFree) {
    absent_.push_back("Xid error events absent: NVML at " + nvml_->library_path() +
                      " lacks the event functions (nvmlEventSetWait_v2); update the NVIDIA driver to record them");
    return;
  }
  if (gpus_.empty()) return;
  nvml::nvmlReturn_t rc = e.nvmlEventSetCreate(&xid_events_);
  if (rc != nvml::kSuccess) {
    xid_events_ = nullptr;
    absent_.push_back("Xid error events absent: " + FormatNvmlCallError(e, "nvmlEventSetCreate", rc));
    return;
  }
  size_t registered = 0;
  for (GpuState& gpu : gpus_) {
    if (gpu.nvml_gpu->handle == nullptr) continue;
    rc = e.nvmlDeviceRegisterEvents(gpu.nvml_gpu->handle, nvml::kEventTypeXidCriticalError, xid_events_);
    if (rc == nvml::kSuccess) {
      ++registered;
    } else {
      absent_.push_back(gpu.label + ": Xid error events absent: " +
                        FormatNvmlCallError(e, "nvmlDeviceRegisterEvents", rc));
    }
  }
  if (registered == 0) {
    (void)e.nvmlEventSetFree(xid_events_);
    xid_events_ = nullptr;
  }
}

Status NvmlGpuSource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  std::vector<std::string> problems;
  for (GpuState& gpu : gpus_) {
    if (gpu.nvml_gpu->handle == nullptr) {
      // The loader could not get a handle; say so once, then stay quiet.
      if (!gpu.handle_error_reported) problems.push_back(gpu.nvml_gpu->status.message());
      gpu.handle_error_reported = true;
      continue;
    }
    const size_t first = out.size();
    if (!PollGpu(gpu, out, problems)) out.resize(first);
  }
  // After the GPUs, so that a GPU whose poll is void still has its Xid events recorded.
  PollXidEvents(out, problems);
  if (problems.empty()) return OkStatus();
  std::string message = problems[0];
  for (size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
  return UnavailableError(std::move(message));
}

bool NvmlGpuSource::PollGpu(GpuState& gpu, std::vector<MetricSample>& out,
                            std::vector<std::string>& problems) {
  const nvml::NvmlEntryPoints& nvml = nvml_->entry_points();
  nvml::nvmlDevice_t device = gpu.nvml_gpu->handle;
  auto supported = [&gpu](Reading r) { return !gpu.unsupported[static_cast<size_t>(r)]; };

  if (supported(Reading::kUtilization)) {
    nvml::nvmlUtilization_t utilization{};
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetUtilizationRates(device, &utilization);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.util_pct, static_cast<double>(utilization.gpu)});
    } else if (!OnFailure(gpu, Reading::kUtilization, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kMemory)) {
    nvml::nvmlMemory_t memory{};
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetMemoryInfo(device, &memory);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.memory_used_bytes, static_cast<double>(memory.used)});
      out.push_back({gpu.memory_total_bytes, static_cast<double>(memory.total)});
      if (memory.total > 0) {
        out.push_back({gpu.memory_used_pct, static_cast<double>(memory.used) * 100.0 /
                                                static_cast<double>(memory.total)});
      }
    } else if (!OnFailure(gpu, Reading::kMemory, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kPower)) {
    unsigned int power_mw = 0;
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetPowerUsage(device, &power_mw);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.power_w, static_cast<double>(power_mw) / kMilliwattsPerWatt});
    } else if (!OnFailure(gpu, Reading::kPower, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kTemperature)) {
    unsigned int temperature_c = 0;
    nvml::nvmlReturn_t rc =
        nvml.nvmlDeviceGetTemperature(device, nvml::kTemperatureGpu, &temperature_c);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.temperature_c, static_cast<double>(temperature_c)});
    } else if (!OnFailure(gpu, Reading::kTemperature, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kSmClock)) {
    unsigned int clock_mhz = 0;
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetClockInfo(device, nvml::kClockSm, &clock_mhz);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.sm_clock_mhz, static_cast<double>(clock_mhz)});
    } else if (!OnFailure(gpu, Reading::kSmClock, rc, problems)) {
      return false;
    }
  }
  return PollDepth(gpu, out, problems);
}

bool NvmlGpuSource::PollDepth(GpuState& gpu, std::vector<MetricSample>& out, std::vector<std::string>& problems) {
  const nvml::NvmlEntryPoints& nvml = nvml_->entry_points();
  nvml::nvmlDevice_t device = gpu.nvml_gpu->handle;
  auto supported = [&gpu](Reading r) { return !gpu.unsupported[static_cast<size_t>(r)]; };

  if (supported(Reading::kPcie)) {
    unsigned int tx_kb = 0, rx_kb = 0;
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetPcieThroughput(device, nvml::kPcieUtilTxBytes, &tx_kb);
    if (rc == nvml::kSuccess) rc = nvml.nvmlDeviceGetPcieThroughput(device, nvml::kPcieUtilRxBytes, &rx_kb);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.pcie_tx, static_cast<double>(tx_kb) * kBytesPerKb});
      out.push_back({gpu.pcie_rx, static_cast<double>(rx_kb) * kBytesPerKb});
    } else if (!OnFailure(gpu, Reading::kPcie, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kThrottle)) {
    unsigned long long reasons = 0;
    auto* get = nvml.nvmlDeviceGetCurrentClocksEventReasons ? nvml.nvmlDeviceGetCurrentClocksEventReasons
                                                            : nvml.nvmlDeviceGetCurrentClocksThrottleReasons;
    nvml::nvmlReturn_t rc = get(device, &reasons);
    if (rc == nvml::kSuccess) {
      for (size_t r = 0; r < kThrottleReasons.size(); ++r) {
        out.push_back({gpu.throttle[r], (reasons & kThrottleReasons[r].bit) != 0 ? 1.0 : 0.0});
      }
    } else if (!OnFailure(gpu, Reading::kThrottle, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kEcc)) {
    unsigned long long corrected = 0, uncorrected = 0;
    nvml::nvmlReturn_t rc =
        nvml.nvmlDeviceGetTotalEccErrors(device, nvml::kMemoryErrorTypeCorrected, nvml::kVolatileEcc, &corrected);
    if (rc == nvml::kSuccess) {
      rc = nvml.nvmlDeviceGetTotalEccErrors(device, nvml::kMemoryErrorTypeUncorrected, nvml::kVolatileEcc,
                                            &uncorrected);
    }
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.ecc_corrected, static_cast<double>(corrected)});
      out.push_back({gpu.ecc_uncorrected, static_cast<double>(uncorrected)});
    } else if (!OnFailure(gpu, Reading::kEcc, rc, problems)) {
      return false;
    }
  }
  if (job_pid_filter_ && !PollProcesses(gpu, out, problems)) return false;
  if (supported(Reading::kGpm) && !PollGpm(gpu, out, problems)) return false;
  return true;
}

NvmlGpuSource::ProcessNames& NvmlGpuSource::NamesFor(GpuState& gpu, uint32_t pid) {
  if (gpu.process_names.size() >= kMaxCachedPids && !gpu.process_names.count(pid)) gpu.process_names.clear();
  ProcessNames& names = gpu.process_names[pid];
  if (names.sm_util_pct.empty()) {
    const std::string base = gpu.prefix + "pid" + std::to_string(pid) + "/";
    names.memory_used_bytes = base + "memory_used_bytes";
    names.sm_util_pct = base + "sm_util_pct";
  }
  return names;
}

bool NvmlGpuSource::PollProcesses(GpuState& gpu, std::vector<MetricSample>& out,
                                  std::vector<std::string>& problems) {
  const nvml::NvmlEntryPoints& nvml = nvml_->entry_points();
  nvml::nvmlDevice_t device = gpu.nvml_gpu->handle;
  if (!gpu.unsupported[static_cast<size_t>(Reading::kProcessMemory)]) {
    auto* get = nvml.nvmlDeviceGetComputeRunningProcesses_v3 ? nvml.nvmlDeviceGetComputeRunningProcesses_v3
                                                              : nvml.nvmlDeviceGetComputeRunningProcesses_v2;
    if (gpu.processes.empty()) gpu.processes.resize(16);
    unsigned int count = static_cast<unsigned int>(gpu.processes.size());
    nvml::nvmlReturn_t rc = get(device, &count, gpu.processes.data());
    // More processes than room: grow to what NVML asked for (bounded) and ask once more.
    if (rc == nvml::kErrorInsufficientSize && count > gpu.processes.size() && count <= kMaxProcesses) {
      gpu.processes.resize(count);
      count = static_cast<unsigned int>(gpu.processes.size());
      rc = get(device, &count, gpu.processes.data());
    }
    if (rc == nvml::kSuccess) {
      count = std::min<unsigned int>(count, static_cast<unsigned int>(gpu.processes.size()));
      for (unsigned int i = 0; i < count; ++i) {
        const nvml::nvmlProcessInfo_t& process = gpu.processes[i];
        if (process.usedGpuMemory == nvml::kValueNotAvailable || !job_pid_filter_(process.pid)) continue;
        out.push_back({NamesFor(gpu, process.pid).memory_used_bytes, static_cast<double>(process.usedGpuMemory)});
      }
    } else if (rc != nvml::kErrorInsufficientSize && !OnFailure(gpu, Reading::kProcessMemory, rc, problems)) {
      return false;
    }
  }
  if (!gpu.unsupported[static_cast<size_t>(Reading::kProcessUtilization)]) {
    if (gpu.process_samples.empty()) gpu.process_samples.resize(16);
    unsigned int count = static_cast<unsigned int>(gpu.process_samples.size());
    nvml::nvmlReturn_t rc =
        nvml.nvmlDeviceGetProcessUtilization(device, gpu.process_samples.data(), &count, gpu.last_process_sample_us);
    if (rc == nvml::kErrorInsufficientSize && count > gpu.process_samples.size() && count <= kMaxProcesses) {
      gpu.process_samples.resize(count);
      count = static_cast<unsigned int>(gpu.process_samples.size());
      rc = nvml.nvmlDeviceGetProcessUtilization(device, gpu.process_samples.data(), &count,
                                                gpu.last_process_sample_us);
    }
    if (rc == nvml::kSuccess) {
      count = std::min<unsigned int>(count, static_cast<unsigned int>(gpu.process_samples.size()));
      // NVML may return several samples of a process since the last poll: keep its newest.
      std::sort(gpu.process_samples.begin(), gpu.process_samples.begin() + count,
                [](const auto& a, const auto& b) { return a.pid != b.pid ? a.pid < b.pid : a.timeStamp > b.timeStamp; });
      for (unsigned int i = 0; i < count; ++i) {
        const nvml::nvmlProcessUtilizationSample_t& sample = gpu.process_samples[i];
        gpu.last_process_sample_us = std::max(gpu.last_process_sample_us, sample.timeStamp);
        if (i > 0 && gpu.process_samples[i - 1].pid == sample.pid) continue;
        if (!job_pid_filter_(sample.pid)) continue;
        out.push_back({NamesFor(gpu, sample.pid).sm_util_pct, static_cast<double>(sample.smUtil)});
      }
    } else if (rc != nvml::kErrorNotFound && rc != nvml::kErrorInsufficientSize &&
               !OnFailure(gpu, Reading::kProcessUtilization, rc, problems)) {
      // NOT_FOUND: no sample newer than the last one, an idle GPU.
      return false;
    }
  }
  return true;
}

bool NvmlGpuSource::PollGpm(GpuState& gpu, std::vector<MetricSample>& out, std::vector<std::string>& problems) {
  const nvml::NvmlEntryPoints& nvml = nvml_->entry_points();
  nvml::nvmlReturn_t rc = nvml.nvmlGpmSampleGet(gpu.nvml_gpu->handle, gpu.gpm_current);
  if (rc != nvml::kSuccess) {
    gpu.gpm_has_previous = false;
    return OnFailure(gpu, Reading::kGpm, rc, problems);
  }
  if (gpu.gpm_has_previous) {
    nvml::nvmlGpmMetricsGet_t request{};
    request.version = nvml::kGpmMetricsGetVersion;
    request.numMetrics = 2;
    request.sample1 = gpu.gpm_previous;
    request.sample2 = gpu.gpm_current;
    request.metrics[0].metricId = nvml::kGpmMetricSmUtil;
    request.metrics[1].metricId = nvml::kGpmMetricAnyTensorUtil;
    rc = nvml.nvmlGpmMetricsGet(&request);
    if (rc == nvml::kSuccess) {
      if (request.metrics[0].nvmlReturn == nvml::kSuccess) {
        out.push_back({gpu.sm_activity_pct, request.metrics[0].value});
      }
      if (request.metrics[1].nvmlReturn == nvml::kSuccess) {
        out.push_back({gpu.tensor_activity_pct, request.metrics[1].value});
      }
    } else if (!OnFailure(gpu, Reading::kGpm, rc, problems)) {
      return false;
    }
  }
  // This poll's sample is the next poll's first.
  std::swap(gpu.gpm_previous, gpu.gpm_current);
  gpu.gpm_has_previous = true;
  return true;
}

void NvmlGpuSource::PollXidEvents(std::vector<MetricSample>& out, std::vector<std::string>& problems) {
  if (xid_events_ == nullptr) return;
  const nvml::NvmlEntryPoints& nvml = nvml_->entry_points();
  for (int i = 0; i < kMaxXidEventsPerPoll; ++i) {
    nvml::nvmlEventData_t data{};
    // Timeout 0: returns at once; TIMEOUT means nothing is pending.
    nvml::nvmlReturn_t rc = nvml.nvmlEventSetWait_v2(xid_events_, &data, 0);
    if (rc == nvml::kErrorTimeout) return;
    if (rc != nvml::kSuccess) {
      if (!xid_failure_reported_) {
        problems.push_back(FormatNvmlCallError(nvml, "nvmlEventSetWait_v2", rc) + ": " +
                           std::string(NvmlErrorNextStep(rc)) + "; Xid events are missed while this lasts (reported once)");
      }
      xid_failure_reported_ = true;
      return;
    }
    if ((data.eventType & nvml::kEventTypeXidCriticalError) == 0) continue;
    for (const GpuState& gpu : gpus_) {
      if (gpu.nvml_gpu->handle == data.device) {
        out.push_back({gpu.xid, static_cast<double>(data.eventData)});
        break;
      }
    }
  }
}

bool NvmlGpuSource::OnFailure(GpuState& gpu, Reading reading, nvml::nvmlReturn_t rc,
                              std::vector<std::string>& problems) {
  const size_t r = static_cast<size_t>(reading);
  const bool basic = reading <= Reading::kSmClock;
  const std::string call = std::string(kReadings[r].call) + "(" + gpu.label + ")";
  const nvml::NvmlEntryPoints& nvml = nvml_->entry_points();

  if (rc == nvml::kErrorNotSupported || (!basic && rc == nvml::kErrorNoPermission)) {
    // A board that lacks a sensor lacks it for good: stop asking, say so once.
    gpu.unsupported[r] = true;
    absent_.push_back(gpu.label + ": " + kReadings[r].what + " absent: " + FormatNvmlCallError(nvml, call, rc));
    // The basic readings are expected everywhere, so their absence is also a poll problem;
    // a deeper one's is only recorded in the capability.
    if (basic) {
      problems.push_back(FormatNvmlCallError(nvml, call, rc) + ": " + std::string(NvmlErrorNextStep(rc)) + "; " +
                         kReadings[r].metrics + " omitted for gpu" + std::to_string(gpu.nvml_gpu->index));
    }
    return true;
  }
  const bool void_poll = basic || rc == nvml::kErrorGpuIsLost;
  const auto key = std::make_pair(reading, rc);
  if (std::find(gpu.reported_failures.begin(), gpu.reported_failures.end(), key) ==
      gpu.reported_failures.end()) {
    gpu.reported_failures.push_back(key);
    problems.push_back(FormatNvmlCallError(nvml, call, rc) + ": " + std::string(NvmlErrorNextStep(rc)) +
                       (void_poll ? "; gpu" + std::to_string(gpu.nvml_gpu->index) +
                                        " has no metrics while this lasts (reported once)"
                                  : "; " + std::string(kReadings[r].metrics) + " of gpu" +
                                        std::to_string(gpu.nvml_gpu->index) +
                                        " missing while this lasts (reported once)"));
  }
  return !void_poll;
}

}  // namespace stepscope
