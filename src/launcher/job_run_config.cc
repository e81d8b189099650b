#include "launcher/job_run_config.h"

#include <algorithm>

#include "base/file_system.h"
#include "launcher/run_config.h"

namespace stepscope::launcher {
namespace {

// The launcher's config.json carries schema_version, a key no config file may hold (it is not a
// setting), so a document with it is the launcher's resolution and anything else a config
// file. Returns that document, or a discarded value for a config file.
nlohmann::json LaunchersConfig(const std::string& path, const std::string& text) {
  if (path.size() < 5 || path.compare(path.size() - 5, 5, ".json") != 0) return nlohmann::json::value_t::discarded;
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("schema_version")) return nlohmann::json::value_t::discarded;
  return json;
}

std::string OverrideKeyList() {
  std::string keys;
  for (const std::string& key : JobOverrideKeys()) keys += (keys.empty() ? "" : ", ") + key;
  return keys;
}

}  // namespace

const std::vector<std::string>& JobOverrideKeys() {
  // The job decides what it instruments; where and how often the launcher samples is not its call.
  static const std::vector<std::string> keys = {"torch", "detail", "detailed_steps", "python_steps",
                                                "dataloader_steps", "gpu_steps", "python_profiler"};
  return keys;
}

StatusOr<nlohmann::json> ResolveJobRunConfig(const JobRunConfigRequest& request) {
  for (const auto& [key, value] : request.overrides) {
    const auto& keys = JobOverrideKeys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return InvalidArgumentError("keyword argument '" + key + "': unknown setting; settings a Python process may "
                                  "change: " + OverrideKeyList());
    }
  }
  RunConfig config;
  bool resolved_by_launcher = false;
  if (!request.config_path.empty()) {
    LocalFileSystem fs;
    auto text = fs.ReadFile(request.config_path);
    if (!text.ok()) {
      return InvalidArgumentError("STEPSCOPE_CONFIG '" + request.config_path + "' cannot be read (" +
                                  text.status().message() + "); name the config.json of `stepscope run` or a "
                                  "config file, or unset it");
    }
    if (nlohmann::json written = LaunchersConfig(request.config_path, *text); !written.is_discarded()) {
      STEPSCOPE_ASSIGN_OR_RETURN(config, RunConfigFromJson(written, "STEPSCOPE_CONFIG '" + request.config_path + "'"));
      resolved_by_launcher = true;
    } else {
      STEPSCOPE_RETURN_IF_ERROR(ApplyRunConfigText(config, *text, request.config_path));
    }
  }
  if (!resolved_by_launcher) STEPSCOPE_RETURN_IF_ERROR(ApplyRunConfigEnvironment(config, request.environment));
  STEPSCOPE_RETURN_IF_ERROR(ApplyRunConfigValues(config, request.overrides, ConfigSource::kKeywordArgument,
                                                 [](const std::string& key) { return "keyword argument " + key; }));
  return RunConfigToJson(config, config.job, config.node);
}

}  // namespace stepscope::launcher
