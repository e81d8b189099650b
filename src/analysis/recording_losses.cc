#include "analysis/recording_losses.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/json_fields.h"

namespace stepscope::analysis {
namespace {

constexpr const char* kSystemStream = "system";

// "process 4242 on node 'n'" or "the system sampler on node 'n'".
std::string Writer(const store::StreamInfo& stream) {
  const std::string where = " on node '" + stream.node + "'";
  if (stream.is_system || stream.name == kSystemStream) return "the system sampler" + where;
  if (stream.pid >= 0) return "process " + std::to_string(stream.pid) + where;
  return "stream '" + stream.name + "'" + where;
}

void AddDrops(const store::StreamInfo& stream, ModelBuilder& builder) {
  const uint64_t write_failed = std::min(stream.dropped_write_failed, stream.dropped_events);
  const uint64_t buffers_full = stream.dropped_events - write_failed;
  if (buffers_full > 0) {
    builder.AddProblem("events_dropped_buffers_full", ProblemSeverity::kDataLoss,
                       Writer(stream) + " dropped " + std::to_string(buffers_full) +
                           " events because its buffers were full (it recorded faster than stepscope wrote); "
                           "record fewer events per second",
                       buffers_full);
  }
  if (write_failed > 0) {
    builder.AddProblem("events_dropped_write_failed", ProblemSeverity::kDataLoss,
                       Writer(stream) + " dropped " + std::to_string(write_failed) +
                           " events because its log could not be written (disk full or I/O error); "
                           "free space where the run is written",
                       write_failed);
  }
}

// A launcher's status once it got as far as starting its system sampler (docs/formats.md).
bool SamplerStarted(std::string_view status) {
  return status == "running" || status == "exited" || status == "killed" || status == "failed-to-start";
}

void AddMissingLogs(const store::NodeInfo& node, const std::set<std::string>& present, ModelBuilder& builder) {
  const nlohmann::json manifest = nlohmann::json::parse(node.manifest_json, nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object()) return;
  bool system_reported = false;
  // The launcher lists every stream it found when the job ended; each must still be there.
  for (const nlohmann::json& entry : JsonArray(manifest, "streams")) {
    if (!entry.is_string()) continue;
    const std::string name = entry.get<std::string>();
    if (present.count(name) != 0) continue;
    if (name == kSystemStream) {
      system_reported = true;
      builder.AddProblem("missing_system_log", ProblemSeverity::kDataLoss,
                         "node '" + node.name + "' has no " + name +
                             ".log although its launcher wrote one: every system sample of the node is lost; "
                             "restore the file from a complete copy of the run");
      continue;
    }
    std::string pid = name.starts_with("proc-") ? name.substr(5, name.find('-', 5) - 5) : "";
    builder.AddProblem("missing_process_log", ProblemSeverity::kDataLoss,
                       "node '" + node.name + "' has no " + name + ".log" + (pid.empty() ? "" : " (process " + pid + ")") +
                           " although its launcher listed it: every event of that process is lost; "
                           "restore the file from a complete copy of the run");
  }
  // A run still being written (or one whose launcher died) has no list yet, but its sampler
  // stream exists from before the job started.
  if (!system_reported && present.count(kSystemStream) == 0 && SamplerStarted(JsonString(manifest, "status"))) {
    builder.AddProblem("missing_system_log", ProblemSeverity::kDataLoss,
                       "node '" + node.name + "' has no system.log although its launcher started the system "
                       "sampler: every system sample of the node is lost; restore the file from a complete copy of "
                       "the run");
  }
}

}  // namespace

void AddRecordingLosses(const store::RunReader& run, ModelBuilder& builder) {
  for (const store::StreamInfo& stream : run.streams()) {
    AddDrops(stream, builder);
    if (stream.unwritten) {
      builder.AddProblem("process_log_unwritten", ProblemSeverity::kDataLoss,
                         "stream '" + stream.name + "' on node '" + stream.node +
                             "' holds nothing: its process could not write it (disk full or unwritable when it "
                             "started), so all of that process's events are lost, uncounted");
    }
  }
  for (const store::NodeInfo& node : run.nodes()) {
    std::set<std::string> present;
    for (const store::StreamInfo& stream : run.streams()) {
      if (stream.node == node.name) present.insert(stream.name);
    }
    AddMissingLogs(node, present, builder);
  }
}

}  // namespace stepscope::analysis
