// The launcher: runs a job's command with the recorder active in it, samples system metrics
// for the job, applies live changes, evaluates the rules as the run grows, writes the run
// directory and returns the exit code the `stepscope run` process ends with. Everything
// `stepscope run` does after its arguments are parsed happens here, in this order:
//
//   claim <out>/<job>/<node> (run_directory_claim.h) -> system stream, config.json, Python
//   startup -> start the child (child_process.h) -> sampler, control watcher, online rules
//   -> wait for the child -> stop the watcher and the sampler -> compact every stream ->
//   final manifest -> the rules' final pass (and the job's, finished_outputs.h) -> the caller's
//   `finished_run` (reports, summary)
//
// Callers: the CLI's run command. Threading: the calling thread, which it holds until the job
// ended; installs the launcher's signal handlers (child_process.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "launcher/run_config.h"

namespace stepscope::launcher {

inline constexpr int kExitUsage = 2;
inline constexpr int kExitSetup = 1;
inline constexpr int kExitCannotExecute = 127;

// The run once this node's part is final (its manifest and rules written), and which reports
// are this launcher's to write (finished_outputs.h).
struct FinishedRun {
  std::string job_dir;   // <out>/<job>
  std::string node_dir;  // <out>/<job>/<node>
  bool node_report = false;  // <node>/report.html: a job of several nodes
  bool job_report = true;    // <job>/report.html: the job's only node, or the last to finish
  std::vector<std::string> unfinished_nodes;  // when not the last: the nodes still running
};
// Called once when the run is final. What it does (the reports, the terminal summary) cannot
// change the exit code.
using FinishedRunHandler = std::function<void(const FinishedRun& run)>;

// Runs `command` (argv; not empty) under `config` (resolved: ResolveRunConfig). Returns the
// job's exit code, 128 + signal if it was killed, kExitUsage for a bad job or node name,
// kExitSetup when the run could not be set up, kExitCannotExecute when the command cannot be
// executed. Problems are one line each on stderr, prefixed "stepscope run: ".
int RunJob(const RunConfig& config, const std::vector<std::string>& command, const FinishedRunHandler& finished_run);

}  // namespace stepscope::launcher
