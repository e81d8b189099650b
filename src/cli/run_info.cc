#include "cli/run_info.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "analysis/run_loader.h"
#include "analysis/vocabulary.h"
#include "base/json_fields.h"
#include "cli/detail_summary.h"
#include "cli/run_problems.h"
#include "compare/run_facts.h"
#include "store/run_directory.h"
#include "store/run_manifest.h"

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

// The directory of an imported run: the path itself, or the folder of its model.stepscope.
std::string ImportedRunDirectory(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
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
  const compare::RunFacts facts = compare::ComputeRunFacts(model, run_path);
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
    info["detail_windows"] = DetailWindowsToJson(ListDetailWindows(model));
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
    const std::string run_dir = ImportedRunDirectory(run_path);
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
  const bool imported = info["source"] != "stepscope";
  if (imported) {
    out << "dropped    not recorded by stepscope (imported from " << info["source"].get<std::string>() << ")\n";
  } else {
    out << "dropped    " << info["dropped_events"] << " events";
    const auto& causes = info["dropped_events_by_cause"];
    if (info["dropped_events"].get<uint64_t>() > 0) {
      out << " (" << causes["buffers_full"] << " while buffers were full, " << causes["write_failed"]
          << " while the log could not be written)";
    }
    out << "\n";
  }
  out << "processes\n";
  for (const auto& p : info["processes"]) {
    // An imported run has no streams: nothing was recorded about drops.
    const std::string dropped = p["dropped_events"].is_number() ? std::to_string(p["dropped_events"].get<uint64_t>()) : "-";
    std::snprintf(line, sizeof line, "  %-8s pid %-7lld %9llu events %7s dropped  %s\n",
                  p["kind"].get<std::string>().c_str(), static_cast<long long>(p["pid"].get<int64_t>()),
                  static_cast<unsigned long long>(p["events"].get<uint64_t>()), dropped.c_str(),
                  p["command"].get<std::string>().substr(0, 60).c_str());
    out << line;
  }
  const auto& bytes = info["bytes_on_disk"];
  if (imported) {
    out << "on disk    " << HumanBytes(bytes["total"]) << " (model file " << HumanBytes(bytes["model_file"])
        << ", metadata " << HumanBytes(bytes["metadata"]) << ")\n";
  } else {
    out << "on disk    " << HumanBytes(bytes["total"]) << " (framework events " << HumanBytes(bytes["framework_events"])
        << ", system samples " << HumanBytes(bytes["system_samples"]) << ", names " << HumanBytes(bytes["string_tables"])
        << ", metadata " << HumanBytes(bytes["metadata"]);
    if (bytes["uncompacted_rings"].get<uint64_t>() > 0) out << ", raw rings " << HumanBytes(bytes["uncompacted_rings"]);
    out << ")\n";
  }
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
  for (const auto& problem : info["problems"]) {
    const std::string severity = problem["severity"].get<std::string>();
    analysis::Problem typed{problem["name"].get<std::string>(),
                            severity == "data_loss" ? analysis::ProblemSeverity::kDataLoss
                            : severity == "error"   ? analysis::ProblemSeverity::kError
                                                    : analysis::ProblemSeverity::kInfo,
                            problem["count"].get<uint64_t>(), problem["sentence"].get<std::string>()};
    out << "problem    " << analysis::ProblemLine(typed) << "\n";
  }
  return out.str();
}

int InfoCommand(const std::string& run_path, bool json) {
  // A file other than an imported run's model is a run's file passed instead of its directory:
  // the store says so and names the directory (LoadRun would call it a corrupt model file).
  struct stat st;
  const bool model_file = run_path == analysis::kModelFileName ||
                          run_path.ends_with(std::string("/") + analysis::kModelFileName);
  if (stat(run_path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && !model_file) {
    std::fprintf(stderr, "stepscope info: %s\n",
                 store::NotARunDirectoryError(run_path, S_ISREG(st.st_mode)).message().c_str());
    return 1;
  }
  auto model = analysis::LoadRun(run_path);
  if (!model.ok()) {
    std::fprintf(stderr, "stepscope info: %s\n", model.status().message().c_str());
    return 1;
  }
  nlohmann::json info = BuildRunInfo(run_path, *model);
  // The text lists every problem itself; beside JSON, the data losses still reach a person.
  if (json) PrintRunProblems(model->problems(), "stepscope info: ", run_path);
  std::string text = json ? info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                          : FormatRunInfo(info);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace stepscope::cli
