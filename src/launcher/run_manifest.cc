#include "launcher/run_manifest.h"

#include "base/duration.h"
#include "base/file_system.h"
#include "store/format.h"

namespace stepscope::launcher {

nlohmann::json StartManifest(const ManifestStart& start) {
  nlohmann::json config = nlohmann::json::object();
  const RunConfig& c = *start.config;
  auto source_of = [&](const std::string& key) {
    auto it = c.sources.find(key);
    return ConfigSourceName(it == c.sources.end() ? ConfigSource::kDefault : it->second);
  };
  config["out"] = {{"value", c.out}, {"from", source_of("out")}};
  config["job"] = {{"value", start.job}, {"from", source_of("job")}};
  config["node"] = {{"value", start.node}, {"from", source_of("node")}};
  config["interval"] = {{"value", FormatDurationNs(c.interval_ns)}, {"ns", c.interval_ns}, {"from", source_of("interval")}};
  nlohmann::json manifest = {
      {"schema_version", kManifestSchemaVersion},
      {"format_version", store::kFormatVersion},
      {"job", start.job},
      {"node", start.node},
      {"hosts", {start.host}},
      {"command", start.command},
      {"config", config},
      {"versions", start.versions},
      {"capabilities", start.capabilities},
      // Every timestamp in the run is CLOCK_MONOTONIC of this node shifted by this anchor.
      {"clock",
       {{"monotonic_ns", start.clock_anchor.monotonic_ns},
        {"realtime_ns", start.realtime_anchor_ns},
        {"description", "timestamps are CLOCK_MONOTONIC ns + (realtime_ns - monotonic_ns), i.e. Unix-epoch ns"}}},
      {"start_time_ns", start.realtime_anchor_ns},
      {"status", "starting"},
  };
  // Top-level keys the analysis loader reads into NodeFacts (stepscope_loader.cc); only when given.
  if (!c.instance.empty()) {
    manifest["instance_type"] = c.instance;
    config["instance"] = {{"value", c.instance}, {"from", source_of("instance")}};
  }
  if (c.instance_count > 0) {
    manifest["instance_count"] = c.instance_count;
    config["instance_count"] = {{"value", c.instance_count}, {"from", source_of("instance_count")}};
  }
  manifest["config"] = config;
  return manifest;
}

void RecordChildStarted(nlohmann::json& manifest, int launcher_pid, int job_pid) {
  manifest["pids"] = {{"launcher", launcher_pid}, {"job", job_pid}};
  manifest["status"] = "running";
}

void RecordChildEnded(nlohmann::json& manifest, const ChildExit& exit, int64_t end_realtime_ns) {
  manifest["end_time_ns"] = end_realtime_ns;
  manifest["duration_s"] = static_cast<double>(end_realtime_ns - manifest["start_time_ns"].get<int64_t>()) / 1e9;
  if (exit.signaled) {
    manifest["status"] = "killed";
    manifest["exit"] = {{"signal", exit.signal}, {"signal_name", SignalName(exit.signal)},
                        {"core_dumped", exit.core_dumped}, {"launcher_exit_code", exit.LauncherExitCode()}};
  } else {
    manifest["status"] = "exited";
    manifest["exit"] = {{"code", exit.exit_code}, {"launcher_exit_code", exit.LauncherExitCode()}};
  }
  manifest["ended"] = exit.Describe();
}

// The command line is the user's bytes: invalid UTF-8 in it is replaced, never a throw.
std::string ManifestText(const nlohmann::json& manifest) {
  return manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status WriteManifest(const std::string& node_dir, const nlohmann::json& manifest) {
  return WriteFileAtomically(node_dir + "/manifest.json", ManifestText(manifest));
}

}  // namespace stepscope::launcher
