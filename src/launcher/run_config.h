// The configuration of `stepscope run`: one model, filled from (in increasing precedence)
// defaults, a config file (TOML or JSON), STEPSCOPE_* environment variables and command-line
// flags, then validated as each value arrives, before anything starts. Every value remembers
// where it came from, which the manifest records; the resolved model is also written to
// <node>/config.json for the job's Python processes (python/stepscope/_config.py), which add
// keyword arguments on top.
//
// Keys (file key = STEPSCOPE_<KEY upper-cased> = flag):
//   out, job, node, interval                      scalars (--out, --job, --node, --interval)
//   torch                                         bool (--no-torch)
//   detail                                        the list of detail windows; "none" for no windows (--no-detail)
//   detailed_steps, python_steps, dataloader_steps "START:COUNT" or "none": replaces the windows of
//   gpu_steps                                     that kind (--detailed-steps, ...; gpu: every kind of
//                                                 GPU activity for those steps, no window by default)
//   python_profiler                               cprofile|sampling for every python window (--python-profiler)
//   rules                                         rule parameters for the online rules: a table
//                                                 {"CPUBottleneck": {"threshold": 40}, "scan_interval_us": ...}
//                                                 (merged over earlier layers), or one RULE.PARAM=VALUE
//                                                 (--rule, repeatable; applied after the tables)
//   instance, instance_count                      the instance type and how many of them the job
//                                                 runs on (--instance, --count), recorded in the
//                                                 node manifest for `stepscope compare`'s cost
//   gpu_tracing                                   whole_job (default), everything or off: what the
//                                                 CUPTI tracer injected into the job records
//                                                 (--gpu-tracing; gpu_tracing_injection.h)
//   prices                                        a price catalogue file (--prices; JSON or TOML,
//                                                 rules/run_cost.h), read when set so a bad one
//                                                 stops the run before the job starts; RightSizing
//                                                 and the end-of-run report use it
//   metrics_port, metrics_host                    the Prometheus endpoint (--metrics-port: a port,
//                                                 0 for any free one, or "off", the default;
//                                                 --metrics-host, default 127.0.0.1; docs/prometheus.md)
// Within one layer the keys apply in the order above, so `--no-detail --python-steps 3:1` keeps
// one window.
//
// Callers: the launcher (run_job.h), `stepscope ctl` (interval checks). Threading: plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "launcher/detail_window.h"
#include "rules/instance_catalog.h"

namespace stepscope::launcher {

// Where a setting's value came from, lowest precedence first. kKeywordArgument is the job's own
// layer: keyword arguments given in Python (job_run_config.h), above the launcher's.
enum class ConfigSource { kDefault, kFile, kEnvironment, kFlag, kKeywordArgument };
const char* ConfigSourceName(ConfigSource source);

// A detail window and the layer that put it in the list.
struct ConfiguredWindow {
  DetailWindow window;
  ConfigSource from = ConfigSource::kDefault;
};

std::vector<ConfiguredWindow> DefaultConfiguredWindows();

struct RunConfig {
  std::string out = "stepscope-runs";  // root directory of runs
  std::string job;                     // empty: <script>-<UTC timestamp>
  std::string node;                    // empty: the host name
  int64_t interval_ns = 500'000'000;   // system sampling interval
  bool torch = true;                   // automatic PyTorch instrumentation in the job
  std::vector<ConfiguredWindow> detail = DefaultConfiguredWindows();
  // When set, every python window uses this profiler (see ResolvedDetailWindows).
  std::optional<PythonProfiler> python_profiler;
  // The online rules' parameters (profiler_report.h): the merged `rules` tables, then the
  // RULE.PARAM=VALUE overrides in the order given.
  nlohmann::json rules = nlohmann::json::object();
  std::vector<std::string> rule_overrides;
  std::string instance;                // "p3.2xlarge"; empty when not given
  int32_t instance_count = 0;          // 0 when not given
  std::string gpu_tracing = "whole_job";  // whole_job | everything | off
  std::string prices;                  // the catalogue file as given; empty: the built-in example
  std::vector<rules::InstanceType> price_catalog;  // its entries, read once when `prices` was set
  int32_t metrics_port = -1;           // -1: no Prometheus endpoint; 0: any free port
  std::string metrics_host = "127.0.0.1";
  std::map<std::string, ConfigSource> sources;  // key -> where its value came from
};

inline constexpr int64_t kMinIntervalNs = 10'000'000;
inline constexpr int64_t kMaxIntervalNs = 60'000'000'000;
inline constexpr int kRunConfigSchemaVersion = 1;

// The keys a config file or STEPSCOPE_<KEY> may set, in the order they apply within a layer.
const std::vector<std::string>& RunConfigKeys();

// Sets `key` from its text form, validating it. `origin` names the source for messages
// ("--interval", "STEPSCOPE_INTERVAL", "config file 'stepscope.toml'"). `detail` takes a JSON
// array of windows or "none".
Status SetRunConfigValue(RunConfig& config, const std::string& key, const std::string& value,
                         ConfigSource source, const std::string& origin);

// Replaces the whole window list (a config file's [[detail]] tables, a JSON array).
Status SetRunConfigDetail(RunConfig& config, const nlohmann::json& windows, ConfigSource source,
                          const std::string& origin);

// Merges a `rules` table ({"CPUBottleneck": {"threshold": 40}}) over the earlier layers' and
// validates the result against the built-in rules; errors name `origin`, the rule and parameter.
Status SetRunConfigRules(RunConfig& config, const nlohmann::json& section, ConfigSource source,
                         const std::string& origin);
// Validates config.rules and config.rule_overrides as the online rules will apply them.
Status ValidateRunConfigRules(const RunConfig& config, const std::string& origin);

// Applies a TOML (.toml) or JSON (.json) file: a table of the keys above, `detail` an array of
// tables ([[detail]] in TOML).
Status ApplyRunConfigFile(RunConfig& config, const std::string& path);
// The same for the file's text (fuzzers, tests); `path` names it and its suffix picks the format.
Status ApplyRunConfigText(RunConfig& config, std::string_view text, const std::string& path);

// Applies the STEPSCOPE_<KEY> variables that are set.
Status ApplyRunConfigEnvironment(RunConfig& config, char** environ);

// Applies (key, text) pairs of one layer in key order; `origin_of(key)` names each in messages.
Status ApplyRunConfigValues(RunConfig& config, std::vector<std::pair<std::string, std::string>> values,
                            ConfigSource source, const std::function<std::string(const std::string&)>& origin_of);
// The same for flags; messages name the flag (--python-steps).
Status ApplyRunConfigFlags(RunConfig& config, std::vector<std::pair<std::string, std::string>> flag_values);

// The layers over the defaults, lowest precedence first.
struct RunConfigLayers {
  std::string config_file;                                       // "" for none
  char** environment = nullptr;                                  // holds STEPSCOPE_<KEY>; null for none
  std::vector<std::pair<std::string, std::string>> flag_values;  // (key, text) from flags
};

// The whole resolution: defaults < config file < environment < flags, each value validated as
// it arrives; the error is the first bad value's one-line message.
StatusOr<RunConfig> ResolveRunConfig(const RunConfigLayers& layers);

// The flag that sets `key`: "--interval", "--python-steps", "--no-detail" for detail.
std::string FlagForKey(const std::string& key);

// The windows the job will use: the configured list with python_profiler applied, normalised.
std::vector<DetailWindow> ResolvedDetailWindows(const RunConfig& config);

// The resolved configuration as written to <node>/config.json and read by
// stepscope._config.load_run_config() (job and node are the resolved names):
//   {"schema_version": 1, "out": str, "job": str, "node": str, "interval": "500ms",
//    "interval_ns": int, "torch": bool, "python_profiler": "cprofile"|"sampling"|null,
//    "detail": [normalised windows, detail_window.h], "sources": {key: "default"|"config file"|
//    "environment"|"flag"|"keyword argument"} for out, job, node, interval, torch,
//    python_profiler, detail}
nlohmann::json RunConfigToJson(const RunConfig& config, const std::string& job, const std::string& node);
// Its reader, for the job's processes (job_run_config.h): the values as the launcher resolved
// them, each window and source as written. `origin` names the file in messages.
StatusOr<RunConfig> RunConfigFromJson(const nlohmann::json& json, const std::string& origin);

// The manifest's config entries for torch, python_profiler and detail, in its {"value", "from"}
// shape; detail also lists each window's source in "windows_from".
nlohmann::json RunConfigManifestEntries(const RunConfig& config);

// A job or node name must be usable as a directory name.
Status ValidateName(const std::string& what, const std::string& name);

}  // namespace stepscope::launcher
