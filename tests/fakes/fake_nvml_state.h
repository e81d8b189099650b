// The fake NVML's state and the helpers its entry points share (fake_nvml.cc: the base calls
// and the script format; fake_nvml_depth.cc: the deeper readings; fake_nvml_state.cc: the
// script's parsing). Internal to the fake libraries: nothing here is exported.
#pragma once

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

namespace stepscope::fake_nvml {

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

FakeState& State();
// Reads the script STEPSCOPE_FAKE_NVML_SCRIPT names into `state`; the reason when it cannot.
std::optional<std::string> LoadScript(FakeState& state);
void ResetLocked(FakeState& state);
// Counts a call of `call` (on `gpu`, or system-level when null) and returns the scripted
// failure for it, if any. `call_index` receives the 0-based number of this call.
nvmlReturn_t CountCallLocked(FakeState& state, const char* call, const FakeGpu* gpu, uint64_t* call_index);
FakeGpu* FindGpuLocked(FakeState& state, nvmlDevice_t device);
// The value of `field` for the `n`th call; nullopt when the script gives none.
std::optional<uint64_t> ValueAt(const FakeGpu& gpu, const std::string& field, uint64_t n);

// NVML's getters fill 32-bit fields; larger scripted values saturate.
inline unsigned int ToUint(uint64_t v) {
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

}  // namespace stepscope::fake_nvml
