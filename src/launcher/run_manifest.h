// What the launcher writes into the node manifest (<root>/<job>/<node>/manifest.json), in the
// manifest's one type (store/run_manifest.h, which also writes and reads it): what was run,
// where, with which configuration and capabilities, and how it ended. It is rewritten
// atomically at start (status "starting"), once the child runs, after each control file and at
// the end. Its fields are documented in docs/formats.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "launcher/child_process.h"
#include "launcher/run_config.h"
#include "platform/perf/perf_counter_set.h"
#include "store/run_manifest.h"

namespace stepscope::launcher {

struct ManifestStart {
  std::string job;
  std::string node;
  std::string host;
  std::vector<std::string> command;
  const RunConfig* config = nullptr;
  ClockPair clock_anchor;
  int64_t realtime_anchor_ns = 0;
  store::ManifestCapabilities capabilities;
  nlohmann::json versions;
};

store::RunManifest StartManifest(const ManifestStart& start);
void RecordChildStarted(store::RunManifest& manifest, int launcher_pid, int job_pid);
// The CPU performance counters the launcher opened (or could not) once the job started: which
// events count, on whom, and why the others do not.
void RecordPerfCounters(store::ManifestCapabilities& capabilities, const PerfCounterSet& counters,
                        std::optional<int> paranoid_level);
void RecordChildEnded(store::RunManifest& manifest, const ChildExit& exit, int64_t end_realtime_ns);
Status WriteManifest(const std::string& node_dir, const store::RunManifest& manifest);

}  // namespace stepscope::launcher
