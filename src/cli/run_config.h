// The configuration of `stepscope run`: one model, filled from (in increasing precedence)
// defaults, a config file (TOML or JSON), STEPSCOPE_* environment variables and command-line
// flags, then validated once. Every value remembers where it came from, which the manifest
// records.
//
// Callers: the run command. Threading: plain data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace stepscope::cli {

// Where a setting's value came from, lowest precedence first.
enum class ConfigSource { kDefault, kFile, kEnvironment, kFlag };
const char* ConfigSourceName(ConfigSource source);

struct RunConfig {
  std::string out = "stepscope-runs";  // root directory of runs
  std::string job;                     // empty: <script>-<UTC timestamp>
  std::string node;                    // empty: the host name
  int64_t interval_ns = 500'000'000;   // system sampling interval
  std::map<std::string, ConfigSource> sources;  // key -> where its value came from
};

inline constexpr int64_t kMinIntervalNs = 10'000'000;
inline constexpr int64_t kMaxIntervalNs = 60'000'000'000;

// The keys a config file or STEPSCOPE_<KEY> may set.
const std::vector<std::string>& RunConfigKeys();

// Sets `key` from its text form, validating it. `origin` names the source for messages
// ("--interval", "STEPSCOPE_INTERVAL", "stepscope.toml").
Status SetRunConfigValue(RunConfig& config, const std::string& key, const std::string& value,
                         ConfigSource source, const std::string& origin);

// Applies a TOML (.toml) or JSON (.json) file: a flat table of the keys above.
Status ApplyRunConfigFile(RunConfig& config, const std::string& path);

// Applies STEPSCOPE_OUT, STEPSCOPE_JOB, STEPSCOPE_NODE, STEPSCOPE_INTERVAL when set.
Status ApplyRunConfigEnvironment(RunConfig& config, char** environ);

// A job or node name must be usable as a directory name.
Status ValidateName(const std::string& what, const std::string& name);

}  // namespace stepscope::cli
