#include "store/run_manifest.h"

#include <algorithm>

#include "base/file_system.h"
#include "base/json_fields.h"
#include "store/run_directory.h"

namespace stepscope::store {
namespace {

struct StatusName {
  ManifestStatus status;
  const char* name;
};
constexpr StatusName kStatusNames[] = {
    {ManifestStatus::kStarting, "starting"}, {ManifestStatus::kRunning, "running"},
    {ManifestStatus::kExited, "exited"},     {ManifestStatus::kKilled, "killed"},
    {ManifestStatus::kFailedToStart, "failed-to-start"},
};

ManifestStatus StatusFromName(std::string_view name) {
  for (const StatusName& entry : kStatusNames) {
    if (name == entry.name) return entry.status;
  }
  return ManifestStatus::kUnknown;
}

std::vector<std::string> StringList(const nlohmann::json& object, const char* key) {
  std::vector<std::string> out;
  for (const nlohmann::json& entry : JsonArray(object, key)) {
    if (entry.is_string()) out.push_back(entry.get<std::string>());
  }
  return out;
}

int32_t ClampedInt32(const nlohmann::json& object, const char* key) {
  return static_cast<int32_t>(std::clamp<int64_t>(JsonInt(object, key, 0), 0, INT32_MAX));
}

ManifestCapabilities CapabilitiesFromJson(const nlohmann::json& json) {
  ManifestCapabilities c;
  const nlohmann::json gpu = JsonObject(json, "gpu");
  c.gpu_available = JsonBool(gpu, "available", false);
  c.gpu_reason = JsonString(gpu, "reason");
  c.gpu_driver_version = JsonString(gpu, "driver_version");
  for (const nlohmann::json& entry : JsonArray(gpu, "metrics_absent")) {
    if (entry.is_string()) c.gpu_metrics_absent.push_back(entry.get<std::string>());
  }
  // Entries are GPU names; objects {name, memory_total_bytes} are read too.
  for (const nlohmann::json& entry : JsonArray(gpu, "gpus")) {
    if (entry.is_string()) {
      c.gpus.push_back(entry.get<std::string>());
    } else if (entry.is_object()) {
      c.gpus.push_back(JsonString(entry, "name"));
      const int64_t bytes = JsonInt(entry, "memory_total_bytes", 0);
      if (bytes > 0) c.gpu_memory_bytes.push_back(bytes);
    }
  }
  if (c.gpu_memory_bytes.size() != c.gpus.size()) c.gpu_memory_bytes.clear();
  const nlohmann::json nvml = JsonObject(json, "nvml");
  c.nvml_available = JsonBool(nvml, "available", false);
  c.nvml_reason = JsonString(nvml, "reason");
  const nlohmann::json cupti = JsonObject(json, "cupti");
  c.cupti_library_found = JsonBool(cupti, "library_found", false);
  c.cupti_library = JsonString(cupti, "library");
  c.cupti_version = JsonString(cupti, "version");
  c.cupti_usable = JsonBool(cupti, "usable", false);
  c.cupti_reason = JsonString(cupti, "reason");
  c.gpu_tracing = JsonString(cupti, "tracing");
  c.gpu_tracing_reason = JsonString(cupti, "tracing_reason");
  const nlohmann::json perf = JsonObject(json, "perf_counters");
  c.perf_counters_available = JsonBool(perf, "available", false);
  c.perf_paranoid = JsonInt(perf, "paranoid", 0);
  c.perf_reason = JsonString(perf, "reason");
  c.perf_scope = JsonString(perf, "scope");
  for (const nlohmann::json& event : JsonArray(perf, "events")) {
    if (!event.is_object()) continue;
    c.perf_events.push_back({JsonString(event, "name"), JsonBool(event, "counted", false),
                             JsonBool(event, "user_only", false), JsonString(event, "reason")});
  }
  c.tick_clock = JsonString(json, "tick_clock");
  return c;
}

nlohmann::json CapabilitiesToJson(const ManifestCapabilities& c) {
  nlohmann::json gpus = nlohmann::json::array();
  for (size_t i = 0; i < c.gpus.size(); ++i) {
    if (c.gpu_memory_bytes.size() == c.gpus.size()) {
      gpus.push_back({{"name", c.gpus[i]}, {"memory_total_bytes", c.gpu_memory_bytes[i]}});
    } else {
      gpus.push_back(c.gpus[i]);
    }
  }
  nlohmann::json gpu = {{"available", c.gpu_available}, {"reason", c.gpu_reason},
                        {"driver_version", c.gpu_driver_version}, {"gpus", gpus}};
  // Only where NVML left some metric out, so runs without the deeper readings read as before.
  if (!c.gpu_metrics_absent.empty()) gpu["metrics_absent"] = c.gpu_metrics_absent;
  nlohmann::json perf = {{"available", c.perf_counters_available}, {"paranoid", c.perf_paranoid},
                         {"reason", c.perf_reason}};
  if (!c.perf_scope.empty()) {
    nlohmann::json events = nlohmann::json::array();
    for (const ManifestCapabilities::PerfEvent& event : c.perf_events) {
      events.push_back(
          {{"name", event.name}, {"counted", event.counted}, {"user_only", event.user_only}, {"reason", event.reason}});
    }
    perf["scope"] = c.perf_scope;
    perf["events"] = std::move(events);
  }
  return {
      {"gpu", std::move(gpu)},
      {"nvml", {{"available", c.nvml_available}, {"reason", c.nvml_reason}}},
      {"cupti", {{"library_found", c.cupti_library_found}, {"library", c.cupti_library}, {"version", c.cupti_version},
                 {"usable", c.cupti_usable}, {"reason", c.cupti_reason}, {"tracing", c.gpu_tracing},
                 {"tracing_reason", c.gpu_tracing_reason}}},
      {"perf_counters", std::move(perf)},
      {"tick_clock", c.tick_clock},
  };
}

ManifestControl ControlFromJsonImpl(const nlohmann::json& json) {
  ManifestControl control;
  control.sequence = JsonInt(json, "sequence", -1);
  control.time_ns = JsonInt(json, "time_ns", 0);
  control.applied_at_ns = JsonInt(json, "applied_at_ns", 0);
  control.changes = JsonObject(json, "changes");
  control.interval_ns = JsonInt(control.changes, "interval_ns", 0);
  control.previous_interval_ns = JsonInt(control.changes, "previous_interval_ns", 0);
  control.error = JsonString(json, "error");
  return control;
}

nlohmann::json ControlToJson(const ManifestControl& control) {
  nlohmann::json json = nlohmann::json::object();
  if (control.sequence >= 0) json["sequence"] = control.sequence;
  if (control.time_ns != 0) json["time_ns"] = control.time_ns;
  json["applied_at_ns"] = control.applied_at_ns;
  nlohmann::json changes = control.changes.is_object() ? control.changes : nlohmann::json::object();
  if (control.interval_ns > 0) {
    changes["interval_ns"] = control.interval_ns;
    changes["previous_interval_ns"] = control.previous_interval_ns;
  }
  if (!changes.empty()) json["changes"] = changes;
  if (!control.error.empty()) json["error"] = control.error;
  return json;
}

}  // namespace

ManifestControl ManifestControlFromJson(const nlohmann::json& entry) { return ControlFromJsonImpl(entry); }

const char* ManifestStatusName(ManifestStatus status) {
  for (const StatusName& entry : kStatusNames) {
    if (entry.status == status) return entry.name;
  }
  return "unknown";
}

bool IsFinal(ManifestStatus status) {
  return status == ManifestStatus::kExited || status == ManifestStatus::kKilled ||
         status == ManifestStatus::kFailedToStart;
}

bool SamplerStarted(ManifestStatus status) {
  return status == ManifestStatus::kRunning || IsFinal(status);
}

std::optional<int64_t> RunManifest::ClockOffsetNs() const {
  if (!has_clock || clock_monotonic_ns < 0 || clock_realtime_ns < 0) return std::nullopt;
  return clock_realtime_ns - clock_monotonic_ns;
}

int64_t RunManifest::IntervalAt(int64_t time_ns) const {
  int64_t interval = interval_ns;
  for (const ManifestControl& entry : control) {
    if (entry.error.empty() && entry.interval_ns > 0 && entry.applied_at_ns <= time_ns) interval = entry.interval_ns;
  }
  return interval;
}

nlohmann::json ManifestToJson(const RunManifest& m) {
  nlohmann::json json = {
      {"schema_version", m.schema_version},
      {"format_version", m.format_version},
      {"job", m.job},
      {"node", m.node},
      {"hosts", m.hosts},
      {"command", m.command},
      {"config", m.config},
      {"versions", m.versions},
      {"capabilities", CapabilitiesToJson(m.capabilities)},
      {"start_time_ns", m.start_time_ns},
      {"status", ManifestStatusName(m.status)},
  };
  if (m.has_clock) {
    json["clock"] = {{"monotonic_ns", m.clock_monotonic_ns},
                     {"realtime_ns", m.clock_realtime_ns},
                     {"description", "timestamps are CLOCK_MONOTONIC ns + (realtime_ns - monotonic_ns), i.e. Unix-epoch ns"}};
  }
  // Top-level keys compare and RightSizing read; only when given.
  if (!m.instance_type.empty()) json["instance_type"] = m.instance_type;
  if (m.instance_count > 0) json["instance_count"] = m.instance_count;
  if (m.cpu_cores > 0) json["cpu_cores"] = m.cpu_cores;
  if (m.nodes_expected > 0) json["nodes_expected"] = m.nodes_expected;
  if (m.node_rank >= 0) json["node_rank"] = m.node_rank;
  if (!m.metrics_url.empty()) json["metrics_url"] = m.metrics_url;
  if (m.launcher_pid > 0 || m.job_pid > 0) json["pids"] = {{"launcher", m.launcher_pid}, {"job", m.job_pid}};
  nlohmann::json control = nlohmann::json::array();
  for (const ManifestControl& entry : m.control) control.push_back(ControlToJson(entry));
  json["control"] = control;
  if (m.end_time_ns > 0) {
    json["end_time_ns"] = m.end_time_ns;
    json["duration_s"] = static_cast<double>(m.end_time_ns - m.start_time_ns) / 1e9;
  }
  if (m.exit.known) {
    if (m.exit.signaled) {
      json["exit"] = {{"signal", m.exit.signal}, {"signal_name", m.exit.signal_name},
                      {"core_dumped", m.exit.core_dumped}, {"launcher_exit_code", m.exit.launcher_exit_code}};
    } else {
      json["exit"] = {{"code", m.exit.exit_code}, {"launcher_exit_code", m.exit.launcher_exit_code}};
    }
  }
  if (!m.ended.empty()) json["ended"] = m.ended;
  if (m.streams_listed) json["streams"] = m.streams;
  if (!m.streams_still_written.empty()) json["streams_still_written"] = m.streams_still_written;
  if (m.sampler.known) {
    json["sampler"] = {{"polls", m.sampler.polls},
                       {"missed_polls", m.sampler.missed_polls},
                       {"final_interval_ns", m.sampler.final_interval_ns},
                       {"samples_written", m.sampler.samples_written},
                       {"samples_dropped", m.sampler.samples_dropped},
                       {"cpu_ns", m.sampler.cpu_ns}};
  }
  return json;
}

std::string ManifestText(const RunManifest& manifest) {
  // The command line is the user's bytes: invalid UTF-8 in it is replaced, never a throw.
  return ManifestToJson(manifest).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

StatusOr<RunManifest> ParseRunManifest(std::string_view text, const std::string& path) {
  const nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return DataLossError("'" + path + "' is not a JSON object; the node's manifest is lost");
  }
  RunManifest m;
  m.schema_version = static_cast<int>(JsonInt(json, "schema_version", 0));
  m.format_version = static_cast<int>(JsonInt(json, "format_version", 0));
  m.job = JsonString(json, "job");
  m.node = JsonString(json, "node");
  m.hosts = StringList(json, "hosts");
  m.command = StringList(json, "command");
  m.config = JsonObject(json, "config");
  m.versions = JsonObject(json, "versions");
  m.capabilities = CapabilitiesFromJson(JsonObject(json, "capabilities"));
  const nlohmann::json clock = JsonObject(json, "clock");
  m.clock_monotonic_ns = JsonInt(clock, "monotonic_ns", -1);
  m.clock_realtime_ns = JsonInt(clock, "realtime_ns", -1);
  m.has_clock = m.clock_monotonic_ns >= 0 && m.clock_realtime_ns >= 0;
  m.start_time_ns = JsonInt(json, "start_time_ns", 0);
  m.end_time_ns = JsonInt(json, "end_time_ns", 0);
  const nlohmann::json pids = JsonObject(json, "pids");
  m.launcher_pid = static_cast<int>(std::clamp<int64_t>(JsonInt(pids, "launcher", 0), 0, INT32_MAX));
  m.job_pid = static_cast<int>(std::clamp<int64_t>(JsonInt(pids, "job", 0), 0, INT32_MAX));
  m.status = StatusFromName(JsonString(json, "status"));
  if (const nlohmann::json* exit = JsonField(json, "exit"); exit != nullptr && exit->is_object()) {
    m.exit.known = true;
    m.exit.signaled = JsonField(*exit, "signal") != nullptr;
    m.exit.exit_code = static_cast<int>(JsonInt(*exit, "code", 0));
    m.exit.signal = static_cast<int>(JsonInt(*exit, "signal", 0));
    m.exit.signal_name = JsonString(*exit, "signal_name");
    m.exit.core_dumped = JsonBool(*exit, "core_dumped", false);
    m.exit.launcher_exit_code = static_cast<int>(JsonInt(*exit, "launcher_exit_code", 0));
  }
  m.ended = JsonString(json, "ended");
  if (const nlohmann::json* sampler = JsonField(json, "sampler"); sampler != nullptr && sampler->is_object()) {
    m.sampler.known = true;
    m.sampler.polls = JsonUint(*sampler, "polls", 0);
    m.sampler.missed_polls = JsonUint(*sampler, "missed_polls", 0);
    m.sampler.samples_written = JsonUint(*sampler, "samples_written", 0);
    m.sampler.samples_dropped = JsonUint(*sampler, "samples_dropped", 0);
    m.sampler.cpu_ns = JsonUint(*sampler, "cpu_ns", 0);
    m.sampler.final_interval_ns = JsonInt(*sampler, "final_interval_ns", 0);
  }
  for (const nlohmann::json& entry : JsonArray(json, "control")) {
    if (entry.is_object()) m.control.push_back(ControlFromJsonImpl(entry));
  }
  m.instance_type = JsonString(json, "instance_type");
  m.instance_count = ClampedInt32(json, "instance_count");
  m.cpu_cores = ClampedInt32(json, "cpu_cores");
  m.nodes_expected = ClampedInt32(json, "nodes_expected");
  m.metrics_url = JsonString(json, "metrics_url");
  m.node_rank = JsonField(json, "node_rank") != nullptr ? ClampedInt32(json, "node_rank") : -1;
  m.interval_ns = std::max<int64_t>(0, JsonInt(JsonObject(m.config, "interval"), "ns", 0));
  m.streams_listed = JsonField(json, "streams") != nullptr && JsonField(json, "streams")->is_array();
  m.streams = StringList(json, "streams");
  m.streams_still_written = StringList(json, "streams_still_written");
  return m;
}

StatusOr<RunManifest> ReadRunManifest(const std::string& node_dir) {
  const std::string path = node_dir + "/" + kManifestFileName;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, Symlinks::kRefuse, kMaxManifestBytes));
  return ParseRunManifest(text, path);
}

}  // namespace stepscope::store
