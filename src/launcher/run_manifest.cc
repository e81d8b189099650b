#include "launcher/run_manifest.h"

#include "base/duration.h"
#include "base/file_system.h"
#include "store/format.h"
#include "store/run_directory.h"

namespace stepscope::launcher {

store::RunManifest StartManifest(const ManifestStart& start) {
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
  store::RunManifest manifest;
  manifest.schema_version = store::kManifestSchemaVersion;
  manifest.format_version = static_cast<int>(store::kFormatVersion);
  manifest.job = start.job;
  manifest.node = start.node;
  manifest.hosts = {start.host};
  manifest.command = start.command;
  manifest.versions = start.versions;
  manifest.capabilities = start.capabilities;
  // Every timestamp in the run is CLOCK_MONOTONIC of this node shifted by this anchor.
  manifest.has_clock = true;
  manifest.clock_monotonic_ns = static_cast<int64_t>(start.clock_anchor.monotonic_ns);
  manifest.clock_realtime_ns = start.realtime_anchor_ns;
  manifest.start_time_ns = start.realtime_anchor_ns;
  manifest.status = store::ManifestStatus::kStarting;
  manifest.interval_ns = c.interval_ns;
  // Read into the nodes' facts by the analysis loader, compare and RightSizing; only when given.
  if (!c.instance.empty()) {
    manifest.instance_type = c.instance;
    config["instance"] = {{"value", c.instance}, {"from", source_of("instance")}};
  }
  if (c.instance_count > 0) {
    manifest.instance_count = c.instance_count;
    config["instance_count"] = {{"value", c.instance_count}, {"from", source_of("instance_count")}};
  }
  // Which catalogue priced the run's RightSizing and report; the built-in example when absent.
  if (!c.prices.empty()) config["prices"] = {{"value", c.prices}, {"from", source_of("prices")}};
  // Named first: items() of a temporary would outlive it (the range-for keeps only the proxy).
  const nlohmann::json entries = RunConfigManifestEntries(c);
  for (const auto& [key, entry] : entries.items()) config[key] = entry;
  manifest.config = std::move(config);
  return manifest;
}

void RecordChildStarted(store::RunManifest& manifest, int launcher_pid, int job_pid) {
  manifest.launcher_pid = launcher_pid;
  manifest.job_pid = job_pid;
  manifest.status = store::ManifestStatus::kRunning;
}

void RecordPerfCounters(store::ManifestCapabilities& capabilities, const PerfCounterSet& counters,
                        std::optional<int> paranoid_level) {
  capabilities.perf_counters_available = counters.any_counted();
  capabilities.perf_paranoid = paranoid_level.value_or(-1);
  capabilities.perf_reason = counters.Summary();
  capabilities.perf_scope = PerfScopeName(counters.scope());
  capabilities.perf_events.clear();
  for (const PerfEventStatus& status : counters.statuses()) {
    capabilities.perf_events.push_back(
        {std::string(PerfEventInfoOf(status.event).name), status.counted, status.user_only, status.reason});
  }
}

void RecordChildEnded(store::RunManifest& manifest, const ChildExit& exit, int64_t end_realtime_ns) {
  manifest.end_time_ns = end_realtime_ns;
  manifest.status = exit.signaled ? store::ManifestStatus::kKilled : store::ManifestStatus::kExited;
  manifest.exit.known = true;
  manifest.exit.signaled = exit.signaled;
  manifest.exit.exit_code = exit.exit_code;
  manifest.exit.signal = exit.signal;
  manifest.exit.signal_name = exit.signaled ? SignalName(exit.signal) : "";
  manifest.exit.core_dumped = exit.core_dumped;
  manifest.exit.launcher_exit_code = exit.LauncherExitCode();
  manifest.ended = exit.Describe();
}

Status WriteManifest(const std::string& node_dir, const store::RunManifest& manifest) {
  return WriteFileAtomically(node_dir + "/" + store::kManifestFileName, store::ManifestText(manifest));
}

}  // namespace stepscope::launcher
