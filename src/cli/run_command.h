// `stepscope run [options] -- CMD ARGS...`: the command line's side of the launcher
// (launcher/run_job.h). Resolves the configuration from the flags main.cc parsed, runs the job
// and, once the run is final, writes its report and prints its summary.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace stepscope::cli {

struct RunInvocation {
  std::string config_file;          // --config, applied below the environment and the flags
  std::vector<std::pair<std::string, std::string>> flag_values;  // (key, text) from flags
  std::vector<std::string> command;
};

// Returns the process exit code: the job's, 128 + signal if it was killed, 2 for bad usage,
// 1 when the run could not be set up, 127 when the command cannot be executed.
int RunCommand(const RunInvocation& invocation);

}  // namespace stepscope::cli
