#include "cli/run_config.h"

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/duration.h"
#include "base/file_system.h"

namespace stepscope::cli {
namespace {

std::string KnownKeys() {
  std::string keys;
  for (const std::string& key : RunConfigKeys()) keys += (keys.empty() ? "" : ", ") + key;
  return keys;
}

std::string ToUpper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* ConfigSourceName(ConfigSource source) {
  switch (source) {
    case ConfigSource::kDefault: return "default";
    case ConfigSource::kFile: return "config file";
    case ConfigSource::kEnvironment: return "environment";
    case ConfigSource::kFlag: return "flag";
  }
  return "default";
}

const std::vector<std::string>& RunConfigKeys() {
  static const std::vector<std::string> keys = {"out", "job", "node", "interval"};
  return keys;
}

Status ValidateName(const std::string& what, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos || name.size() > 200) {
    return InvalidArgumentError(what + " '" + name + "' cannot be a directory name; use letters, digits, '-', '_' or '.'");
  }
  return OkStatus();
}

Status SetRunConfigValue(RunConfig& config, const std::string& key, const std::string& value,
                         ConfigSource source, const std::string& origin) {
  if (key == "out") {
    if (value.empty()) return InvalidArgumentError(origin + ": the output directory must not be empty");
    config.out = value;
  } else if (key == "job") {
    STEPSCOPE_RETURN_IF_ERROR(ValidateName(origin + ": job name", value));
    config.job = value;
  } else if (key == "node") {
    STEPSCOPE_RETURN_IF_ERROR(ValidateName(origin + ": node id", value));
    config.node = value;
  } else if (key == "interval") {
    auto ns = ParseDurationNs(value);
    if (!ns.ok()) return InvalidArgumentError(origin + ": " + ns.status().message());
    if (*ns < kMinIntervalNs || *ns > kMaxIntervalNs) {
      return InvalidArgumentError(origin + ": interval " + value + " is out of range; use 10ms to 60s (e.g. 100ms, 500ms, 5s)");
    }
    config.interval_ns = *ns;
  } else {
    return InvalidArgumentError(origin + ": unknown setting '" + key + "'; known settings: " + KnownKeys());
  }
  config.sources[key] = source;
  return OkStatus();
}

Status ApplyRunConfigFile(RunConfig& config, const std::string& path) {
  LocalFileSystem fs;
  auto text = fs.ReadFile(path);
  if (!text.ok()) return InvalidArgumentError("config file: " + text.status().message());
  auto ends_with = [&](const char* suffix) {
    size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  std::vector<std::pair<std::string, std::string>> entries;
  if (ends_with(".json")) {
    auto json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object()) {
      return InvalidArgumentError("config file '" + path + "' is not a JSON object; see docs/user-guide.md");
    }
    for (auto& [key, value] : json.items()) {
      if (value.is_string()) entries.emplace_back(key, value.get<std::string>());
      else if (value.is_number()) entries.emplace_back(key, value.dump());
      else return InvalidArgumentError("config file '" + path + "': '" + key + "' must be a string or number");
    }
  } else if (ends_with(".toml")) {
    toml::parse_result parsed = toml::parse(*text, path);
    if (!parsed) {
      const auto& error = parsed.error();
      std::ostringstream message;
      message << "config file '" << path << "' line " << error.source().begin.line << ": " << error.description();
      return InvalidArgumentError(message.str());
    }
    for (auto& [key, node] : parsed.table()) {
      std::string name(key.str());
      if (auto s = node.value<std::string>()) entries.emplace_back(name, *s);
      else if (auto i = node.value<int64_t>()) entries.emplace_back(name, std::to_string(*i));
      else if (auto d = node.value<double>()) entries.emplace_back(name, std::to_string(*d));
      else return InvalidArgumentError("config file '" + path + "': '" + name + "' must be a string or number");
    }
  } else {
    return InvalidArgumentError("config file '" + path + "' must end in .toml or .json");
  }
  for (const auto& [key, value] : entries) {
    STEPSCOPE_RETURN_IF_ERROR(SetRunConfigValue(config, key, value, ConfigSource::kFile, "config file '" + path + "'"));
  }
  return OkStatus();
}

Status ApplyRunConfigEnvironment(RunConfig& config, char** environ) {
  for (const std::string& key : RunConfigKeys()) {
    std::string name = "STEPSCOPE_" + ToUpper(key);
    const char* value = nullptr;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      if (std::strncmp(*entry, name.c_str(), name.size()) == 0 && (*entry)[name.size()] == '=') {
        value = *entry + name.size() + 1;
      }
    }
    if (value != nullptr) STEPSCOPE_RETURN_IF_ERROR(SetRunConfigValue(config, key, value, ConfigSource::kEnvironment, name));
  }
  return OkStatus();
}

}  // namespace stepscope::cli
