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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/nvml/nvml_entry_points.h"

#define STEPSCOPE_FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

using stepscope::nvml::nvmlClockType_t;
using stepscope::nvml::nvmlDevice_t;
using stepscope::nvml::nvmlMemory_t;
using stepscope::nvml::nvmlReturn_t;
using stepscope::nvml::nvmlTemperatureSensors_t;
using stepscope::nvml::nvmlUtilization_t;
namespace nvml = stepscope::nvml;

namespace {

constexpr char kScriptEnv[] = "STEPSCOPE_FAKE_NVML_SCRIPT";

const std::set<std::string>& KnownCalls() {
  static const std::set<std::string> calls = {
      "nvmlInit_v2",           "nvmlShutdown",
      "nvmlErrorString",       "nvmlSystemGetDriverVersion",
      "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
      "nvmlDeviceGetName",     "nvmlDeviceGetUtilizationRates",
      "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetPowerUsage",
      "nvmlDeviceGetTemperature", "nvmlDeviceGetClockInfo",
      "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetProcessUtilization",
      "nvmlDeviceGetPcieThroughput", "nvmlDeviceGetCurrentClocksEventReasons",
      "nvmlDeviceGetTotalEccErrors", "nvmlEventSetCreate", "nvmlDeviceRegisterEvents",
      "nvmlEventSetWait_v2", "nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc",
      "nvmlGpmSampleGet", "nvmlGpmMetricsGet"};
  return calls;
}

const std::set<std::string>& KnownGpuFields() {
  static const std::set<std::string> fields = {
      "name",          "utilization_gpu_pct", "utilization_memory_pct", "memory_total_bytes",
      "memory_used_bytes", "power_mw",        "temperature_c",          "sm_clock_mhz",
      "pcie_tx_kb_per_s", "pcie_rx_kb_per_s", "clock_event_reasons", "ecc_corrected",
      "ecc_uncorrected", "processes", "xid_events", "gpm_sm_util_pct", "gpm_tensor_util_pct"};
  return fields;
}

struct Failure {
  std::string call;
  std::optional<unsigned int> gpu;  // absent: every GPU, or a system-level call
  nvmlReturn_t code = nvml::kErrorUnknown;
  uint64_t from = 0;
  std::optional<uint64_t> times;  // absent: forever
};

struct FakeProcess {
  unsigned int pid = 0;
  std::vector<uint64_t> used_memory_bytes;  // empty: NVML_VALUE_NOT_AVAILABLE
  std::vector<uint64_t> sm_util_pct;        // empty: no utilization samples
  uint64_t from = 0;
  std::optional<uint64_t> until;
};

struct FakeXid {
  uint64_t at = 0;
  uint64_t xid = 0;
};

struct FakeGpu {
  unsigned int index = 0;
  std::string name;
  std::map<std::string, std::vector<uint64_t>> values;  // script field -> per-call values
  std::optional<std::vector<FakeProcess>> processes;   // absent: process calls unsupported
  std::optional<std::vector<FakeXid>> xid_events;      // absent: events unsupported
};

struct FakeEventSet {
  std::vector<unsigned int> gpus;  // registered for Xid events
  uint64_t timeouts = 0;           // waits answered with TIMEOUT so far
  std::set<std::pair<unsigned int, size_t>> delivered;  // (gpu, index into its xid_events)
};

struct FakeGpmSample {
  const void* gpu = nullptr;  // the FakeGpu it was last taken on; null before
};

struct FakeState {
  std::mutex mu;
  int init_count = 0;
  std::string driver_version;
  // unique_ptr so each FakeGpu's address, which is its nvmlDevice_t, never moves.
  std::vector<std::unique_ptr<FakeGpu>> gpus;
  std::vector<Failure> failures;
  // (call, gpu index or -1) -> number of calls so far.
  std::map<std::pair<std::string, long>, uint64_t> calls;
  // Objects handed out and not yet freed, by the handle the caller holds.
  std::map<const void*, std::unique_ptr<FakeEventSet>> event_sets;
  std::map<const void*, std::unique_ptr<FakeGpmSample>> gpm_samples;
  // Event sets and GPM samples still live when the last nvmlShutdown came (the probe's leak
  // check); kept across resets.
  int leaked_at_last_shutdown = 0;
};

FakeState& State() {
  static FakeState state;
  return state;
}

// Parses a value that is one non-negative integer or a non-empty list of them.
std::optional<std::string> ParseValues(const nlohmann::json& j, std::vector<uint64_t>& out) {
  if (j.is_number_unsigned()) {
    out.push_back(j.get<uint64_t>());
    return std::nullopt;
  }
  if (!j.is_array() || j.empty()) return "expected a non-negative integer or a non-empty list";
  for (const nlohmann::json& v : j) {
    if (!v.is_number_unsigned()) return "list holds something other than a non-negative integer";
    out.push_back(v.get<uint64_t>());
  }
  return std::nullopt;
}

std::optional<std::string> ParseProcesses(const nlohmann::json& j, std::vector<FakeProcess>& out) {
  if (!j.is_array()) return "expected a list of processes";
  for (const nlohmann::json& p : j) {
    if (!p.is_object() || !p.contains("pid") || !p["pid"].is_number_unsigned()) return "each process needs a pid";
    FakeProcess process;
    for (const auto& [key, value] : p.items()) {
      if (key == "pid") {
        process.pid = value.get<unsigned int>();
      } else if (key == "used_memory_bytes") {
        if (auto error = ParseValues(value, process.used_memory_bytes)) return key + ": " + *error;
      } else if (key == "sm_util_pct") {
        if (auto error = ParseValues(value, process.sm_util_pct)) return key + ": " + *error;
      } else if (key == "from" && value.is_number_unsigned()) {
        process.from = value.get<uint64_t>();
      } else if (key == "until" && value.is_number_unsigned()) {
        process.until = value.get<uint64_t>();
      } else {
        return "bad process field " + key;
      }
    }
    out.push_back(std::move(process));
  }
  return std::nullopt;
}

std::optional<std::string> ParseXidEvents(const nlohmann::json& j, std::vector<FakeXid>& out) {
  if (!j.is_array()) return "expected a list of events";
  for (const nlohmann::json& e : j) {
    if (!e.is_object() || !e.contains("xid") || !e["xid"].is_number_unsigned()) return "each event needs an xid";
    FakeXid xid;
    for (const auto& [key, value] : e.items()) {
      if (key == "xid") {
        xid.xid = value.get<uint64_t>();
      } else if (key == "at" && value.is_number_unsigned()) {
        xid.at = value.get<uint64_t>();
      } else {
        return "bad event field " + key;
      }
    }
    out.push_back(xid);
  }
  return std::nullopt;
}

std::optional<std::string> ParseScript(const nlohmann::json& script, FakeState& state) {
  if (!script.is_object()) return "the script must be a JSON object";
  for (const auto& [key, value] : script.items()) {
    if (key != "driver_version" && key != "gpus" && key != "failures") return "unknown key " + key;
  }
  state.driver_version = "0.0.0";
  if (script.contains("driver_version")) {
    if (!script["driver_version"].is_string()) return "driver_version must be a string";
    state.driver_version = script["driver_version"].get<std::string>();
  }
  if (script.contains("gpus")) {
    if (!script["gpus"].is_array()) return "gpus must be a list";
    for (const nlohmann::json& g : script["gpus"]) {
      if (!g.is_object()) return "each gpu must be an object";
      auto gpu = std::make_unique<FakeGpu>();
      gpu->index = static_cast<unsigned int>(state.gpus.size());
      gpu->name = "Fake GPU " + std::to_string(gpu->index);
      for (const auto& [key, value] : g.items()) {
        if (!KnownGpuFields().count(key)) return "unknown gpu field " + key;
        if (key == "processes") {
          if (auto error = ParseProcesses(value, gpu->processes.emplace())) return "processes: " + *error;
          continue;
        }
        if (key == "xid_events") {
          if (auto error = ParseXidEvents(value, gpu->xid_events.emplace())) return "xid_events: " + *error;
          continue;
        }
        if (key == "name") {
          if (!value.is_string()) return "gpu name must be a string";
          gpu->name = value.get<std::string>();
          continue;
        }
        if (auto error = ParseValues(value, gpu->values[key])) return key + ": " + *error;
      }
      state.gpus.push_back(std::move(gpu));
    }
  }
  if (script.contains("failures")) {
    if (!script["failures"].is_array()) return "failures must be a list";
    for (const nlohmann::json& f : script["failures"]) {
      if (!f.is_object()) return "each failure must be an object";
      Failure failure;
      for (const auto& [key, value] : f.items()) {
        if (key == "call" && value.is_string()) {
          failure.call = value.get<std::string>();
        } else if (key == "gpu" && value.is_number_unsigned()) {
          failure.gpu = value.get<unsigned int>();
        } else if (key == "code" && value.is_number_integer()) {
          failure.code = value.get<int>();
        } else if (key == "from" && value.is_number_unsigned()) {
          failure.from = value.get<uint64_t>();
        } else if (key == "times" && value.is_number_unsigned()) {
          failure.times = value.get<uint64_t>();
        } else {
          return "bad failure field " + key;
        }
      }
      if (!KnownCalls().count(failure.call)) {
        return "failure names unknown call '" + failure.call + "'";
      }
      if (!f.contains("code")) return "failure of " + failure.call + " has no code";
      state.failures.push_back(failure);
    }
  }
  return std::nullopt;
}

std::optional<std::string> LoadScript(FakeState& state) {
  const char* path = std::getenv(kScriptEnv);
  if (path == nullptr) return std::string(kScriptEnv) + " is not set";
  std::ifstream file(path);
  if (!file) return std::string("cannot open ") + path;
  std::stringstream text;
  text << file.rdbuf();
  nlohmann::json script = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (script.is_discarded()) return std::string(path) + " is not valid JSON";
  if (auto error = ParseScript(script, state)) return std::string(path) + ": " + *error;
  return std::nullopt;
}

void ResetLocked(FakeState& state) {
  state.event_sets.clear();
  state.gpm_samples.clear();
  state.driver_version.clear();
  state.gpus.clear();
  state.failures.clear();
  state.calls.clear();
}

// Counts a call of `call` (on `gpu`, or system-level when null) and returns the scripted
// failure for it, if any. `call_index` receives the 0-based number of this call.
nvmlReturn_t CountCallLocked(FakeState& state, const char* call, const FakeGpu* gpu,
                             uint64_t* call_index) {
  uint64_t& count = state.calls[{call, gpu ? static_cast<long>(gpu->index) : -1L}];
  const uint64_t n = count++;
  if (call_index) *call_index = n;
  for (const Failure& f : state.failures) {
    if (f.call != call) continue;
    if (f.gpu && (gpu == nullptr || *f.gpu != gpu->index)) continue;
    if (n < f.from || (f.times && n >= f.from + *f.times)) continue;
    return f.code;
  }
  return nvml::kSuccess;
}

FakeGpu* FindGpuLocked(FakeState& state, nvmlDevice_t device) {
  for (auto& gpu : state.gpus) {
    if (reinterpret_cast<nvmlDevice_t>(gpu.get()) == device) return gpu.get();
  }
  return nullptr;
}

// The value of `field` for the `n`th call; nullopt when the script gives none.
std::optional<uint64_t> ValueAt(const FakeGpu& gpu, const std::string& field, uint64_t n) {
  auto it = gpu.values.find(field);
  if (it == gpu.values.end() || it->second.empty()) return std::nullopt;
  const std::vector<uint64_t>& v = it->second;
  return v[n < v.size() ? n : v.size() - 1];
}

// NVML's getters fill 32-bit fields; larger scripted values saturate.
unsigned int ToUint(uint64_t v) {
  return v > 0xffffffffu ? 0xffffffffu : static_cast<unsigned int>(v);
}

// Common prologue of the per-device getters: lock, check init and handle, count, fail.
template <typename Body>
nvmlReturn_t DeviceCall(const char* call, nvmlDevice_t device, Body body) {
  FakeState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.init_count == 0) return nvml::kErrorUninitialized;
  FakeGpu* gpu = FindGpuLocked(state, device);
  if (gpu == nullptr) return nvml::kErrorInvalidArgument;
  uint64_t n = 0;
  if (nvmlReturn_t rc = CountCallLocked(state, call, gpu, &n); rc != nvml::kSuccess) return rc;
  return body(*gpu, n);
}

}  // namespace

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
#ifndef STEPSCOPE_FAKE_NVML_WITHOUT_DEPTH
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
