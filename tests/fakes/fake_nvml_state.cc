#include "fake_nvml_state.h"

namespace stepscope::fake_nvml {
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

}  // namespace

FakeState& State() {
  static FakeState state;
  return state;
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

std::optional<uint64_t> ValueAt(const FakeGpu& gpu, const std::string& field, uint64_t n) {
  auto it = gpu.values.find(field);
  if (it == gpu.values.end() || it->second.empty()) return std::nullopt;
  const std::vector<uint64_t>& v = it->second;
  return v[n < v.size() ? n : v.size() - 1];
}

}  // namespace stepscope::fake_nvml
