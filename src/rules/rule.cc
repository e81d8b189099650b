#include "rules/rule.h"

#include <charconv>
#include <cmath>
#include <string>

namespace stepscope::rules {
namespace {

bool ParseNumber(std::string_view text, double* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, *out);
  return error == std::errc() && ptr == end && std::isfinite(*out);
}

}  // namespace

void RuleParameters::Declare(std::string name, Kind kind, std::string default_text) {
  Parameter parameter{std::move(name), kind, std::move(default_text), 0};
  if (kind != Kind::kText) ParseNumber(parameter.text, &parameter.number);
  parameters_.push_back(std::move(parameter));
}

const RuleParameters::Parameter* RuleParameters::Find(std::string_view name) const {
  for (const Parameter& parameter : parameters_) {
    if (parameter.name == name) return &parameter;
  }
  return nullptr;
}

Status RuleParameters::Set(std::string_view rule, std::string_view name, std::string_view text) {
  auto* parameter = const_cast<Parameter*>(Find(name));
  const std::string where = std::string(rule) + "." + std::string(name);
  if (parameter == nullptr) {
    std::string known;
    for (const Parameter& p : parameters_) known += (known.empty() ? "" : ", ") + p.name;
    return InvalidArgumentError(where + ": no such parameter; " + std::string(rule) + " has " +
                                (known.empty() ? "none" : known));
  }
  if (parameter->kind == Kind::kText) {
    parameter->text = std::string(text);
    return OkStatus();
  }
  double value = 0;
  if (!ParseNumber(text, &value)) {
    return InvalidArgumentError(where + ": '" + std::string(text) + "' is not a number");
  }
  switch (parameter->kind) {
    case Kind::kPercent:
      if (value < 0 || value > 100) {
        return InvalidArgumentError(where + ": " + std::string(text) + " is not a percentage in [0, 100]");
      }
      break;
    case Kind::kCount:
      if (value <= 0 || value != std::floor(value)) {
        return InvalidArgumentError(where + ": " + std::string(text) + " is not a whole number > 0");
      }
      break;
    case Kind::kPositive:
      if (value <= 0) return InvalidArgumentError(where + ": " + std::string(text) + " must be > 0");
      break;
    case Kind::kNumber:
    case Kind::kText:
      break;
  }
  parameter->text = std::string(text);
  parameter->number = value;
  return OkStatus();
}

double RuleParameters::Number(std::string_view name) const {
  const Parameter* parameter = Find(name);
  return parameter == nullptr ? 0 : parameter->number;
}

const std::string& RuleParameters::Text(std::string_view name) const {
  static const std::string kNone;
  const Parameter* parameter = Find(name);
  return parameter == nullptr ? kNone : parameter->text;
}

std::string RuleParameters::ReportString() const {
  std::string text;
  auto line = [&text](const std::string& label, const std::string& value) {
    if (!text.empty()) text += '\n';
    text += label + ":" + value;
  };
  if (report_lines_.empty()) {
    for (const Parameter& parameter : parameters_) line(parameter.name, parameter.text);
  }
  for (const auto& [label, name] : report_lines_) line(label, Text(name));
  return text;
}

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "unknown";
}

nlohmann::json ArgJson(const analysis::Model& model, const analysis::EventArg& arg) {
  switch (arg.type) {
    case analysis::EventArg::Type::kInt: return arg.int_value;
    case analysis::EventArg::Type::kDouble: return arg.double_value;
    case analysis::EventArg::Type::kString: return std::string(model.String(arg.string_value));
    case analysis::EventArg::Type::kBool: return arg.int_value != 0;
  }
  return nullptr;
}

nlohmann::json ReferenceJson(const RuleReport& report) {
  return nlohmann::json{{"RuleTriggered", report.triggered},
                        {"Violations", report.violations},
                        {"Details", report.details},
                        {"Datapoints", report.datapoints},
                        {"RuleParameters", report.parameters}};
}

nlohmann::json FullJson(const RuleReport& report) {
  nlohmann::json json = ReferenceJson(report);
  json["Rule"] = report.rule;
  json["description"] = report.description;
  json["recommendation"] = report.recommendation;
  json["last_trigger_ns"] = report.last_trigger_ns;
  json["reporting"] = report.reporting;
  if (!report.stepscope_details.empty()) json["StepscopeDetails"] = report.stepscope_details;
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& finding : report.findings) {
    nlohmann::json evidence = nlohmann::json::array();
    for (const Evidence& item : finding.evidence) {
      nlohmann::json activity = nlohmann::json::array();
      for (const ActivityShare& share : item.top_activity) {
        activity.push_back({{"kind", share.kind}, {"name", share.name}, {"total_ns", share.total_ns},
                            {"share", share.share}});
      }
      nlohmann::json entry = {{"node", item.node}, {"start_ns", item.start_ns}, {"end_ns", item.end_ns},
                              {"step_phase", item.step_phase}, {"steps", item.steps}, {"what", item.what},
                              {"top_activity", activity}};
      // Only evidence about one rank or process has these (Straggler's ranks).
      if (item.rank >= 0) entry["rank"] = item.rank;
      if (item.pid >= 0) entry["pid"] = item.pid;
      evidence.push_back(std::move(entry));
    }
    findings.push_back({{"id", finding.id}, {"rule", finding.rule}, {"severity", SeverityName(finding.severity)},
                        {"title", finding.title}, {"recommendation", finding.recommendation},
                        {"next_step", finding.next_step},
                        {"estimated_saving", finding.estimated_saving >= 0 ? nlohmann::json(finding.estimated_saving)
                                                                           : nlohmann::json(nullptr)},
                        {"saving_basis", finding.saving_basis}, {"evidence", evidence}});
  }
  json["findings"] = findings;
  return json;
}

}  // namespace stepscope::rules
