// `stepscope ctl RUN [--node ID] [--interval D] [--detailed-steps S:C] [--python-steps S:C]
// [--dataloader-steps S:C]`: changes the plan of a running job without restarting it (SPEC
// §1.5). It writes one control file per node, <node>/control/<sequence>.json, in the format of
// launcher/control_file.h.
//
// The launcher (launcher/control_watcher.h) applies interval_ns within about a second; the job's Python
// processes (python/stepscope/_config.py ControlWatcher) apply detail at their next step.
//
// Callers: main.cc; `stepscope serve` (POST /api/runs/{id}/ctl applies the same request through
// ApplyControl). Threading: ApplyControl may run on any thread; files are written atomically.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "launcher/control_file.h"

namespace stepscope::cli {

struct CtlInvocation {
  std::string run;               // a job directory or one node directory in it
  std::string node;              // empty: every node of the job
  std::string interval;          // empty: unchanged
  std::string detailed_steps;    // "START:COUNT"; empty: unchanged
  std::string python_steps;
  std::string dataloader_steps;
  std::string gpu_steps;
};

// Validates the flag values; InvalidArgument (exit 2) naming the flag, also when none is given.
StatusOr<launcher::ControlRequest> BuildControlRequest(const CtlInvocation& invocation);

// The node directories `run` (job or node directory) designates, narrowed to `node` when not
// empty. NotFound when there is no such run or node.
StatusOr<std::vector<std::string>> FindControlTargets(const std::string& run, const std::string& node);

// Empty when the node's job is running; otherwise why not ("exited with code 0"), read from
// its manifest (and, for a launcher on this host, whether that process is still alive).
std::string WhyNotRunning(const std::string& node_dir);

// What one request did on each node of a run.
struct ControlOutcome {
  struct Written {
    std::string node;
    std::string node_dir;
    int64_t sequence = 0;  // <node_dir>/control/<sequence>.json
  };
  std::vector<Written> written;
  std::vector<std::pair<std::string, std::string>> skipped;  // (node, why it is not running)
};

// Writes `request` to every running node `invocation` designates (its run and node). NotFound:
// no such run or node; Unavailable: no designated node is running (the message says why);
// IoError: a control file could not be written.
StatusOr<ControlOutcome> ApplyControl(const CtlInvocation& invocation, const launcher::ControlRequest& request);

// The whole command; returns the exit code (0 written, 1 no such or ended run, 2 bad values).
int CtlCommand(const CtlInvocation& invocation);

}  // namespace stepscope::cli
