// The node manifest (<root>/<job>/<node>/manifest.json) written by `stepscope run`: what was
// run, where, with which configuration and capabilities, and how it ended. It is rewritten
// atomically at start (status "running"), once the child runs, and at the end. Its fields are
// documented in docs/formats.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "launcher/child_process.h"
#include "launcher/run_config.h"

namespace stepscope::launcher {

inline constexpr int kManifestSchemaVersion = 1;

struct ManifestStart {
  std::string job;
  std::string node;
  std::string host;
  std::vector<std::string> command;
  const RunConfig* config = nullptr;
  ClockPair clock_anchor;
  int64_t realtime_anchor_ns = 0;
  nlohmann::json capabilities;
  nlohmann::json versions;
};

nlohmann::json StartManifest(const ManifestStart& start);
void RecordChildStarted(nlohmann::json& manifest, int launcher_pid, int job_pid);
void RecordChildEnded(nlohmann::json& manifest, const ChildExit& exit, int64_t end_realtime_ns);
// The manifest as written to manifest.json.
std::string ManifestText(const nlohmann::json& manifest);
Status WriteManifest(const std::string& node_dir, const nlohmann::json& manifest);

}  // namespace stepscope::launcher
