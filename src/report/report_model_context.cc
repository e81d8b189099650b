#include "report/report_model_context.h"

#include "base/json_fields.h"

namespace stepscope::report {

const nlohmann::json* ReportContext::Rule(std::string_view name) const {
  if (rules == nullptr) return nullptr;
  const nlohmann::json* list = JsonField(*rules, "rules");
  if (list == nullptr || !list->is_array()) return nullptr;
  for (const nlohmann::json& entry : *list) {
    if (entry.is_object() && JsonString(entry, "Rule") == name) return &entry;
  }
  return nullptr;
}

nlohmann::json ReportContext::Details(std::string_view name) const {
  const nlohmann::json* entry = Rule(name);
  return entry == nullptr ? nlohmann::json::object() : JsonObject(*entry, "Details");
}

nlohmann::json ReportContext::StepscopeDetails(std::string_view name) const {
  const nlohmann::json* entry = Rule(name);
  return entry == nullptr ? nlohmann::json::object() : JsonObject(*entry, "StepscopeDetails");
}

bool ReportContext::HasGpuSeries() const {
  for (const analysis::SystemSeries& series : model->series()) {
    const std::string_view dimension = model->String(series.dimension);
    if ((dimension == "GPUUtilization" || dimension == "GPUMemoryUtilization") && !series.time_ns.empty()) return true;
  }
  return false;
}

std::string ReportContext::NoGpuReason() const {
  if (run_info == nullptr) return "";
  for (const nlohmann::json& node : JsonArray(*run_info, "nodes")) {
    const nlohmann::json gpu = JsonObject(JsonObject(node, "capabilities"), "gpu");
    std::string reason = JsonString(gpu, "reason");
    if (!reason.empty()) return reason;
  }
  return "";
}

nlohmann::json Unavailable(const std::string& why) { return {{"available", false}, {"why", why}}; }

std::string SourceDescription(const analysis::Model& model) {
  switch (model.source()) {
    case analysis::ModelSource::kStepscope: return "recorded by stepscope";
    case analysis::ModelSource::kSageMaker: return "imported from SageMaker profiler output";
    case analysis::ModelSource::kKineto: return "imported from PyTorch profiler traces";
  }
  return "imported";
}

}  // namespace stepscope::report
