// The fake NVML's deeper readings (issue 15 §3): processes, PCIe, clock reasons, ECC, Xid
// events and GPM, scripted as fake_nvml.cc's header says. Left out of the build of the fake that
// stands for an old driver (STEPSCOPE_FAKE_NVML_WITHOUT_DEPTH).
#include <cstring>
#include <type_traits>

#include "fake_nvml_state.h"

using namespace stepscope::fake_nvml;  // NOLINT: the C entry points below are the fake's body

#ifndef STEPSCOPE_FAKE_NVML_WITHOUT_DEPTH
namespace {

// The values of a process for the Nth call, if it is listed then.
bool Listed(const FakeProcess& process, uint64_t n) {
  return n >= process.from && (!process.until || n < *process.until);
}

uint64_t At(const std::vector<uint64_t>& values, uint64_t n) {
  return values[n < values.size() ? n : values.size() - 1];
}

// A call that answered INSUFFICIENT_SIZE does not count (the caller asks again for the same N).
void UncountLocked(FakeState& state, const char* call, const FakeGpu& gpu) {
  --state.calls[{call, static_cast<long>(gpu.index)}];
}

}  // namespace

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
    nvmlDevice_t device, unsigned int* info_count, nvml::nvmlProcessInfo_t* infos) {
  static constexpr char kCall[] = "nvmlDeviceGetComputeRunningProcesses_v3";
  return DeviceCall(kCall, device, [&](FakeGpu& gpu, uint64_t n) {
    if (info_count == nullptr) return nvml::kErrorInvalidArgument;
    if (!gpu.processes) return nvml::kErrorNotSupported;
    std::vector<const FakeProcess*> listed;
    for (const FakeProcess& process : *gpu.processes) {
      if (Listed(process, n)) listed.push_back(&process);
    }
    if (listed.size() > *info_count || (!listed.empty() && infos == nullptr)) {
      *info_count = static_cast<unsigned int>(listed.size());
      UncountLocked(State(), kCall, gpu);
      return nvml::kErrorInsufficientSize;
    }
    *info_count = static_cast<unsigned int>(listed.size());
    for (size_t i = 0; i < listed.size(); ++i) {
      infos[i] = {};
      infos[i].pid = listed[i]->pid;
      infos[i].usedGpuMemory = listed[i]->used_memory_bytes.empty() ? nvml::kValueNotAvailable
                                                                     : At(listed[i]->used_memory_bytes, n);
      infos[i].gpuInstanceId = infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(
    nvmlDevice_t device, nvml::nvmlProcessUtilizationSample_t* utilization, unsigned int* process_samples_count,
    unsigned long long last_seen_timestamp_us) {
  static constexpr char kCall[] = "nvmlDeviceGetProcessUtilization";
  return DeviceCall(kCall, device, [&](FakeGpu& gpu, uint64_t n) {
    if (process_samples_count == nullptr) return nvml::kErrorInvalidArgument;
    if (!gpu.processes) return nvml::kErrorNotSupported;
    const unsigned long long stamp_us = (n + 1) * 1000;
    std::vector<const FakeProcess*> sampled;
    for (const FakeProcess& process : *gpu.processes) {
      if (Listed(process, n) && !process.sm_util_pct.empty() && stamp_us > last_seen_timestamp_us) {
        sampled.push_back(&process);
      }
    }
    if (sampled.empty()) return nvml::kErrorNotFound;
    if (sampled.size() > *process_samples_count || utilization == nullptr) {
      *process_samples_count = static_cast<unsigned int>(sampled.size());
      UncountLocked(State(), kCall, gpu);
      return nvml::kErrorInsufficientSize;
    }
    *process_samples_count = static_cast<unsigned int>(sampled.size());
    for (size_t i = 0; i < sampled.size(); ++i) {
      utilization[i] = {};
      utilization[i].pid = sampled[i]->pid;
      utilization[i].timeStamp = stamp_us;
      utilization[i].smUtil = ToUint(At(sampled[i]->sm_util_pct, n));
    }
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device,
                                                                    nvml::nvmlPcieUtilCounter_t counter,
                                                                    unsigned int* value_kb_per_s) {
  return DeviceCall("nvmlDeviceGetPcieThroughput", device, [&](FakeGpu& gpu, uint64_t n) {
    if (value_kb_per_s == nullptr) return nvml::kErrorInvalidArgument;
    if (counter != nvml::kPcieUtilTxBytes && counter != nvml::kPcieUtilRxBytes) return nvml::kErrorInvalidArgument;
    // Each poll asks for TX then RX: the Nth poll is call 2N and 2N + 1.
    std::optional<uint64_t> value =
        ValueAt(gpu, counter == nvml::kPcieUtilTxBytes ? "pcie_tx_kb_per_s" : "pcie_rx_kb_per_s", n / 2);
    if (!value) return nvml::kErrorNotSupported;
    *value_kb_per_s = ToUint(*value);
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                               unsigned long long* reasons) {
  return DeviceCall("nvmlDeviceGetCurrentClocksEventReasons", device, [&](FakeGpu& gpu, uint64_t n) {
    if (reasons == nullptr) return nvml::kErrorInvalidArgument;
    std::optional<uint64_t> value = ValueAt(gpu, "clock_event_reasons", n);
    if (!value) return nvml::kErrorNotSupported;
    *reasons = *value;
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
                                                                    nvml::nvmlMemoryErrorType_t error_type,
                                                                    nvml::nvmlEccCounterType_t counter_type,
                                                                    unsigned long long* ecc_counts) {
  return DeviceCall("nvmlDeviceGetTotalEccErrors", device, [&](FakeGpu& gpu, uint64_t n) {
    if (ecc_counts == nullptr || counter_type != nvml::kVolatileEcc) return nvml::kErrorInvalidArgument;
    if (error_type != nvml::kMemoryErrorTypeCorrected && error_type != nvml::kMemoryErrorTypeUncorrected) {
      return nvml::kErrorInvalidArgument;
    }
    // Each poll asks for corrected then uncorrected.
    std::optional<uint64_t> value =
        ValueAt(gpu, error_type == nvml::kMemoryErrorTypeCorrected ? "ecc_corrected" : "ecc_uncorrected", n / 2);
    if (!value) return nvml::kErrorNotSupported;
    *ecc_counts = *value;
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetCreate(nvml::nvmlEventSet_t* set) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  if (set == nullptr) return nvml::kErrorInvalidArgument;
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlEventSetCreate", nullptr, nullptr); rc != nvml::kSuccess) {
    return rc;
  }
  auto event_set = std::make_unique<FakeEventSet>();
  *set = reinterpret_cast<nvml::nvmlEventSet_t>(event_set.get());
  state.event_sets[event_set.get()] = std::move(event_set);
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long event_types,
                                                                 nvml::nvmlEventSet_t set) {
  return DeviceCall("nvmlDeviceRegisterEvents", device, [&](FakeGpu& gpu, uint64_t) {
    auto it = State().event_sets.find(set);
    if (it == State().event_sets.end()) return nvml::kErrorInvalidArgument;
    if (!gpu.xid_events || (event_types & nvml::kEventTypeXidCriticalError) == 0) return nvml::kErrorNotSupported;
    it->second->gpus.push_back(gpu.index);
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvml::nvmlEventSet_t set, nvml::nvmlEventData_t* data,
                                                            unsigned int timeout_ms) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  auto it = state.event_sets.find(set);
  if (it == state.event_sets.end() || data == nullptr) return nvml::kErrorInvalidArgument;
  // The fake never waits: a test that passes a timeout would hang against the real driver.
  if (timeout_ms != 0) return nvml::kErrorInvalidArgument;
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlEventSetWait_v2", nullptr, nullptr); rc != nvml::kSuccess) {
    return rc;
  }
  FakeEventSet& event_set = *it->second;
  // The earliest pending event: by `at`, then GPU, then script order.
  const FakeXid* next = nullptr;
  std::pair<unsigned int, size_t> next_key;
  for (unsigned int index : event_set.gpus) {
    const FakeGpu& gpu = *state.gpus[index];
    for (size_t i = 0; i < gpu.xid_events->size(); ++i) {
      const FakeXid& xid = (*gpu.xid_events)[i];
      if (xid.at > event_set.timeouts || event_set.delivered.count({index, i})) continue;
      if (next == nullptr || xid.at < next->at) {
        next = &xid;
        next_key = {index, i};
      }
    }
  }
  if (next == nullptr) {
    ++event_set.timeouts;
    return nvml::kErrorTimeout;
  }
  event_set.delivered.insert(next_key);
  *data = {};
  data->device = reinterpret_cast<nvmlDevice_t>(state.gpus[next_key.first].get());
  data->eventType = nvml::kEventTypeXidCriticalError;
  data->eventData = next->xid;
  data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetFree(nvml::nvmlEventSet_t set) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  return state.event_sets.erase(set) ? nvml::kSuccess : nvml::kErrorInvalidArgument;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device,
                                                                  nvml::nvmlGpmSupport_t* gpm_support) {
  return DeviceCall("nvmlGpmQueryDeviceSupport", device, [&](FakeGpu& gpu, uint64_t) {
    if (gpm_support == nullptr || gpm_support->version != nvml::kGpmSupportVersion) {
      return nvml::kErrorInvalidArgument;
    }
    gpm_support->isSupportedDevice = gpu.values.count("gpm_sm_util_pct") || gpu.values.count("gpm_tensor_util_pct");
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvml::nvmlGpmSample_t* gpm_sample) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  if (gpm_sample == nullptr) return nvml::kErrorInvalidArgument;
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlGpmSampleAlloc", nullptr, nullptr); rc != nvml::kSuccess) {
    return rc;
  }
  auto sample = std::make_unique<FakeGpmSample>();
  *gpm_sample = reinterpret_cast<nvml::nvmlGpmSample_t>(sample.get());
  state.gpm_samples[sample.get()] = std::move(sample);
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvml::nvmlGpmSample_t gpm_sample) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  return state.gpm_samples.erase(gpm_sample) ? nvml::kSuccess : nvml::kErrorInvalidArgument;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvml::nvmlGpmSample_t gpm_sample) {
  return DeviceCall("nvmlGpmSampleGet", device, [&](FakeGpu& gpu, uint64_t) {
    auto it = State().gpm_samples.find(gpm_sample);
    if (it == State().gpm_samples.end()) return nvml::kErrorInvalidArgument;
    it->second->gpu = &gpu;
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvml::nvmlGpmMetricsGet_t* metrics_get) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  if (metrics_get == nullptr || metrics_get->version != nvml::kGpmMetricsGetVersion ||
      metrics_get->numMetrics > nvml::kGpmMetricMax) {
    return nvml::kErrorInvalidArgument;
  }
  auto first = state.gpm_samples.find(metrics_get->sample1);
  auto second = state.gpm_samples.find(metrics_get->sample2);
  if (first == state.gpm_samples.end() || second == state.gpm_samples.end() || first == second ||
      first->second->gpu == nullptr || first->second->gpu != second->second->gpu) {
    return nvml::kErrorInvalidArgument;
  }
  const FakeGpu& gpu = *static_cast<const FakeGpu*>(second->second->gpu);
  uint64_t n = 0;
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlGpmMetricsGet", &gpu, &n); rc != nvml::kSuccess) return rc;
  for (unsigned int i = 0; i < metrics_get->numMetrics; ++i) {
    nvml::nvmlGpmMetric_t& metric = metrics_get->metrics[i];
    const char* field = metric.metricId == nvml::kGpmMetricSmUtil          ? "gpm_sm_util_pct"
                        : metric.metricId == nvml::kGpmMetricAnyTensorUtil ? "gpm_tensor_util_pct"
                                                                           : "";
    std::optional<uint64_t> value = ValueAt(gpu, field, n);
    metric.nvmlReturn = value ? nvml::kSuccess : nvml::kErrorNotSupported;
    metric.value = value ? static_cast<double>(*value) : 0.0;
  }
  return nvml::kSuccess;
}
#endif  // STEPSCOPE_FAKE_NVML_WITHOUT_DEPTH

#ifndef STEPSCOPE_FAKE_NVML_WITHOUT_DEPTH
// The fake must be callable through the loader's table: same signatures, checked here.
#define STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(fn) \
  static_assert(std::is_same_v<decltype(&fn), decltype(nvml::NvmlEntryPoints::fn)>, #fn)
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetComputeRunningProcesses_v3);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetProcessUtilization);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetPcieThroughput);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetCurrentClocksEventReasons);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetTotalEccErrors);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlEventSetCreate);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceRegisterEvents);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlEventSetWait_v2);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlEventSetFree);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlGpmQueryDeviceSupport);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlGpmSampleAlloc);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlGpmSampleFree);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlGpmSampleGet);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlGpmMetricsGet);
#endif
