#include "analysis/recording_losses.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <string>


namespace stepscope::analysis {
namespace {

constexpr const char* kSystemStream = "system";

constexpr std::string_view kProblemNames[] = {"events_dropped_buffers_full", "events_dropped_write_failed",
                                              "process_log_unwritten", "missing_process_log", "missing_system_log"};

// "process 4242 on node 'n'" or "the system sampler on node 'n'".
std::string Writer(const StreamFacts& stream, const std::string& node) {
  const std::string where = " on node '" + node + "'";
  if (stream.is_system || stream.name == kSystemStream) return "the system sampler" + where;
  if (stream.pid >= 0) return "process " + std::to_string(stream.pid) + where;
  return "stream '" + stream.name + "'" + where;
}

void AddDrops(const StreamFacts& stream, const std::string& node, ModelBuilder& builder) {
  const uint64_t write_failed = std::min(stream.dropped_write_failed, stream.dropped_events);
  const uint64_t buffers_full = stream.dropped_events - write_failed;
  if (buffers_full > 0) {
    builder.AddProblem("events_dropped_buffers_full", ProblemSeverity::kDataLoss,
                       Writer(stream, node) + " dropped " + std::to_string(buffers_full) +
                           " events because its buffers were full (it recorded faster than stepscope wrote); "
                           "record fewer events per second",
                       buffers_full);
  }
  if (write_failed > 0) {
    builder.AddProblem("events_dropped_write_failed", ProblemSeverity::kDataLoss,
                       Writer(stream, node) + " dropped " + std::to_string(write_failed) +
                           " events because its log could not be written (disk full or I/O error); "
                           "free space where the run is written",
                       write_failed);
  }
}

void AddMissingLogs(const NodeFacts& node, const std::set<std::string>& present, ModelBuilder& builder) {
  if (!node.has_manifest) return;
  bool system_reported = false;
  // The launcher lists every stream it found when the job ended; each must still be there.
  for (const std::string& name : node.manifest.streams) {
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
  if (!system_reported && present.count(kSystemStream) == 0 && store::SamplerStarted(node.manifest.status)) {
    builder.AddProblem("missing_system_log", ProblemSeverity::kDataLoss,
                       "node '" + node.name + "' has no system.log although its launcher started the system "
                       "sampler: every system sample of the node is lost; restore the file from a complete copy of "
                       "the run");
  }
}

}  // namespace

bool IsRecordingLossProblem(std::string_view name) {
  return std::find(std::begin(kProblemNames), std::end(kProblemNames), name) != std::end(kProblemNames);
}

void AddRecordingLosses(const std::vector<NodeFacts>& nodes, const std::vector<StreamFacts>& streams,
                        ModelBuilder& builder) {
  for (const StreamFacts& stream : streams) {
    const std::string& node = nodes[stream.node].name;
    AddDrops(stream, node, builder);
    if (stream.unwritten) {
      builder.AddProblem("process_log_unwritten", ProblemSeverity::kDataLoss,
                         "stream '" + stream.name + "' on node '" + node +
                             "' holds nothing: its process could not write it (disk full or unwritable when it "
                             "started), so all of that process's events are lost, uncounted");
    }
  }
  for (uint32_t index = 0; index < nodes.size(); ++index) {
    std::set<std::string> present;
    for (const StreamFacts& stream : streams) {
      if (stream.node == index) present.insert(stream.name);
    }
    AddMissingLogs(nodes[index], present, builder);
  }
}

}  // namespace stepscope::analysis
