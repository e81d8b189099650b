// A fake libnvidia-ml for tests: implements the NVML entry points stepscope uses
// (platform/nvml/nvml_entry_points.h) and serves scripted values, in the spirit of DCGM's
// nvml-injection. Tests load it by path through the real NvmlLoader, so dlopen, dlsym, init,
// enumeration and error handling all run as they would against the driver.
//
// The script is a JSON file named by STEPSCOPE_FAKE_NVML_SCRIPT, read when nvmlInit_v2 takes
// the init count from 0 to 1 (so each load in a test process can use a new script):
//
//   {
//     "driver_version": "550.54.15",
//     "gpus": [
//       { "name": "NVIDIA H100 80GB HBM3",
//         "utilization_gpu_pct": [35, 90], "utilization_memory_pct": 10,
//         "memory_total_bytes": 85899345920, "memory_used_bytes": [1073741824, 2147483648],
//         "power_mw": 71500, "temperature_c": [40, 55], "sm_clock_mhz": 1980 }
//     ],
//     "failures": [
//       { "call": "nvmlDeviceGetPowerUsage", "gpu": 1, "code": 3 },
//       { "call": "nvmlDeviceGetTemperature", "gpu": 0, "code": 15, "from": 2, "times": 1 },
//       { "call": "nvmlInit_v2", "code": 9 }
//     ]
//   }
//
// Deeper readings (issue 15 §3), each absent (NOT_SUPPORTED, or never delivered) unless
// scripted, per GPU:
//
//   "pcie_tx_kb_per_s": [100, 200], "pcie_rx_kb_per_s": 50,      nvmlDeviceGetPcieThroughput
//   "clock_event_reasons": [0, 4, 68],     bitmask per call of nvmlDeviceGetCurrentClocks*Reasons
//   "ecc_corrected": [0, 2], "ecc_uncorrected": 0,               nvmlDeviceGetTotalEccErrors
//   "processes": [{"pid": 4242, "used_memory_bytes": [1024, 2048], "sm_util_pct": 80,
//                  "from": 1, "until": 3}],
//       nvmlDeviceGetComputeRunningProcesses_v3 / nvmlDeviceGetProcessUtilization: the Nth call
//       lists the processes with from <= N < until (default: always); the process's values
//       follow N like any other; a call that answers INSUFFICIENT_SIZE does not count. The
//       Nth utilization call stamps its samples (N + 1) * 1000 us and returns those newer than
//       the caller's lastSeenTimeStamp (NOT_FOUND when none). Without used_memory_bytes a
//       process reports NVML_VALUE_NOT_AVAILABLE; without sm_util_pct it has no utilization.
//   "xid_events": [{"at": 1, "xid": 79}],
//       nvmlDeviceRegisterEvents succeeds only on GPUs that script xid_events (an empty list
//       too). An event is pending once its set has answered `at` non-blocking waits with
//       TIMEOUT (so, for a sampler that drains each poll, at poll number `at`).
//   "gpm_sm_util_pct": [50, 60], "gpm_tensor_util_pct": 30,
//       GPM is supported on GPUs that script either; the Nth nvmlGpmMetricsGet on a GPU
//       returns the Nth value (a metric that is not scripted is NOT_SUPPORTED in its entry).
//
// Values are non-negative integers, one number or a list: the Nth call (0-based) of a getter
// on a GPU returns the Nth value, the last one repeating. Every call counts, failed ones too.
// A getter whose field is absent returns NVML_ERROR_NOT_SUPPORTED. A failure applies to calls
// [from, from + times) of `call` (on `gpu` if given, else on every GPU / the system call);
// `from` defaults to 0 and no `times` means forever. Unknown keys and call names are script
// errors: nvmlInit_v2 then prints the reason to stderr and returns NVML_ERROR_UNKNOWN.
//
// Built a second time with STEPSCOPE_FAKE_NVML_WITHOUT_CLOCK_INFO to lack one symbol, and a
// third time with STEPSCOPE_FAKE_NVML_WITHOUT_DEPTH to lack every optional one (an old driver).
// Threading: every entry point takes one mutex, like a thread-safe NVML.
#include <cstring>
#include <type_traits>

#include "fake_nvml_state.h"

using namespace stepscope::fake_nvml;  // NOLINT: the C entry points below are the fake's body

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2() {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count > 0) {
    ++state.init_count;
    return nvml::kSuccess;
  }
  ResetLocked(state);
  if (auto error = LoadScript(state)) {
    std::fprintf(stderr, "fake NVML: %s\n", error->c_str());
    ResetLocked(state);
    return nvml::kErrorUnknown;
  }
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlInit_v2", nullptr, nullptr);
      rc != nvml::kSuccess) {
    ResetLocked(state);
    return rc;
  }
  state.init_count = 1;
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown() {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  if (--state.init_count == 0) {
    state.leaked_at_last_shutdown = static_cast<int>(state.event_sets.size() + state.gpm_samples.size());
    ResetLocked(state);
  }
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  // The same texts the real library returns, so tests see what users will.
  switch (result) {
    case nvml::kSuccess: return "Success";
    case nvml::kErrorUninitialized: return "Uninitialized";
    case nvml::kErrorInvalidArgument: return "Invalid Argument";
    case nvml::kErrorNotSupported: return "Not Supported";
    case nvml::kErrorNoPermission: return "Insufficient Permissions";
    case nvml::kErrorAlreadyInitialized: return "Already Initialized";
    case nvml::kErrorNotFound: return "Not Found";
    case nvml::kErrorInsufficientSize: return "Insufficient Size";
    case nvml::kErrorInsufficientPower: return "Insufficient External Power";
    case nvml::kErrorDriverNotLoaded: return "Driver Not Loaded";
    case nvml::kErrorTimeout: return "Timeout";
    case nvml::kErrorIrqIssue: return "Interrupt request issue";
    case nvml::kErrorLibraryNotFound: return "NVML Shared Library Not Found";
    case nvml::kErrorFunctionNotFound: return "Function Not Found";
    case nvml::kErrorCorruptedInforom: return "Corrupted infoROM";
    case nvml::kErrorGpuIsLost: return "GPU is lost";
    case nvml::kErrorResetRequired: return "GPU requires restart";
    case nvml::kErrorOperatingSystem: return "The operating system has blocked the request.";
    case nvml::kErrorLibRmVersionMismatch: return "RM has detected an NVML/RM version mismatch.";
    case nvml::kErrorMemory: return "Insufficient Memory";
    default: return "Unknown Error";
  }
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version,
                                                                   unsigned int length) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  if (version == nullptr) return nvml::kErrorInvalidArgument;
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlSystemGetDriverVersion", nullptr, nullptr);
      rc != nvml::kSuccess) {
    return rc;
  }
  if (state.driver_version.size() + 1 > length) return nvml::kErrorInsufficientSize;
  std::memcpy(version, state.driver_version.c_str(), state.driver_version.size() + 1);
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* device_count) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  if (device_count == nullptr) return nvml::kErrorInvalidArgument;
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlDeviceGetCount_v2", nullptr, nullptr);
      rc != nvml::kSuccess) {
    return rc;
  }
  *device_count = static_cast<unsigned int>(state.gpus.size());
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                      nvmlDevice_t* device) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  if (device == nullptr || index >= state.gpus.size()) return nvml::kErrorInvalidArgument;
  FakeGpu* gpu = state.gpus[index].get();
  if (nvmlReturn_t rc = CountCallLocked(state, "nvmlDeviceGetHandleByIndex_v2", gpu, nullptr);
      rc != nvml::kSuccess) {
    return rc;
  }
  *device = reinterpret_cast<nvmlDevice_t>(gpu);
  return nvml::kSuccess;
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                          unsigned int length) {
  return DeviceCall("nvmlDeviceGetName", device, [&](FakeGpu& gpu, uint64_t) {
    if (name == nullptr) return nvml::kErrorInvalidArgument;
    if (gpu.name.size() + 1 > length) return nvml::kErrorInsufficientSize;
    std::memcpy(name, gpu.name.c_str(), gpu.name.size() + 1);
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(
    nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return DeviceCall("nvmlDeviceGetUtilizationRates", device, [&](FakeGpu& gpu, uint64_t n) {
    if (utilization == nullptr) return nvml::kErrorInvalidArgument;
    std::optional<uint64_t> busy = ValueAt(gpu, "utilization_gpu_pct", n);
    if (!busy) return nvml::kErrorNotSupported;
    utilization->gpu = ToUint(*busy);
    utilization->memory = ToUint(ValueAt(gpu, "utilization_memory_pct", n).value_or(0));
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                                nvmlMemory_t* memory) {
  return DeviceCall("nvmlDeviceGetMemoryInfo", device, [&](FakeGpu& gpu, uint64_t n) {
    if (memory == nullptr) return nvml::kErrorInvalidArgument;
    std::optional<uint64_t> total = ValueAt(gpu, "memory_total_bytes", n);
    std::optional<uint64_t> used = ValueAt(gpu, "memory_used_bytes", n);
    if (!total || !used) return nvml::kErrorNotSupported;
    memory->total = *total;
    memory->used = *used;
    memory->free = *total > *used ? *total - *used : 0;
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device,
                                                                unsigned int* power_mw) {
  return DeviceCall("nvmlDeviceGetPowerUsage", device, [&](FakeGpu& gpu, uint64_t n) {
    if (power_mw == nullptr) return nvml::kErrorInvalidArgument;
    std::optional<uint64_t> value = ValueAt(gpu, "power_mw", n);
    if (!value) return nvml::kErrorNotSupported;
    *power_mw = ToUint(*value);
    return nvml::kSuccess;
  });
}

STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                                 nvmlTemperatureSensors_t sensor,
                                                                 unsigned int* temperature_c) {
  return DeviceCall("nvmlDeviceGetTemperature", device, [&](FakeGpu& gpu, uint64_t n) {
    if (temperature_c == nullptr || sensor != nvml::kTemperatureGpu) {
      return nvml::kErrorInvalidArgument;
    }
    std::optional<uint64_t> value = ValueAt(gpu, "temperature_c", n);
    if (!value) return nvml::kErrorNotSupported;
    *temperature_c = ToUint(*value);
    return nvml::kSuccess;
  });
}

#ifndef STEPSCOPE_FAKE_NVML_WITHOUT_CLOCK_INFO
STEPSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device,
                                                               nvmlClockType_t type,
                                                               unsigned int* clock_mhz) {
  return DeviceCall("nvmlDeviceGetClockInfo", device, [&](FakeGpu& gpu, uint64_t n) {
    if (clock_mhz == nullptr) return nvml::kErrorInvalidArgument;
    // Only the SM clock is scripted; asking for another one is what a loader bug looks like.
    if (type != nvml::kClockSm) return nvml::kErrorNotSupported;
    std::optional<uint64_t> value = ValueAt(gpu, "sm_clock_mhz", n);
    if (!value) return nvml::kErrorNotSupported;
    *clock_mhz = ToUint(*value);
    return nvml::kSuccess;
  });
}
static_assert(std::is_same_v<decltype(&nvmlDeviceGetClockInfo),
                             decltype(nvml::NvmlEntryPoints::nvmlDeviceGetClockInfo)>);
#endif

// Test probe, not an NVML symbol: event sets and GPM samples that were still allocated when
// NVML was last shut down (the code under test must free what it allocates).
STEPSCOPE_FAKE_NVML_EXPORT int StepscopeFakeNvmlLeakedAtLastShutdown() {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  return state.leaked_at_last_shutdown;
}

// Test probe, not an NVML symbol: how many nvmlInit_v2 calls are not yet matched by
// nvmlShutdown. Lets tests check that the loader shuts NVML down.
STEPSCOPE_FAKE_NVML_EXPORT int StepscopeFakeNvmlInitCount() {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  return state.init_count;
}

// The fake must be callable through the loader's table: same signatures, checked here.
#define STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(fn) \
  static_assert(std::is_same_v<decltype(&fn), decltype(nvml::NvmlEntryPoints::fn)>, #fn)
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlInit_v2);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlShutdown);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlErrorString);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlSystemGetDriverVersion);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetCount_v2);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetHandleByIndex_v2);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetName);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetUtilizationRates);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetMemoryInfo);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetPowerUsage);
STEPSCOPE_FAKE_NVML_CHECK_SIGNATURE(nvmlDeviceGetTemperature);
