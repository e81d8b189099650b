// RightSizing: what the job used, and the cheapest catalogue choice that still fits it.
//
// Need, over the whole run:
// - GPUs: Σ over the job's GPUs of their p95 utilization, divided by `target_utilization_pct`
//   (a GPU busy 12 % of the time needs 0.15 GPU at an 80 % target), rounded up, at least 1 when
//   the job has GPU data; each GPU of the choice must hold the largest per-GPU memory used;
// - vCPUs: Σ over nodes of the p95 CPU total (busy cores) divided by the target;
// - host memory: Σ over nodes of the peak MemoryUsedPercent × the current type's memory, / target.
// Candidates: every catalogue type with the current GPU model (a different GPU changes speed,
// which utilization cannot predict), count = the fewest instances that meet every need. The
// cheapest per hour wins (fewer instances on a tie). The current instance comes from the nodes'
// manifests (stepscope run --instance/--count) or the parameters instance_type/instance_count.
// The saving assumes the same duration; `stepscope compare` measures it on a real second run.
// When the catalogue does not price the current type but instance_capacities.h knows it, the
// choice is by capacity (instance_fit.h SmallestFit) among the known types and the catalogue's,
// and the finding says which prices would show the saving instead of inventing one.
#include "rules/right_sizing_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "rules/builtin_rules.h"
#include "rules/instance_capacities.h"
#include "rules/instance_fit.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

// Percentages kept as 0.1 %-wide histograms: bounded memory over days of 500 ms samples.
class PercentHistogram {
 public:
  void Add(double pct) {
    const int bin = static_cast<int>(std::lround(std::clamp(pct, 0.0, 100.0) * 10));
    ++counts_[static_cast<size_t>(bin)];
    ++total_;
  }
  int64_t total() const { return total_; }
  // The smallest value with at least q of the samples at or below it.
  double Quantile(double q) const {
    if (total_ == 0) return 0;
    const auto wanted = static_cast<int64_t>(std::ceil(q * static_cast<double>(total_)));
    int64_t seen = 0;
    for (size_t bin = 0; bin < counts_.size(); ++bin) {
      seen += counts_[bin];
      if (seen >= std::max<int64_t>(wanted, 1)) return static_cast<double>(bin) / 10.0;
    }
    return 100.0;
  }

 private:
  std::vector<int64_t> counts_ = std::vector<int64_t>(1001, 0);
  int64_t total_ = 0;
};

struct NodeUse {
  int32_t cores = 0;
  PercentHistogram cpu_total;       // per snapshot: mean of the per-core CPUUtilization
  double host_memory_peak_pct = 0;
};

class RightSizingRule final : public Rule {
 public:
  RightSizingRule() : catalog_(BuiltinInstanceCatalog()) {
    parameters_.Declare("target_utilization_pct", RuleParameters::Kind::kPercent, "80");
    parameters_.Declare("instance_type", RuleParameters::Kind::kText, "");
    parameters_.Declare("instance_count", RuleParameters::Kind::kNumber, "0");
  }
  std::string_view name() const override { return "RightSizing"; }
  void SetCatalog(std::vector<InstanceType> catalog) { catalog_ = std::move(catalog); }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    nodes_.resize(model.nodes().size());
    node_facts_ = model.nodes();
    std::map<std::pair<uint32_t, int64_t>, std::pair<double, int>> cpu_snapshots;  // (node, t) -> (sum, cores)
    for (size_t s = 0; s < model.series().size() && s < window.samples.size(); ++s) {
      const analysis::SystemSeries& series = model.series()[s];
      const std::string_view dimension = model.String(series.dimension);
      const auto [begin, end] = window.samples[s];
      if (dimension == "GPUUtilization") {
        PercentHistogram& histogram = gpu_util_[{series.node, std::string(model.String(series.name))}];
        for (size_t i = begin; i < end; ++i) histogram.Add(series.value[i]);
      } else if (dimension == "GPUMemoryUtilization") {
        double& peak = gpu_memory_peak_pct_[{series.node, std::string(model.String(series.name))}];
        for (size_t i = begin; i < end; ++i) peak = std::max(peak, series.value[i]);
      } else if (dimension == "CPUUtilization") {
        for (size_t i = begin; i < end; ++i) {
          auto& [sum, cores] = cpu_snapshots[{series.node, series.time_ns[i]}];
          sum += series.value[i];
          ++cores;
        }
      } else if (model.String(series.name) == "MemoryUsedPercent") {
        for (size_t i = begin; i < end; ++i) {
          nodes_[series.node].host_memory_peak_pct = std::max(nodes_[series.node].host_memory_peak_pct, series.value[i]);
        }
      }
    }
    for (const auto& [key, sum_cores] : cpu_snapshots) {
      NodeUse& use = nodes_[key.first];
      use.cores = std::max(use.cores, sum_cores.second);
      use.cpu_total.Add(sum_cores.first / sum_cores.second);
    }
    return false;
  }

  RuleReport Report() const override;

 private:
  void ReportCapacityFit(const InstanceType& current, int64_t current_count, const InstanceNeed& need,
                         const std::string& need_basis, nlohmann::json& details, RuleReport& report) const;
  // The finding's parts both recommendations share; the caller adds the title and the saving.
  Finding ResizeFinding(const InstanceFit& fit, const std::string& basis) const;

  std::vector<InstanceType> catalog_;
  std::vector<NodeUse> nodes_;
  std::vector<analysis::NodeFacts> node_facts_;
  std::map<std::pair<uint32_t, std::string>, PercentHistogram> gpu_util_;
  std::map<std::pair<uint32_t, std::string>, double> gpu_memory_peak_pct_;
};

RuleReport RightSizingRule::Report() const {
  RuleReport report;
  report.rule = "RightSizing";
  report.description = "Compares what the job used with an instance catalogue and finds the cheapest fit.";
  report.recommendation = "Run on the recommended instances and compare the runs (stepscope compare) before "
                          "switching for good.";
  report.parameters = parameters_.ReportString();
  nlohmann::json details = nlohmann::json::object();

  // The current instance.
  std::string current_name = parameters_.Text("instance_type");
  auto current_count = static_cast<int64_t>(parameters_.Number("instance_count"));
  if (current_name.empty() && !node_facts_.empty()) current_name = node_facts_.front().instance_type;
  if (current_count <= 0) {
    current_count = !node_facts_.empty() && node_facts_.front().instance_count > 0
                        ? node_facts_.front().instance_count
                        : static_cast<int64_t>(node_facts_.size());
  }
  // Priced by the catalogue, or only its capacity known (instance_capacities.h).
  const InstanceType* current = FindInstanceType(catalog_, current_name);
  const std::optional<InstanceType> known = current == nullptr ? FindKnownInstanceType(current_name) : std::nullopt;
  const InstanceType* capacity = current != nullptr ? current : (known ? &*known : nullptr);

  // The need.
  const double target = parameters_.Number("target_utilization_pct") / 100.0;
  double gpu_busy = 0, gpu_memory_needed_bytes = 0;
  int64_t samples = 0;
  for (const auto& [key, histogram] : gpu_util_) {
    gpu_busy += histogram.Quantile(0.95) / 100.0;
    samples += histogram.total();
  }
  for (const auto& [key, peak_pct] : gpu_memory_peak_pct_) {
    if (capacity != nullptr) gpu_memory_needed_bytes = std::max(gpu_memory_needed_bytes, peak_pct / 100.0 * capacity->gpu_memory_bytes);
  }
  double busy_cores = 0, host_memory_bytes = 0;
  for (const NodeUse& use : nodes_) {
    busy_cores += use.cpu_total.Quantile(0.95) / 100.0 * use.cores;
    samples += use.cpu_total.total();
    if (capacity != nullptr) host_memory_bytes += use.host_memory_peak_pct / 100.0 * capacity->memory_bytes;
  }
  report.datapoints = samples;
  InstanceNeed need;
  need.gpus = gpu_util_.empty() ? 0 : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(gpu_busy / target - 1e-9)));
  need.gpu_memory_bytes = gpu_memory_needed_bytes;
  need.vcpus = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(busy_cores / target - 1e-9)));
  need.host_memory_bytes = host_memory_bytes / target;
  details["need"] = {{"gpus", need.gpus}, {"gpu_busy_sum_p95", gpu_busy}, {"gpu_memory_bytes", need.gpu_memory_bytes},
                     {"vcpus", need.vcpus}, {"busy_cores_p95", busy_cores}, {"host_memory_bytes", need.host_memory_bytes}};
  details["current"] = {{"instance_type", current_name}, {"instance_count", current_count}};
  if (capacity == nullptr) {
    details["why_no_recommendation"] =
        current_name.empty() ? "the instance type is unknown: pass --instance/--count to stepscope run, or "
                               "RightSizing.instance_type"
                             : "instance type " + current_name + " is neither in the price catalogue nor a known "
                                                                 "type: pass --prices FILE with its capacities and price "
                                                                 "(docs/rules.md)";
    report.details = std::move(details);
    return report;
  }
  char basis[160];
  std::snprintf(basis, sizeof(basis), "GPUs busy %.2f (sum of p95 utilization), %.1f busy cores at p95, at a %.0f %% target",
                gpu_busy, busy_cores, target * 100.0);
  const std::string need_basis = basis;
  if (current == nullptr) {
    ReportCapacityFit(*capacity, current_count, need, need_basis, details, report);
    report.details = std::move(details);
    return report;
  }

  // The cheapest fit of the same GPU model.
  const InstanceFit best_fit = CheapestFit(catalog_, current->gpu_model, need);
  const InstanceType* best = best_fit.type;
  const int64_t best_count = best_fit.count;
  const double current_price = current_count * current->price_per_hour;
  if (best == nullptr) {
    details["why_no_recommendation"] = "no catalogue entry with " + current->gpu_model + " GPUs fits the need";
    report.details = std::move(details);
    return report;
  }
  const double best_price = best_count * best->price_per_hour;
  const double saving = current_price > 0 ? 1.0 - best_price / current_price : 0.0;
  details["recommended"] = {{"instance_type", best->name}, {"instance_count", best_count},
                            {"price_per_hour", best_price}, {"current_price_per_hour", current_price},
                            {"saving", saving}};
  report.details = std::move(details);
  if (best_price >= current_price - 1e-9) return report;

  Finding finding = ResizeFinding(best_fit, need_basis + "; same duration assumed");
  finding.severity = saving >= 0.5 ? Severity::kCritical : Severity::kWarning;
  char text[256];
  std::snprintf(text, sizeof(text), "%lld × %s would do the work of %lld × %s: $%.3f/h instead of $%.3f/h (%.1f %% less)",
                static_cast<long long>(best_count), best->name.c_str(), static_cast<long long>(current_count),
                current->name.c_str(), best_price, current_price, saving * 100.0);
  finding.title = text;
  finding.estimated_saving = saving;
  ++report.triggered;
  ++report.violations;
  report.findings.push_back(std::move(finding));
  return report;
}

// The current type has no price: recommend the smallest known fleet of its GPU model that fits,
// when it is smaller than the current one, and say which prices would show the saving.
void RightSizingRule::ReportCapacityFit(const InstanceType& current, int64_t current_count, const InstanceNeed& need,
                                        const std::string& need_basis, nlohmann::json& details,
                                        RuleReport& report) const {
  // Every known type, and the catalogue's types that instance_capacities.h does not list.
  std::vector<InstanceType> candidates = KnownInstanceTypes();
  for (const InstanceType& type : catalog_) {
    if (!FindKnownInstanceType(type.name)) candidates.push_back(type);
  }
  const InstanceFit best = SmallestFit(candidates, current.gpu_model, need);
  const InstanceFit now{&current, current_count};
  if (best.type == nullptr || !IsSmallerFleet(best, now)) {
    details["why_no_recommendation"] =
        best.type == nullptr ? "no known type with " + current.gpu_model + " GPUs fits the need"
                             : "the current instances are the smallest known ones that fit the need";
    return;
  }
  const std::string prices_needed = current.name + (best.type->price_per_hour > 0 ? "" : " and " + best.type->name);
  details["recommended"] = {{"instance_type", best.type->name}, {"instance_count", best.count}, {"basis", "capacity"}};
  details["why_no_saving"] = "no price for " + prices_needed + ": pass --prices FILE with them (docs/rules.md)";
  Finding finding = ResizeFinding(best, need_basis);
  finding.title = std::to_string(best.count) + " × " + best.type->name + "'s capacity fits the work of " +
                  std::to_string(current_count) + " × " + current.name +
                  "; pass --prices FILE with your prices to see the saving";
  ++report.triggered;
  ++report.violations;
  report.findings.push_back(std::move(finding));
}

Finding RightSizingRule::ResizeFinding(const InstanceFit& fit, const std::string& basis) const {
  Finding finding;
  finding.id = "RightSizing/job";
  finding.rule = "RightSizing";
  finding.saving_basis = basis;
  finding.recommendation = "Run the job on " + std::to_string(fit.count) + " × " + fit.type->name +
                           ", or give the current instances more work (a larger batch, more data-loader workers).";
  finding.next_step = "Rerun on the recommended instances and check with `stepscope compare RUN_A RUN_B`.";
  Evidence evidence;
  evidence.node = node_facts_.empty() ? "" : node_facts_.front().name;
  evidence.what = basis;
  finding.evidence.push_back(std::move(evidence));
  return finding;
}

}  // namespace

std::unique_ptr<Rule> MakeRightSizingRule() { return std::make_unique<RightSizingRule>(); }

void SetRightSizingCatalog(Rule& rule, std::vector<InstanceType> catalog) {
  if (auto* right_sizing = dynamic_cast<RightSizingRule*>(&rule)) right_sizing->SetCatalog(std::move(catalog));
}

}  // namespace stepscope::rules
