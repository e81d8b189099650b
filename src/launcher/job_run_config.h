// The run configuration as a job's Python process resolves it (stepscope._config,
// through stepscope._core): the launcher's model, read or resolved the launcher's way, with the
// job's keyword arguments as one more layer on top.
//
//   STEPSCOPE_CONFIG names the launcher's <node>/config.json (a document with schema_version):
//     its values as `stepscope run` resolved them (defaults < file < environment < flags); the
//     environment is not read again.
//   STEPSCOPE_CONFIG names another file (stepscope.toml or .json, as `stepscope run --config`
//     takes it), or is not set (a script that calls stepscope.start() itself):
//     defaults < that file < STEPSCOPE_* environment, exactly as the launcher resolves them.
//   Then the keyword arguments (JobOverrideKeys only), in key order like flags.
//
// Callers: python/src/config_binding.cc. Plain functions, no threads.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace stepscope::launcher {

// The settings a job's keyword arguments may change, in the order they apply.
const std::vector<std::string>& JobOverrideKeys();

struct JobRunConfigRequest {
  std::string config_path;       // the value of STEPSCOPE_CONFIG; "" when not set
  char** environment = nullptr;  // holds STEPSCOPE_<KEY>; null for none
  std::vector<std::pair<std::string, std::string>> overrides;  // (key, text) keyword arguments
};

// The resolved configuration in the shape of <node>/config.json (RunConfigToJson), with
// "keyword argument" as the source of what an override set. InvalidArgument with one line that
// names the file, variable or keyword argument and the bad value.
StatusOr<nlohmann::json> ResolveJobRunConfig(const JobRunConfigRequest& request);

}  // namespace stepscope::launcher
