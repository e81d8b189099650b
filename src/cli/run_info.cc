#include "cli/run_info.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "cli/detail_summary.h"
#include "base/json_fields.h"

namespace stepscope::cli {
namespace {

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

std::string HumanBytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (1ull << 20)) std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024) std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  else std::snprintf(text, sizeof text, "%" PRIu64 " B", bytes);
  return text;
}

}  // namespace

nlohmann::json BuildRunInfo(const std::string& run_path, const store::RunReader& run) {
  nlohmann::json info;
  info["schema_version"] = kRunInfoSchemaVersion;
  info["run"] = run_path;

  // Job-level facts come from the node manifests; a job's manifest is the union of its nodes'.
  nlohmann::json nodes = nlohmann::json::array();
  int64_t start_ns = INT64_MAX, end_ns = INT64_MIN;
  std::string job, status = "unknown";
  nlohmann::json command, ended;
  uint64_t manifest_bytes = 0;
  for (const store::NodeInfo& node : run.nodes()) {
    nlohmann::json entry = {{"name", node.name}};
    manifest_bytes += FileSize(node.directory + "/manifest.json");
    auto manifest = nlohmann::json::parse(node.manifest_json, nullptr, false);
    if (manifest.is_object()) {
      // Manifests come from disk: every field is read without trusting its type.
      job = JsonString(manifest, "job", job);
      if (const auto* c = JsonField(manifest, "command"); c != nullptr && c->is_array()) {
        command = nlohmann::json::array();
        for (const auto& arg : *c) command.push_back(arg.is_string() ? arg.get<std::string>() : arg.dump());
      }
      status = JsonString(manifest, "status", status);
      ended = JsonObject(manifest, "exit");
      ended["description"] = JsonString(manifest, "ended", status == "running" ? "still running, or the launcher died" : "");
      if (int64_t t = JsonInt(manifest, "start_time_ns", -1); t >= 0) start_ns = std::min(start_ns, t);
      if (int64_t t = JsonInt(manifest, "end_time_ns", -1); t >= 0) end_ns = std::max(end_ns, t);
      entry["hosts"] = JsonArray(manifest, "hosts");
      entry["pids"] = JsonObject(manifest, "pids");
      entry["capabilities"] = JsonObject(manifest, "capabilities");
      entry["status"] = JsonString(manifest, "status", "unknown");
      entry["config"] = JsonObject(manifest, "config");
    } else {
      entry["status"] = "no manifest";
    }
    nodes.push_back(entry);
  }
  // Without an end time (still running, or the launcher was killed) the last event ends it.
  int64_t last_event_ns = INT64_MIN, first_event_ns = INT64_MAX;
  for (const store::Event& event : run.events()) {
    first_event_ns = std::min(first_event_ns, event.start_ns);
    last_event_ns = std::max(last_event_ns, event.end_ns);
  }
  if (start_ns == INT64_MAX) start_ns = first_event_ns;
  if (end_ns == INT64_MIN) end_ns = last_event_ns;
  info["job"] = job;
  info["command"] = command.is_null() ? nlohmann::json::array() : command;
  info["status"] = status;
  info["ended"] = ended;
  info["start_time_ns"] = start_ns == INT64_MAX ? nlohmann::json() : nlohmann::json(start_ns);
  info["end_time_ns"] = end_ns == INT64_MIN ? nlohmann::json() : nlohmann::json(end_ns);
  info["duration_s"] = (start_ns != INT64_MAX && end_ns != INT64_MIN) ? (end_ns - start_ns) / 1e9 : 0.0;
  info["nodes"] = nodes;

  // Counts by kind.
  uint64_t spans = 0, instants = 0, counters = 0, unfinished = 0;
  std::map<std::string, uint64_t> steps = {{"TRAIN", 0}, {"EVAL", 0}, {"PREDICT", 0}, {"GLOBAL", 0}};
  std::map<std::string, uint64_t> samples;
  std::vector<uint64_t> events_per_stream(run.streams().size(), 0);
  for (const store::Event& event : run.events()) {
    events_per_stream[event.stream]++;
    unfinished += event.unfinished;
    switch (event.kind) {
      case store::EventKind::kSpan: ++spans; break;
      case store::EventKind::kInstant: ++instants; break;
      case store::EventKind::kCounter: ++counters; break;
      case store::EventKind::kStep: ++steps[store::PhaseName(event.phase)]; break;
      case store::EventKind::kSample: ++samples[std::string(run.Name(event.name))]; break;
    }
  }
  uint64_t sample_total = 0;
  for (const auto& [name, count] : samples) sample_total += count;
  info["counts"] = {{"spans", spans}, {"instants", instants}, {"counters", counters}, {"steps", steps},
                    {"unfinished", unfinished}, {"system_samples", sample_total}, {"system_samples_by_metric", samples}};

  nlohmann::json processes = nlohmann::json::array();
  uint64_t dropped = 0;
  uint64_t framework_bytes = 0, system_bytes = 0, string_bytes = 0, other_bytes = manifest_bytes, ring_bytes = 0;
  for (size_t i = 0; i < run.streams().size(); ++i) {
    const store::StreamInfo& stream = run.streams()[i];
    dropped += stream.dropped_events;
    (stream.is_system ? system_bytes : framework_bytes) += stream.block_bytes;
    string_bytes += stream.string_bytes;
    other_bytes += stream.other_bytes;
    ring_bytes += stream.ring_bytes;
    auto meta = nlohmann::json::parse(stream.meta_json, nullptr, false);
    processes.push_back({{"node", stream.node}, {"stream", stream.name}, {"kind", stream.is_system ? "system" : "process"},
                         {"pid", stream.pid}, {"ppid", stream.ppid},
                         {"command", JsonString(meta, "command")},
                         {"events", events_per_stream[i]}, {"records", stream.records},
                         {"dropped_events", stream.dropped_events},
                         {"bytes", stream.log_bytes + stream.ring_bytes}, {"compacted", stream.ring_bytes == 0}});
  }
  info["processes"] = processes;
  info["dropped_events"] = dropped;
  info["bytes_on_disk"] = {{"framework_events", framework_bytes}, {"system_samples", system_bytes},
                           {"string_tables", string_bytes}, {"metadata", other_bytes},
                           {"uncompacted_rings", ring_bytes},
                           {"total", framework_bytes + system_bytes + string_bytes + other_bytes + ring_bytes}};
  info["problems"] = run.problems();
  info["detail_windows"] = DetailWindowsToJson(ListDetailWindows(run.nodes()));
  return info;
}

std::string FormatRunInfo(const nlohmann::json& info) {
  std::ostringstream out;
  out << "job        " << info["job"].get<std::string>() << "\n";
  std::string command;
  for (const auto& arg : info["command"]) command += (command.empty() ? "" : " ") + arg.get<std::string>();
  out << "command    " << command << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "duration   %.1f s\n", info["duration_s"].get<double>());
  out << line;
  std::string ended = info["ended"].is_object() ? info["ended"].value("description", "") : "";
  out << "ended      " << (ended.empty() ? info["status"].get<std::string>() : ended) << "\n";
  for (const auto& node : info["nodes"]) {
    out << "node       " << node["name"].get<std::string>();
    const nlohmann::json capabilities = JsonObject(node, "capabilities");
    if (!capabilities.empty()) {
      const nlohmann::json gpu = JsonObject(capabilities, "gpu");
      out << "  gpu: " << (JsonBool(gpu, "available", false) ? std::to_string(JsonArray(gpu, "gpus").size()) + " GPU(s)" : "none");
      out << "  cupti: " << (JsonBool(JsonObject(capabilities, "cupti"), "library_found", false) ? "found" : "absent");
      out << "  perf counters: " << (JsonBool(JsonObject(capabilities, "perf_counters"), "available", false) ? "yes" : "no");
    }
    out << "\n";
  }
  const auto& counts = info["counts"];
  out << "events     " << counts["spans"] << " spans, " << counts["instants"] << " instants, " << counts["counters"]
      << " counters";
  if (counts["unfinished"].get<uint64_t>() > 0) out << " (" << counts["unfinished"] << " unfinished)";
  out << "\n";
  out << "steps     ";
  for (const auto& [phase, count] : counts["steps"].items()) out << " " << phase << " " << count;
  out << "\n";
  out << "samples    " << counts["system_samples"] << " system samples over "
      << counts["system_samples_by_metric"].size() << " metrics\n";
  out << "dropped    " << info["dropped_events"] << " events\n";
  out << "processes\n";
  for (const auto& p : info["processes"]) {
    std::snprintf(line, sizeof line, "  %-8s pid %-7lld %9llu events %7llu dropped  %s\n",
                  p["kind"].get<std::string>().c_str(), static_cast<long long>(p["pid"].get<int64_t>()),
                  static_cast<unsigned long long>(p["events"].get<uint64_t>()),
                  static_cast<unsigned long long>(p["dropped_events"].get<uint64_t>()),
                  p["command"].get<std::string>().substr(0, 60).c_str());
    out << line;
  }
  const auto& bytes = info["bytes_on_disk"];
  out << "on disk    " << HumanBytes(bytes["total"]) << " (framework events " << HumanBytes(bytes["framework_events"])
      << ", system samples " << HumanBytes(bytes["system_samples"]) << ", names " << HumanBytes(bytes["string_tables"])
      << ", metadata " << HumanBytes(bytes["metadata"]);
  if (bytes["uncompacted_rings"].get<uint64_t>() > 0) out << ", raw rings " << HumanBytes(bytes["uncompacted_rings"]);
  out << ")\n";
  for (const auto& window : info["detail_windows"]) {
    out << "detail     " << window["kind"].get<std::string>() << " pid " << window["pid"] << " window " << window["window"];
    if (window.contains("error")) {
      out << ": unreadable: " << window["error"].get<std::string>() << "\n";
      continue;
    }
    if (window["steps"].is_array()) {
      out << ", " << window["step_phase"].get<std::string>() << " steps " << window["steps"][0] << "-" << window["steps"][1];
    } else {
      out << ", no steps";
    }
    std::snprintf(line, sizeof line, ", %.3f s", (window["end_ns"].get<int64_t>() - window["start_ns"].get<int64_t>()) / 1e9);
    out << line << (window["complete"].get<bool>() ? "" : " (incomplete)") << ", " << HumanBytes(window["bytes"])
        << "  " << window["file"].get<std::string>() << "\n";
  }
  for (const auto& problem : info["problems"]) out << "warning    " << problem.get<std::string>() << "\n";
  return out.str();
}

int InfoCommand(const std::string& run_path, bool json) {
  auto run = store::RunReader::Open(run_path);
  if (!run.ok()) {
    std::fprintf(stderr, "stepscope info: %s\n", run.status().message().c_str());
    return 1;
  }
  nlohmann::json info = BuildRunInfo(run_path, *run);
  std::string text = json ? info.dump(2) + "\n" : FormatRunInfo(info);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace stepscope::cli
