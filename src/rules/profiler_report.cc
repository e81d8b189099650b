#include "rules/profiler_report.h"

#include <sys/stat.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "base/file_system.h"

namespace stepscope::rules {
namespace {

constexpr std::string_view kScanIntervalParameter = "scan_interval_us";

bool HasData(const analysis::Model& model) {
  if (!model.events().empty()) return true;
  for (const analysis::SystemSeries& series : model.series()) {
    if (!series.time_ns.empty()) return true;
  }
  return false;
}

// A JSON parameter value as the text RuleParameters parses: strings as they are, numbers in
// their shortest round-trip form ("40", "0.2"), booleans as the reference's Python spells them.
StatusOr<std::string> ValueText(const nlohmann::json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return value.dump();
  if (value.is_boolean()) return std::string(value.get<bool>() ? "True" : "False");
  return InvalidArgumentError(where + ": expected a number or a string, got " + std::string(value.type_name()));
}

}  // namespace

std::string DumpJson(const nlohmann::json& document) {
  // Names in details come from the data; invalid UTF-8 is replaced instead of throwing.
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

StatusOr<std::unique_ptr<ProfilerReport>> ProfilerReport::Create(std::span<const RuleFactory> factories,
                                                                 const std::vector<std::string>& only) {
  for (const std::string& name : only) {
    bool known = false;
    for (const RuleFactory& factory : factories) known = known || factory.name == name;
    if (!known) {
      ProfilerReport empty({}, factories);
      return InvalidArgumentError("unknown rule '" + name + "'; known rules: " + empty.KnownRuleNames());
    }
  }
  std::vector<std::unique_ptr<Rule>> rules;
  for (const RuleFactory& factory : factories) {
    bool selected = only.empty();
    for (const std::string& name : only) selected = selected || factory.name == name;
    if (selected) rules.push_back(factory.make());
  }
  return std::make_unique<ProfilerReport>(std::move(rules), factories);
}

ProfilerReport::ProfilerReport(std::vector<std::unique_ptr<Rule>> rules, std::span<const RuleFactory> factories)
    : rules_(std::move(rules)), factories_(factories) {}

const RuleFactory* ProfilerReport::FindFactory(std::string_view rule) const {
  for (const RuleFactory& factory : factories_) {
    if (factory.name == rule) return &factory;
  }
  return nullptr;
}

Rule* ProfilerReport::FindRule(std::string_view rule) const {
  for (const auto& instance : rules_) {
    if (instance->name() == rule) return instance.get();
  }
  return nullptr;
}

std::string ProfilerReport::KnownRuleNames() const {
  std::vector<std::string_view> names;
  auto add = [&names](std::string_view name) {
    for (std::string_view known : names) {
      if (known == name) return;
    }
    names.push_back(name);
  };
  for (const auto& instance : rules_) add(instance->name());
  for (const RuleFactory& factory : factories_) add(factory.name);
  std::string text;
  for (std::string_view name : names) text += (text.empty() ? "" : ", ") + std::string(name);
  return text.empty() ? "none" : text;
}

Status ProfilerReport::SetParameter(std::string_view rule, std::string_view parameter, std::string_view value) {
  if (rule.empty() || rule == kDriverName) {
    if (parameter != kScanIntervalParameter) {
      return InvalidArgumentError(std::string(kDriverName) + "." + std::string(parameter) +
                                  ": no such parameter; ProfilerReport has scan_interval_us");
    }
    if (windows_evaluated_ > 0) {
      return InvalidArgumentError("ProfilerReport.scan_interval_us: cannot change once windows were evaluated");
    }
    int64_t interval_us = 0;
    const char* end = value.data() + value.size();
    auto [ptr, error] = std::from_chars(value.data(), end, interval_us);
    if (value.empty() || error != std::errc() || ptr != end || interval_us <= 0) {
      return InvalidArgumentError("ProfilerReport.scan_interval_us: '" + std::string(value) +
                                  "' is not a whole number of microseconds > 0");
    }
    // Windows are computed in ns: keep start + interval far from overflow.
    if (interval_us > std::numeric_limits<int64_t>::max() / 4000) {
      return InvalidArgumentError("ProfilerReport.scan_interval_us: " + std::string(value) + " is too large");
    }
    scan_interval_us_ = interval_us;
    return OkStatus();
  }
  if (Rule* instance = FindRule(rule); instance != nullptr) {
    return instance->parameters().Set(rule, parameter, value);
  }
  if (const RuleFactory* factory = FindFactory(rule); factory != nullptr) {
    // A known rule that is not selected: validate on a throwaway instance so a typo still fails.
    std::unique_ptr<Rule> scratch = factory->make();
    return scratch->parameters().Set(rule, parameter, value);
  }
  return InvalidArgumentError("unknown rule '" + std::string(rule) + "' in " + std::string(rule) + "." +
                              std::string(parameter) + "; known rules: " + KnownRuleNames());
}

Status ProfilerReport::SetParameter(std::string_view assignment) {
  const size_t equals = assignment.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return InvalidArgumentError("'" + std::string(assignment) +
                                "': expected RULE.PARAM=VALUE, e.g. CPUBottleneck.threshold=40");
  }
  const std::string_view key = assignment.substr(0, equals);
  const std::string_view value = assignment.substr(equals + 1);
  if (key == kScanIntervalParameter) return SetParameter(kDriverName, key, value);
  if (size_t dot = key.find('.'); dot != std::string_view::npos) {
    return SetParameter(key.substr(0, dot), key.substr(dot + 1), value);
  }
  // The reference's "<RuleName>_<param>": rule names have no '_' and parameter names may
  // ("CPUBottleneck_cpu_threshold"), so the first '_' ends the rule name.
  if (size_t underscore = key.find('_'); underscore != std::string_view::npos) {
    return SetParameter(key.substr(0, underscore), key.substr(underscore + 1), value);
  }
  return InvalidArgumentError("'" + std::string(assignment) +
                              "': expected RULE.PARAM=VALUE, e.g. CPUBottleneck.threshold=40");
}

Status ProfilerReport::ApplyParameterObject(const nlohmann::json& section, std::string_view origin) {
  const std::string where(origin);
  if (!section.is_object()) {
    return InvalidArgumentError(where + ": rule parameters must be an object like {\"CPUBottleneck\": {\"threshold\": 40}}");
  }
  for (const auto& [key, value] : section.items()) {
    if (value.is_object()) {
      for (const auto& [parameter, parameter_value] : value.items()) {
        STEPSCOPE_ASSIGN_OR_RETURN(std::string text, ValueText(parameter_value, where + ": " + key + "." + parameter));
        Status status = SetParameter(key, parameter, text);
        if (!status.ok()) return InvalidArgumentError(where + ": " + status.message());
      }
      continue;
    }
    STEPSCOPE_ASSIGN_OR_RETURN(std::string text, ValueText(value, where + ": " + key));
    Status status = SetParameter(key + "=" + text);
    if (!status.ok()) return InvalidArgumentError(where + ": " + status.message());
  }
  return OkStatus();
}

int64_t ProfilerReport::GridOriginNs(const analysis::Model& model) const {
  if (model.file_grid().known) return model.file_grid().origin_ns;
  // stepscope's own grid: the first timestamp floored to the interval (UTC), toward -infinity.
  const int64_t interval_ns = scan_interval_us_ * 1000;
  const int64_t first_ns = model.first_ns();
  const int64_t floored = first_ns / interval_ns * interval_ns;
  return floored > first_ns ? floored - interval_ns : floored;
}

int64_t ProfilerReport::WindowStartNs(const analysis::Model& model) const {
  const int64_t origin_ns = origin_set_ ? origin_ns_ : GridOriginNs(model);
  return origin_ns + static_cast<int64_t>(windows_evaluated_) * scan_interval_us_ * 1000;
}

bool ProfilerReport::HasWindowLeft(const analysis::Model& model) const {
  // The reference's grid stops before the window whose start reaches the latest file; stepscope's
  // own evaluates the tail: every window that starts at or before the last timestamp.
  if (model.file_grid().known) return WindowStartNs(model) < model.file_grid().stop_ns;
  return WindowStartNs(model) <= model.last_ns();
}

void ProfilerReport::EvaluateNextWindow(const analysis::Model& model) {
  if (!origin_set_) {
    origin_set_ = true;
    origin_ns_ = GridOriginNs(model);
    file_grid_ = model.file_grid().known;
  }
  Window window;
  window.model = &model;
  window.index = windows_evaluated_;
  window.start_ns = WindowStartNs(model);
  window.end_ns = window.start_ns + scan_interval_us_ * 1000;
  window.samples.reserve(model.series().size());
  for (const analysis::SystemSeries& series : model.series()) {
    window.samples.push_back(analysis::Model::SamplesIn(series, window.start_ns, window.end_ns));
  }
  window.events = model.EventsStartingIn(window.start_ns, window.end_ns);
  // Every rule sees every window, even after another one met its condition (sticky rules count
  // the windows after their first trigger).
  for (const auto& rule : rules_) {
    if (rule->Evaluate(window)) any_met_ = true;
  }
  ++windows_evaluated_;
}

size_t ProfilerReport::EvaluateAvailable(const analysis::Model& model) {
  if (finished_ || !HasData(model)) return 0;
  complete_until_ns_ = model.complete_until_ns();
  size_t evaluated = 0;
  while (WindowStartNs(model) + scan_interval_us_ * 1000 <= model.complete_until_ns() && HasWindowLeft(model)) {
    EvaluateNextWindow(model);
    ++evaluated;
  }
  return evaluated;
}

void ProfilerReport::Finish(const analysis::Model& model) {
  if (finished_) return;
  complete_until_ns_ = model.complete_until_ns();
  if (HasData(model)) {
    while (HasWindowLeft(model)) EvaluateNextWindow(model);
  }
  for (const auto& rule : rules_) rule->Finish(model);
  finished_ = true;
}

std::vector<RuleReport> ProfilerReport::Reports() const {
  std::vector<RuleReport> reports;
  reports.reserve(rules_.size());
  for (const auto& rule : rules_) reports.push_back(rule->Report());
  return reports;
}

std::string_view ProfilerReport::status() const {
  bool issues = any_met_;
  for (const auto& rule : rules_) {
    if (issues) break;
    const RuleReport report = rule->Report();
    issues = !report.reporting && report.triggered > 0;
  }
  return issues ? "IssuesFound" : "NoIssuesFound";
}

nlohmann::json ProfilerReport::RulesJson() const {
  nlohmann::json rules = nlohmann::json::array();
  for (const RuleReport& report : Reports()) rules.push_back(FullJson(report));
  return nlohmann::json{{"format_version", 1},
                        {"status", status()},
                        {"finished", finished_},
                        {"windows_evaluated", windows_evaluated_},
                        {"scan_interval_us", scan_interval_us_},
                        {"window_grid", WindowGridJson()},
                        {"complete_until_ns", complete_until_ns_},
                        {"rules", std::move(rules)}};
}

nlohmann::json ProfilerReport::WindowGridJson() const {
  if (!origin_set_) return nullptr;
  // What the report's rule section states about the windows (RULES.md §0).
  return {{"origin_ns", origin_ns_},
          {"kind", file_grid_ ? "sagemaker_files" : "floored"},
          {"tail_evaluated", !file_grid_},
          {"description",
           file_grid_ ? "windows as SageMaker Debugger's: from the first profiler file's timestamp, stopping before "
                        "the window that reaches the latest file (the data after it is not evaluated)"
                      : "windows from the run's first timestamp floored to the scan interval (UTC); the last, "
                        "partial window is evaluated too (SageMaker Debugger would skip it)"}};
}

std::vector<std::pair<std::string, nlohmann::json>> ProfilerReport::OutputFiles() const {
  std::vector<std::pair<std::string, nlohmann::json>> files;
  for (const RuleReport& report : Reports()) {
    nlohmann::json document = ReferenceJson(report);
    // The driver's own copy, as the reference's ProfilerReport writes one per sub-rule; the same
    // content, since stepscope's driver gives every rule its standalone results (RULES.md §13).
    files.emplace_back(std::string(kDriverName) + "/" + report.rule + ".json", document);
    files.emplace_back(report.rule + ".json", std::move(document));
  }
  files.emplace_back("rules.json", RulesJson());
  return files;
}

Status ProfilerReport::WriteOutputs(const std::string& dir) const {
  STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(dir + "/" + std::string(kDriverName)));
  for (const auto& [name, document] : OutputFiles()) {
    STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + name, DumpJson(document)));
  }
  return OkStatus();
}

std::string DefaultRulesOutputDir(const std::string& run) {
  struct stat info;
  if (stat(run.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    std::string dir = run;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir + "/rules";
  }
  const size_t slash = run.rfind('/');
  return slash == std::string::npos ? std::string("rules") : run.substr(0, slash + 1) + "rules";
}

}  // namespace stepscope::rules
