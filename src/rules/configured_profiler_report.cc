#include "rules/configured_profiler_report.h"

#include "rules/builtin_rules.h"
#include "rules/right_sizing_rule.h"

namespace stepscope::rules {
namespace {

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t comma = text.find(',', begin);
    if (comma == std::string::npos) comma = text.size();
    std::string part = text.substr(begin, comma - begin);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) parts.push_back(part);
    begin = comma + 1;
  }
  return parts;
}

}  // namespace

StatusOr<std::unique_ptr<ProfilerReport>> MakeConfiguredProfilerReport(const std::string& only,
                                                                       const nlohmann::json& section,
                                                                       const std::vector<std::string>& overrides,
                                                                       const std::vector<InstanceType>* catalog) {
  STEPSCOPE_ASSIGN_OR_RETURN(auto report, ProfilerReport::Create(BuiltinRules(), SplitComma(only)));
  if (!section.is_null() && !section.empty()) {
    STEPSCOPE_RETURN_IF_ERROR(report->ApplyParameterObject(section, "rules"));
  }
  for (const std::string& assignment : overrides) {
    STEPSCOPE_RETURN_IF_ERROR(report->SetParameter(assignment));
  }
  if (catalog != nullptr) {
    for (const auto& rule : report->rules()) SetRightSizingCatalog(*rule, *catalog);  // RightSizing's only
  }
  return report;
}

}  // namespace stepscope::rules
