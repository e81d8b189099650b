// MemoryNearCapacity (RULES.md §native): a GPU's memory (GPUMemoryUtilization) or the host's
// memory (MemoryUsedPercent) peaked above `threshold_pct` % of capacity: the job is close to an
// out-of-memory failure, and a larger batch or model will not fit.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "rules/builtin_rules.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

struct Peak {
  double value = -1;
  int64_t time_ns = 0;
  int64_t samples = 0;
};

class MemoryNearCapacityRule final : public Rule {
 public:
  MemoryNearCapacityRule() { parameters_.Declare("threshold_pct", RuleParameters::Kind::kPercent, "90"); }
  std::string_view name() const override { return "MemoryNearCapacity"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    for (size_t s = 0; s < model.series().size() && s < window.samples.size(); ++s) {
      const analysis::SystemSeries& series = model.series()[s];
      const std::string_view dimension = model.String(series.dimension);
      const std::string_view series_name = model.String(series.name);
      if (dimension != "GPUMemoryUtilization" && series_name != "MemoryUsedPercent") continue;
      Peak& peak = peaks_[{series.node, std::string(series_name)}];
      for (size_t i = window.samples[s].first; i < window.samples[s].second; ++i) {
        ++peak.samples;
        if (series.value[i] > peak.value) {
          peak.value = series.value[i];
          peak.time_ns = series.time_ns[i];
        }
      }
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = std::string(name());
    report.description = "Checks whether GPU or host memory came close to its capacity.";
    report.recommendation = "Leave headroom: a smaller batch with gradient accumulation, mixed precision, "
                            "activation checkpointing, or a device with more memory.";
    report.parameters = parameters_.ReportString();
    const double threshold = parameters_.Number("threshold_pct");
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, peak] : peaks_) {
      const auto& [node, device] = key;
      const std::string node_name = node_names_(node);
      report.datapoints += peak.samples;
      details[node_name][device] = {{"peak_pct", peak.value}, {"peak_time_ns", peak.time_ns}};
      if (peak.value <= threshold) continue;
      ++report.violations;
      ++report.triggered;
      report.last_trigger_ns = std::max(report.last_trigger_ns, peak.time_ns);
      const bool host = device == "MemoryUsedPercent";
      Finding finding;
      finding.id = "MemoryNearCapacity/" + node_name + "/" + device;
      finding.rule = report.rule;
      finding.severity = peak.value >= 98 ? Severity::kCritical : Severity::kWarning;
      const std::string what = host ? "host memory" : device + " memory";
      char value[32];
      std::snprintf(value, sizeof(value), "%.1f %%", peak.value);
      finding.title = what + " on " + node_name + " peaked at " + value + " of capacity";
      finding.recommendation =
          host ? "Reduce host memory: fewer DataLoader workers or a smaller prefetch_factor, datasets read lazily "
                 "instead of loaded whole, or an instance with more memory."
               : "Reduce device memory before it fails: a smaller batch with gradient accumulation, mixed precision "
                 "(torch.autocast), activation checkpointing, or a GPU with more memory.";
      finding.next_step = "Look at the GPU memory timeline around the peak in the report.";
      Evidence evidence;
      evidence.node = node_name;
      evidence.start_ns = evidence.end_ns = peak.time_ns;
      evidence.what = what + " at " + value + " (threshold " + parameters_.Text("threshold_pct") + " %)";
      finding.evidence.push_back(std::move(evidence));
      report.findings.push_back(std::move(finding));
    }
    report.details = std::move(details);
    return report;
  }

 private:
  std::map<std::tuple<uint32_t, std::string>, Peak> peaks_;
  NodeNames node_names_;
};

}  // namespace

std::unique_ptr<Rule> MakeMemoryNearCapacityRule() { return std::make_unique<MemoryNearCapacityRule>(); }

}  // namespace stepscope::rules
