#include "launcher/run_config.h"

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/duration.h"
#include "base/file_system.h"
#include "base/toml_json.h"
#include "rules/configured_profiler_report.h"
#include "rules/run_cost.h"

namespace stepscope::launcher {
namespace {

// nlohmann's document builder that keeps what the parser says and where it stopped; the plain
// non-throwing parse only says that the text is malformed.
class LocatingJsonParser : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  explicit LocatingJsonParser(nlohmann::json& result) : json_sax_dom_parser(result, /*allow_exceptions_=*/false) {}
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& error) {
    // "[json.exception.parse_error.101] parse error at line 4, column 0: syntax error ..." -> "syntax error ..."
    std::string_view message = error.what();
    if (size_t at = message.find("parse error"); at != std::string_view::npos) {
      if (size_t colon = message.find(": ", at); colon != std::string_view::npos) message.remove_prefix(colon + 2);
    }
    description_ = message;
    position_ = position;
    return json_sax_dom_parser::parse_error(position, last_token, error);
  }
  const std::string& description() const { return description_; }
  size_t position() const { return position_; }

 private:
  std::string description_;
  size_t position_ = 0;
};

// "line 3, column 14" (1-based) of the last character the parser read before `position`,
// whitespace aside: nlohmann's own position counts the newline that ended a bad literal, so it
// names the start of the next line instead of the mistake.
std::string LineAndColumn(std::string_view text, size_t position) {
  size_t end = std::min(position, text.size());
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  const size_t at = end == 0 ? 0 : end - 1;
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
  const size_t newline = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  const size_t column = newline == std::string_view::npos ? at + 1 : at - newline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string KnownKeys() {
  std::string keys;
  for (const std::string& key : RunConfigKeys()) keys += (keys.empty() ? "" : ", ") + key;
  return keys;
}

std::string ToLower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string ToUpper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool IsNone(const std::string& text) {
  const std::string lower = ToLower(text);
  return lower == "none" || lower == "off";
}

std::optional<bool> ParseBool(const std::string& text) {
  const std::string lower = ToLower(text);
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

std::optional<DetailKind> KindOfStepsKey(const std::string& key) {
  if (key == "detailed_steps") return DetailKind::kOperators;
  if (key == "python_steps") return DetailKind::kPython;
  if (key == "dataloader_steps") return DetailKind::kDataloader;
  if (key == "gpu_steps") return DetailKind::kGpu;
  return std::nullopt;
}

// Drops every window of `kind` and puts `window` (if any) where the first of them was, so the
// list keeps its order when one kind's window is replaced.
void ReplaceWindowsOfKind(RunConfig& config, DetailKind kind, const std::optional<DetailWindow>& window,
                          ConfigSource source) {
  std::vector<ConfiguredWindow> kept;
  bool placed = false;
  for (ConfiguredWindow& configured : config.detail) {
    if (configured.window.kind != kind) {
      kept.push_back(std::move(configured));
    } else if (!placed && window) {
      kept.push_back({*window, source});
      placed = true;
    }
  }
  if (!placed && window) kept.push_back({*window, source});
  config.detail = std::move(kept);
}

const char* SourceName(const RunConfig& config, const std::string& key) {
  auto it = config.sources.find(key);
  return ConfigSourceName(it == config.sources.end() ? ConfigSource::kDefault : it->second);
}

nlohmann::json ProfilerJson(const RunConfig& config) {
  return config.python_profiler ? nlohmann::json(PythonProfilerName(*config.python_profiler)) : nlohmann::json(nullptr);
}

}  // namespace

const char* ConfigSourceName(ConfigSource source) {
  switch (source) {
    case ConfigSource::kDefault: return "default";
    case ConfigSource::kFile: return "config file";
    case ConfigSource::kEnvironment: return "environment";
    case ConfigSource::kFlag: return "flag";
    case ConfigSource::kKeywordArgument: return "keyword argument";
  }
  return "default";
}

const std::vector<std::string>& RunConfigKeys() {
  // The order matters within a layer: `detail` replaces the list before the per-kind keys edit
  // it, and python_profiler is applied last (ResolvedDetailWindows).
  static const std::vector<std::string> keys = {
      "out",    "job",            "node",         "interval",         "torch",
      "detail", "detailed_steps", "python_steps", "dataloader_steps", "gpu_steps", "python_profiler", "rules",
      "instance", "instance_count", "gpu_tracing", "prices", "metrics_port", "metrics_host"};
  return keys;
}

std::vector<ConfiguredWindow> DefaultConfiguredWindows() {
  std::vector<ConfiguredWindow> windows;
  for (DetailWindow& window : DefaultDetailWindows()) windows.push_back({std::move(window), ConfigSource::kDefault});
  return windows;
}

std::string FlagForKey(const std::string& key) {
  if (key == "detail") return "--no-detail";
  if (key == "torch") return "--no-torch";
  if (key == "rules") return "--rule";
  if (key == "instance_count") return "--count";
  std::string flag = "--" + key;
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
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
  } else if (key == "torch") {
    std::optional<bool> on = ParseBool(value);
    if (!on) return InvalidArgumentError(origin + ": torch must be true or false (1 or 0), not '" + value + "'");
    config.torch = *on;
  } else if (key == "detail") {
    if (IsNone(value)) {
      config.detail.clear();
    } else {
      auto windows = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
      if (windows.is_discarded()) {
        return InvalidArgumentError(origin + ": detail must be a JSON list of windows or none, e.g. "
                                    "[{\"kind\": \"python\", \"start_step\": 9, \"num_steps\": 3}]");
      }
      return SetRunConfigDetail(config, windows, source, origin);
    }
  } else if (std::optional<DetailKind> kind = KindOfStepsKey(key)) {
    std::optional<DetailWindow> window;
    if (!IsNone(value)) {
      auto parsed = ParseStepWindow(*kind, value, origin);
      if (!parsed.ok()) return parsed.status();
      window = std::move(*parsed);
    }
    ReplaceWindowsOfKind(config, *kind, window, source);
    config.sources["detail"] = source;
  } else if (key == "python_profiler") {
    auto profiler = ParsePythonProfiler(value, origin);
    if (!profiler.ok()) return profiler.status();
    config.python_profiler = *profiler;
  } else if (key == "rules") {
    if (!value.empty() && value.front() == '{') {
      auto section = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
      if (section.is_discarded()) {
        return InvalidArgumentError(origin + ": rules must be RULE.PARAM=VALUE or a JSON object like "
                                    "{\"CPUBottleneck\": {\"threshold\": 40}}");
      }
      return SetRunConfigRules(config, section, source, origin);
    }
    RunConfig candidate = config;
    candidate.rule_overrides.push_back(value);
    STEPSCOPE_RETURN_IF_ERROR(ValidateRunConfigRules(candidate, origin));
    config.rule_overrides = std::move(candidate.rule_overrides);
  } else if (key == "instance") {
    // A catalogue name (docs/compare.md); unknown types are recorded, compare says it cannot price them.
    const bool usable = !value.empty() && value.size() <= 64 &&
                        std::all_of(value.begin(), value.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
                        });
    if (!usable) return InvalidArgumentError(origin + ": instance type '" + value + "' is not a name like p3.2xlarge");
    config.instance = value;
  } else if (key == "instance_count") {
    char* end = nullptr;
    const long long count = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || count < 1 || count > 100000) {
      return InvalidArgumentError(origin + ": instance count must be a whole number from 1 to 100000, not '" + value + "'");
    }
    config.instance_count = static_cast<int32_t>(count);
  } else if (key == "gpu_tracing") {
    std::string mode = value;
    std::replace(mode.begin(), mode.end(), '-', '_');
    if (mode != "whole_job" && mode != "everything" && mode != "off") {
      return InvalidArgumentError(origin + ": gpu_tracing must be whole-job, everything or off, not '" + value + "'");
    }
    config.gpu_tracing = mode;
  } else if (key == "prices") {
    // Read now, not when the job ends: a catalogue that cannot be used must stop the run before
    // the job starts, and the file may change while the job runs.
    auto catalog = rules::LoadPriceCatalog(value);
    if (!catalog.ok()) return InvalidArgumentError(origin + ": " + catalog.status().message());
    config.prices = value;
    config.price_catalog = std::move(*catalog);
  } else if (key == "metrics_port") {
    char* end = nullptr;
    const long long port = std::strtoll(value.c_str(), &end, 10);
    if (value == "off") {
      config.metrics_port = -1;
    } else if (value.empty() || *end != '\0' || port < 0 || port > 65535) {
      return InvalidArgumentError(origin + ": metrics port must be a port number (0 for any free one) or off, not '" +
                                  value + "'");
    } else {
      config.metrics_port = static_cast<int32_t>(port);
    }
  } else if (key == "metrics_host") {
    if (value.empty() || value.size() > 255) return InvalidArgumentError(origin + ": metrics host must be an address");
    config.metrics_host = value;
  } else {
    return InvalidArgumentError(origin + ": unknown setting '" + key + "'; known settings: " + KnownKeys());
  }
  config.sources[key] = source;
  return OkStatus();
}

Status SetRunConfigDetail(RunConfig& config, const nlohmann::json& windows, ConfigSource source,
                          const std::string& origin) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<DetailWindow> parsed, DetailWindowsFromJson(windows, origin));
  config.detail.clear();
  for (DetailWindow& window : parsed) config.detail.push_back({std::move(window), source});
  config.sources["detail"] = source;
  return OkStatus();
}

Status ValidateRunConfigRules(const RunConfig& config, const std::string& origin) {
  // The same path the run's online rules take, on throwaway rule objects.
  auto report = rules::MakeConfiguredProfilerReport("", config.rules, config.rule_overrides);
  if (!report.ok()) return InvalidArgumentError(origin + ": " + report.status().message());
  return OkStatus();
}

Status SetRunConfigRules(RunConfig& config, const nlohmann::json& section, ConfigSource source,
                         const std::string& origin) {
  if (!section.is_object()) {
    return InvalidArgumentError(origin + ": rules must be a table like [rules.CPUBottleneck] threshold = 40");
  }
  RunConfig candidate = config;
  // A later layer changes only the parameters it names.
  candidate.rules.merge_patch(section);
  STEPSCOPE_RETURN_IF_ERROR(ValidateRunConfigRules(candidate, origin));
  config.rules = std::move(candidate.rules);
  config.sources["rules"] = source;
  return OkStatus();
}

Status ApplyRunConfigFile(RunConfig& config, const std::string& path) {
  LocalFileSystem fs;
  auto text = fs.ReadFile(path);
  if (!text.ok()) return InvalidArgumentError("config file: " + text.status().message());
  return ApplyRunConfigText(config, *text, path);
}

namespace {

// The text of a config file reaches messages (the TOML parser quotes the character it saw, keys
// are echoed), and a message must stay one line: control characters become escapes.
Status OneLine(Status status) {
  if (status.ok() || std::none_of(status.message().begin(), status.message().end(),
                                  [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
    return status;
  }
  std::string message;
  for (char c : status.message()) {
    if (c == '\n') message += "\\n";
    else if (c == '\r') message += "\\r";
    else if (c == '\t') message += "\\t";
    else if (static_cast<unsigned char>(c) >= 0x20) message += c;
    else {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      message += escape;
    }
  }
  return Status(status.code(), std::move(message));
}

Status ApplyRunConfigTable(RunConfig& config, std::string_view text, const std::string& path) {
  auto ends_with = [&](const char* suffix) {
    size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  nlohmann::json table;
  if (ends_with(".json")) {
    LocatingJsonParser parser(table);
    if (!nlohmann::json::sax_parse(text, &parser)) {
      return InvalidArgumentError("config file '" + path + "' is not valid JSON at " +
                                  LineAndColumn(text, parser.position()) + ": " + parser.description() +
                                  "; fix it there (docs/user-guide.md lists the settings)");
    }
    if (!table.is_object()) {
      return InvalidArgumentError("config file '" + path + "' is not a JSON object (it holds " +
                                  (table.is_array() ? "an " : "a ") + table.type_name() +
                                  "); write an object of settings, see docs/user-guide.md");
    }
  } else if (ends_with(".toml")) {
    toml::parse_result parsed = toml::parse(text, path);
    if (!parsed) {
      const auto& error = parsed.error();
      std::ostringstream message;
      message << "config file '" << path << "' line " << error.source().begin.line << ": " << error.description();
      return InvalidArgumentError(message.str());
    }
    table = TomlToJson(parsed.table());
  } else {
    return InvalidArgumentError("config file '" + path + "' must end in .toml or .json");
  }
  const std::string origin = "config file '" + path + "'";
  for (const auto& [key, value] : table.items()) {
    const auto& keys = RunConfigKeys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return InvalidArgumentError(origin + ": unknown setting '" + key + "'; known settings: " + KnownKeys());
    }
  }
  for (const std::string& key : RunConfigKeys()) {
    auto it = table.find(key);
    if (it == table.end()) continue;
    const nlohmann::json& value = *it;
    if (key == "detail" && value.is_array()) {
      STEPSCOPE_RETURN_IF_ERROR(SetRunConfigDetail(config, value, ConfigSource::kFile, origin));
      continue;
    }
    if (key == "rules" && value.is_object()) {
      STEPSCOPE_RETURN_IF_ERROR(SetRunConfigRules(config, value, ConfigSource::kFile, origin));
      continue;
    }
    std::string text_value;
    if (value.is_string()) text_value = value.get<std::string>();
    else if (value.is_number()) text_value = value.dump();
    else if (value.is_boolean()) text_value = value.get<bool>() ? "true" : "false";
    else if (key == "detail") return InvalidArgumentError(origin + ": detail must be a list of windows ([[detail]] tables) or \"none\"");
    else return InvalidArgumentError(origin + ": '" + key + "' must be a string or number");
    STEPSCOPE_RETURN_IF_ERROR(SetRunConfigValue(config, key, text_value, ConfigSource::kFile, origin));
  }
  return OkStatus();
}

}  // namespace

Status ApplyRunConfigText(RunConfig& config, std::string_view text, const std::string& path) {
  return OneLine(ApplyRunConfigTable(config, text, path));
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

Status ApplyRunConfigValues(RunConfig& config, std::vector<std::pair<std::string, std::string>> values,
                            ConfigSource source, const std::function<std::string(const std::string&)>& origin_of) {
  const auto& keys = RunConfigKeys();
  auto rank = [&](const std::string& key) { return std::find(keys.begin(), keys.end(), key) - keys.begin(); };
  std::stable_sort(values.begin(), values.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  for (const auto& [key, value] : values) {
    STEPSCOPE_RETURN_IF_ERROR(SetRunConfigValue(config, key, value, source, origin_of(key)));
  }
  return OkStatus();
}

Status ApplyRunConfigFlags(RunConfig& config, std::vector<std::pair<std::string, std::string>> flag_values) {
  return ApplyRunConfigValues(config, std::move(flag_values), ConfigSource::kFlag, FlagForKey);
}

StatusOr<RunConfig> ResolveRunConfig(const RunConfigLayers& layers) {
  RunConfig config;
  if (!layers.config_file.empty()) STEPSCOPE_RETURN_IF_ERROR(ApplyRunConfigFile(config, layers.config_file));
  STEPSCOPE_RETURN_IF_ERROR(ApplyRunConfigEnvironment(config, layers.environment));
  STEPSCOPE_RETURN_IF_ERROR(ApplyRunConfigFlags(config, layers.flag_values));
  return config;
}

std::vector<DetailWindow> ResolvedDetailWindows(const RunConfig& config) {
  std::vector<DetailWindow> windows;
  for (const ConfiguredWindow& configured : config.detail) {
    DetailWindow window = configured.window;
    if (window.kind == DetailKind::kPython && config.python_profiler) {
      // A profiler chosen for all python windows overrides theirs; a sampling profiler has no timer.
      if (window.profiler != config.python_profiler) window.timer.reset();
      window.profiler = config.python_profiler;
    }
    windows.push_back(NormalizeDetailWindow(std::move(window)));
  }
  return windows;
}

nlohmann::json RunConfigToJson(const RunConfig& config, const std::string& job, const std::string& node) {
  nlohmann::json sources = nlohmann::json::object();
  for (const char* key : {"out", "job", "node", "interval", "torch", "python_profiler", "detail"}) {
    sources[key] = SourceName(config, key);
  }
  return {
      {"schema_version", kRunConfigSchemaVersion},
      {"out", config.out},
      {"job", job},
      {"node", node},
      {"interval", FormatDurationNs(config.interval_ns)},
      {"interval_ns", config.interval_ns},
      {"torch", config.torch},
      {"python_profiler", ProfilerJson(config)},
      {"detail", DetailWindowsToJson(ResolvedDetailWindows(config))},
      {"sources", sources},
  };
}

StatusOr<RunConfig> RunConfigFromJson(const nlohmann::json& json, const std::string& origin) {
  const std::string hint = "; it is written by `stepscope run`";
  if (!json.is_object() || !json.contains("schema_version")) {
    return InvalidArgumentError(origin + ": not a stepscope run config" + hint);
  }
  const nlohmann::json& schema = json["schema_version"];
  if (!schema.is_number_integer() || schema.get<int64_t>() < 1) {
    return InvalidArgumentError(origin + ": schema_version must be a whole number from 1" + hint);
  }
  if (schema.get<int64_t>() > kRunConfigSchemaVersion) {
    return InvalidArgumentError(origin + ": written by a newer stepscope (schema " + schema.dump() +
                                "); run the job with the stepscope that launched it");
  }
  RunConfig config;
  // Each key is optional (the defaults stand in) but must have its type when present.
  auto text = [&](const char* key, std::string& field) -> Status {
    auto it = json.find(key);
    if (it == json.end() || it->is_null()) return OkStatus();
    if (!it->is_string()) return InvalidArgumentError(origin + ": " + key + " must be a string" + hint);
    field = it->get<std::string>();
    return OkStatus();
  };
  STEPSCOPE_RETURN_IF_ERROR(text("out", config.out));
  STEPSCOPE_RETURN_IF_ERROR(text("job", config.job));
  STEPSCOPE_RETURN_IF_ERROR(text("node", config.node));
  if (auto it = json.find("interval_ns"); it != json.end() && !it->is_null()) {
    if (!it->is_number_integer()) return InvalidArgumentError(origin + ": interval_ns must be a whole number" + hint);
    config.interval_ns = it->get<int64_t>();
  }
  if (auto it = json.find("torch"); it != json.end() && !it->is_null()) {
    if (!it->is_boolean()) return InvalidArgumentError(origin + ": torch must be true or false" + hint);
    config.torch = it->get<bool>();
  }
  if (auto it = json.find("python_profiler"); it != json.end() && !it->is_null()) {
    std::string name = it->is_string() ? it->get<std::string>() : it->dump();
    STEPSCOPE_ASSIGN_OR_RETURN(config.python_profiler, ParsePythonProfiler(name, origin));
  }
  std::map<std::string, ConfigSource> sources;
  if (auto it = json.find("sources"); it != json.end() && it->is_object()) {
    for (const auto& [key, name] : it->items()) {
      for (ConfigSource source : {ConfigSource::kDefault, ConfigSource::kFile, ConfigSource::kEnvironment,
                                  ConfigSource::kFlag, ConfigSource::kKeywordArgument}) {
        if (name.is_string() && name.get<std::string>() == ConfigSourceName(source)) sources[key] = source;
      }
    }
  }
  auto detail = json.find("detail");
  if (detail == json.end()) return InvalidArgumentError(origin + ": not a stepscope run config (no detail)" + hint);
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<DetailWindow> windows, DetailWindowsFromJson(*detail, origin));
  const ConfigSource detail_from = sources.count("detail") ? sources["detail"] : ConfigSource::kDefault;
  config.detail.clear();
  for (DetailWindow& window : windows) config.detail.push_back({std::move(window), detail_from});
  config.sources = std::move(sources);
  return config;
}

nlohmann::json RunConfigManifestEntries(const RunConfig& config) {
  nlohmann::json windows_from = nlohmann::json::array();
  for (const ConfiguredWindow& configured : config.detail) windows_from.push_back(ConfigSourceName(configured.from));
  return {
      {"torch", {{"value", config.torch}, {"from", SourceName(config, "torch")}}},
      {"gpu_tracing", {{"value", config.gpu_tracing}, {"from", SourceName(config, "gpu_tracing")}}},
      {"python_profiler", {{"value", ProfilerJson(config)}, {"from", SourceName(config, "python_profiler")}}},
      {"detail",
       {{"value", DetailWindowsToJson(ResolvedDetailWindows(config))},
        {"from", SourceName(config, "detail")},
        {"windows_from", windows_from}}},
  };
}

Status ValidateName(const std::string& what, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos || name.size() > 200) {
    return InvalidArgumentError(what + " '" + name + "' cannot be a directory name; use letters, digits, '-', '_' or '.'");
  }
  return OkStatus();
}

}  // namespace stepscope::launcher
