#include "report/run_info.h"

#include <sys/stat.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/detail_window_files.h"
#include "analysis/run_loader.h"
#include "analysis/vocabulary.h"
#include "analysis/run_facts.h"
#include "base/json_fields.h"
// store::RunManifest and its helpers come with analysis/model.h: the typed manifest is part of
// the model's NodeFacts, which the report may read but not the store itself (STYLE.md §1).

namespace stepscope::report {
namespace {

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}


// [{"node", "kind", "pid", "window", "steps": [first, last] | null, "step_phase", "start_ns",
// "end_ns", "complete", "file", "bytes", "summary", "error"?}]; a refused detail directory is an
// entry with kind "" and its error.
nlohmann::json DetailWindowsToJson(const std::vector<analysis::DetailWindowFile>& windows) {
  nlohmann::json out = nlohmann::json::array();
  for (const analysis::DetailWindowFile& w : windows) {
    nlohmann::json steps = w.has_steps ? nlohmann::json::array({w.first_step, w.last_step}) : nlohmann::json();
    nlohmann::json entry = {{"node", w.node},
                            {"kind", w.kind},
                            {"pid", w.pid},
                            {"window", w.window},
                            {"steps", steps},
                            {"step_phase", w.step_phase},
                            {"start_ns", w.start_ns},
                            {"end_ns", w.end_ns},
                            {"complete", w.complete},
                            {"file", w.file},
                            {"bytes", w.bytes},
                            {"summary", w.summary}};
    if (!w.error.empty()) entry["error"] = w.error;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

// Everything comes from the analysis model, so an imported run (which has no store) shows what
// it holds, and a stepscope run is read once: its streams (records, drops, bytes) are facts of
// the model too.
nlohmann::json BuildRunInfo(const std::string& run_path, const analysis::Model& model) {
  nlohmann::json info;
  info["schema_version"] = kRunInfoSchemaVersion;
  info["run"] = run_path;
  info["source"] = analysis::ModelSourceName(model.source());

  // Job-level facts come from the node manifests; a job's manifest is the union of its nodes'.
  const analysis::RunFacts facts = analysis::ComputeRunFacts(model, run_path);
  nlohmann::json nodes = nlohmann::json::array();
  std::string status = model.source() == analysis::ModelSource::kStepscope ? "unknown" : "imported";
  nlohmann::json command, ended;
  for (const analysis::NodeFacts& node : model.nodes()) {
    nlohmann::json entry = {{"name", node.name}};
    if (node.has_manifest && model.source() == analysis::ModelSource::kStepscope) {
      const store::RunManifest& manifest = node.manifest;
      const nlohmann::json written = store::ManifestToJson(manifest);
      if (!manifest.command.empty()) command = manifest.command;
      status = store::ManifestStatusName(manifest.status);
      ended = JsonObject(written, "exit");
      ended["description"] = !manifest.ended.empty() ? manifest.ended
                             : manifest.status == store::ManifestStatus::kRunning ? "still running, or the launcher died"
                                                                                  : "";
      entry["hosts"] = manifest.hosts;
      entry["pids"] = JsonObject(written, "pids");
      entry["capabilities"] = written["capabilities"];
      entry["status"] = status;
      entry["config"] = manifest.config;
      if (manifest.node_rank >= 0) entry["node_rank"] = manifest.node_rank;
      if (manifest.nodes_expected > 0) entry["nodes_expected"] = manifest.nodes_expected;
      if (!manifest.metrics_url.empty()) entry["metrics_url"] = manifest.metrics_url;
      // Where the node's times sit against the job's reference clock (docs/multi-node.md).
      entry["clock"] = analysis::ClockAlignmentToJson(node.clock);
    } else {
      entry["status"] = model.source() == analysis::ModelSource::kStepscope ? "no manifest" : "imported";
    }
    nodes.push_back(entry);
  }
  const bool has_time = facts.start_ns != 0 || facts.end_ns != 0;
  info["job"] = facts.job;
  info["command"] = command.is_null() ? nlohmann::json::array() : command;
  info["status"] = status;
  info["ended"] = ended.is_null() ? nlohmann::json::object() : ended;
  info["start_time_ns"] = has_time ? nlohmann::json(facts.start_ns) : nlohmann::json();
  info["end_time_ns"] = has_time ? nlohmann::json(facts.end_ns) : nlohmann::json();
  info["duration_s"] = has_time ? facts.duration_s : 0.0;
  info["nodes"] = nodes;

  // Counts by kind. Steps are spans in the model; they are counted as steps only.
  uint64_t spans = 0, instants = 0, counters = 0, unfinished = 0;
  std::map<std::string, uint64_t> steps = {{"TRAIN", 0}, {"EVAL", 0}, {"PREDICT", 0}, {"GLOBAL", 0}};
  std::vector<bool> is_step(model.events().size(), false);
  for (uint32_t index : model.steps()) is_step[index] = true;
  std::map<std::pair<uint32_t, int32_t>, uint64_t> events_per_process;
  for (size_t i = 0; i < model.events().size(); ++i) {
    const analysis::FrameworkEvent& event = model.events()[i];
    ++events_per_process[{event.node, event.pid}];
    unfinished += event.unfinished;
    if (is_step[i]) {
      ++steps[analysis::StepPhaseName(model.StepPhaseOf(event))];
      continue;
    }
    switch (event.kind) {
      case analysis::EventKind::kSpan: ++spans; break;
      case analysis::EventKind::kInstant: ++instants; break;
      case analysis::EventKind::kCounter: ++counters; break;
    }
  }
  // Every process the run knows: those with facts and those that only have events (an import
  // names facts only for some).
  for (const analysis::ProcessFacts& process : model.processes()) events_per_process.try_emplace({process.node, process.pid}, 0);
  std::map<std::string, uint64_t> samples;
  std::vector<uint64_t> samples_per_node(model.nodes().size(), 0);
  uint64_t sample_total = 0;
  for (const analysis::SystemSeries& series : model.series()) {
    // Stepscope's own metric names where the series stands for one, else the series key.
    std::string metric = analysis::MetricForSeriesKey(model.String(series.type), model.String(series.name),
                                                      model.String(series.dimension));
    if (metric.empty() || model.source() != analysis::ModelSource::kStepscope) {
      metric = std::string(model.String(series.type)) + "/" + std::string(model.String(series.name)) + "/" +
               std::string(model.String(series.dimension));
    }
    samples[metric] += series.time_ns.size();
    if (series.node < samples_per_node.size()) samples_per_node[series.node] += series.time_ns.size();
    sample_total += series.time_ns.size();
  }
  info["counts"] = {{"spans", spans}, {"instants", instants}, {"counters", counters}, {"steps", steps},
                    {"unfinished", unfinished}, {"system_samples", sample_total}, {"system_samples_by_metric", samples},
                    {"nodes", model.nodes().size()}, {"processes", events_per_process.size()}};

  // The recorder's drops by cause, as the loader turned them into problems (recording_losses.h).
  uint64_t buffers_full = 0, write_failed = 0;
  for (const analysis::Problem& problem : model.problems()) {
    if (problem.name == "events_dropped_buffers_full") buffers_full += problem.count;
    if (problem.name == "events_dropped_write_failed") write_failed += problem.count;
  }
  info["dropped_events"] = buffers_full + write_failed;
  info["dropped_events_by_cause"] = {{"buffers_full", buffers_full}, {"write_failed", write_failed}};

  nlohmann::json processes = nlohmann::json::array();
  if (model.source() == analysis::ModelSource::kStepscope) {
    uint64_t manifest_bytes = 0;
    for (const analysis::NodeFacts& node : model.nodes()) manifest_bytes += FileSize(node.directory + "/manifest.json");
    uint64_t framework_bytes = 0, system_bytes = 0, string_bytes = 0, other_bytes = manifest_bytes, ring_bytes = 0;
    for (const analysis::StreamFacts& stream : model.streams()) {
      (stream.is_system ? system_bytes : framework_bytes) += stream.block_bytes;
      string_bytes += stream.string_bytes;
      other_bytes += stream.other_bytes;
      ring_bytes += stream.ring_bytes;
      // What the model holds of this stream: its process's events, or its node's samples.
      const uint64_t events = stream.is_system ? samples_per_node[stream.node]
                                               : events_per_process[{stream.node, static_cast<int32_t>(stream.pid)}];
      auto meta = nlohmann::json::parse(stream.meta_json, nullptr, false);
      processes.push_back({{"node", model.nodes()[stream.node].name}, {"stream", stream.name}, {"kind", stream.is_system ? "system" : "process"},
                           {"pid", stream.pid}, {"ppid", stream.ppid},
                           {"command", JsonString(meta, "command")},
                           {"events", events}, {"records", stream.records},
                           {"dropped_events", stream.dropped_events},
                           {"dropped_write_failed", stream.dropped_write_failed},
                           {"bytes", stream.log_bytes + stream.ring_bytes}, {"compacted", stream.ring_bytes == 0}});
    }
    info["bytes_on_disk"] = {{"framework_events", framework_bytes}, {"system_samples", system_bytes},
                             {"string_tables", string_bytes}, {"metadata", other_bytes},
                             {"uncompacted_rings", ring_bytes},
                             {"total", framework_bytes + system_bytes + string_bytes + other_bytes + ring_bytes}};
    info["detail_windows"] = DetailWindowsToJson(analysis::ReadDetailWindows(model));
  } else {
    // An imported run: its processes as the model knows them; no streams, one model file.
    for (const auto& [key, events] : events_per_process) {
      const auto [node, pid] = key;
      const analysis::ProcessFacts* facts = model.FindProcess(node, pid);
      processes.push_back({{"node", node < model.nodes().size() ? model.nodes()[node].name : ""},
                           {"stream", nullptr}, {"kind", "process"}, {"pid", pid},
                           {"ppid", facts != nullptr ? facts->parent_pid : -1},
                           {"command", ""}, {"events", events},
                           {"records", nullptr}, {"dropped_events", nullptr}, {"dropped_write_failed", nullptr},
                           {"bytes", nullptr}, {"compacted", nullptr}});
    }
    const std::string run_dir = analysis::RunDirectoryOf(run_path);
    const uint64_t model_bytes = FileSize(run_dir + "/" + analysis::kModelFileName);
    const uint64_t manifest_bytes = FileSize(run_dir + "/manifest.json");
    info["bytes_on_disk"] = {{"model_file", model_bytes}, {"metadata", manifest_bytes},
                             {"total", model_bytes + manifest_bytes}};
    info["detail_windows"] = nlohmann::json::array();
  }
  info["processes"] = processes;
  info["problems"] = analysis::ProblemsToJson(model.problems());
  return info;
}

}  // namespace stepscope::report
