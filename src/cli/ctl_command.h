// `stepscope ctl RUN [--node ID] [--interval D] [--detailed-steps S:C] [--python-steps S:C]
// [--dataloader-steps S:C]`: changes the plan of a running job without restarting it (SPEC
// §1.5). It writes one control file per node, <node>/control/<sequence>.json:
//
//   {"sequence": int,            // 1 + the highest sequence already in the directory
//    "time_ns": int,             // Unix-epoch ns when ctl wrote it
//    "interval_ns": int,         // present when --interval was given
//    "detail": [windows]}        // present when a --*-steps flag was given; normalised form of
//                                // detail_window.h; each replaces the pending windows of its kind
//
// The launcher (control_watcher.h) applies interval_ns within about a second; the job's Python
// processes (python/stepscope/_config.py ControlWatcher) apply detail at their next step.
//
// Callers: main.cc. Threading: main thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/detail_window.h"

namespace stepscope::cli {

struct CtlInvocation {
  std::string run;               // a job directory or one node directory in it
  std::string node;              // empty: every node of the job
  std::string interval;          // empty: unchanged
  std::string detailed_steps;    // "START:COUNT"; empty: unchanged
  std::string python_steps;
  std::string dataloader_steps;
};

// The validated changes of one ctl invocation.
struct ControlRequest {
  std::optional<int64_t> interval_ns;
  std::vector<DetailWindow> detail;
};

// Validates the flag values; InvalidArgument (exit 2) naming the flag, also when none is given.
StatusOr<ControlRequest> BuildControlRequest(const CtlInvocation& invocation);

// The node directories `run` (job or node directory) designates, narrowed to `node` when not
// empty. NotFound when there is no such run or node.
StatusOr<std::vector<std::string>> FindControlTargets(const std::string& run, const std::string& node);

// Empty when the node's job is running; otherwise why not ("exited with code 0"), read from
// its manifest (and, for a launcher on this host, whether that process is still alive).
std::string WhyNotRunning(const std::string& node_dir);

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

// The whole command; returns the exit code (0 written, 1 no such or ended run, 2 bad values).
int CtlCommand(const CtlInvocation& invocation);

}  // namespace stepscope::cli
