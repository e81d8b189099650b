// The control files of live changes: `stepscope ctl` writes them, the launcher's
// ControlWatcher (control_watcher.h) and the job's Python processes
// (python/stepscope/_config.py ControlWatcher) read them. One file per change,
// <node>/control/<sequence>.json:
//
//   {"sequence": int,            // 1 + the highest sequence already in the directory
//    "time_ns": int,             // Unix-epoch ns when ctl wrote it
//    "interval_ns": int,         // present when the interval changes
//    "detail": [windows]}        // present when windows change; normalised form of
//                                // detail_window.h; each replaces the pending windows of its kind
//
// Callers: the ctl command (writer), the control watcher (names). Plain functions, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "launcher/detail_window.h"

namespace stepscope::launcher {

// The validated changes of one control file.
struct ControlRequest {
  std::optional<int64_t> interval_ns;
  std::vector<DetailWindow> detail;
};

// The control file body for `sequence` (the JSON shape above).
nlohmann::json ControlFileJson(const ControlRequest& request, int64_t sequence, int64_t time_ns);

// "<n>.json" -> n; anything else (ctl's temporary dot files, stray names) -> nullopt.
std::optional<int64_t> ControlSequenceOfName(const std::string& name);

// Highest sequence among <control_dir>/<n>.json (0 when none or no directory).
int64_t HighestControlSequence(const std::string& control_dir);

// Writes <node_dir>/control/<sequence>.json with sequence = 1 + the highest there, atomically
// and exclusively: the body is written to a temporary file and hard-linked to its final name,
// which fails instead of overwriting when a concurrent ctl took that sequence (it then takes
// the next). Returns the sequence written.
StatusOr<int64_t> WriteControlFile(const std::string& node_dir, const ControlRequest& request, int64_t time_ns);

}  // namespace stepscope::launcher
