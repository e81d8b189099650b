// `stepscope run [options] -- CMD ARGS...`: runs CMD with the recorder active in it, samples
// system metrics for the job, writes the run directory and exits with CMD's exit code.
#pragma once

#include <string>
#include <vector>

#include "cli/run_config.h"

namespace stepscope::cli {

struct RunInvocation {
  RunConfig config;                 // defaults and flags already applied by the caller
  std::string config_file;          // --config, applied below the flags
  std::vector<std::pair<std::string, std::string>> flag_values;  // (key, text) from flags
  std::vector<std::string> command;
};

// Returns the process exit code: the job's, 128 + signal if it was killed, 2 for bad usage,
// 1 when the run could not be set up, 127 when the command cannot be executed.
int RunCommand(RunInvocation invocation);

}  // namespace stepscope::cli
