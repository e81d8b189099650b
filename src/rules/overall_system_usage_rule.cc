// OverallSystemUsage (shared/RULES.md §10): a reporting rule that never triggers. Per node and
// per exact timestamp it sums GPU memory %, GPU utilization %, host memory %, per-core CPU %,
// network bytes/s (Algorithm dimension) and per-core I/O wait %, and reports {max, p99, p95,
// p50, min} of those sums divided by the device count. The p90 that the dashboard's resource
// table also shows (issue 14) is computed from the same sums and kept in StepscopeDetails: the
// reference has no p90, and its file stays exact.
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

// Details keys, in the reference's order.
constexpr const char* kNetwork = "Network";
constexpr const char* kGpu = "GPU";
constexpr const char* kCpu = "CPU";
constexpr const char* kHostMemory = "CPU memory";
constexpr const char* kGpuMemory = "GPU memory";
constexpr const char* kIo = "I/O";

// The reference rounds with round(numpy.float64, 2), which is numpy's rint(x * 100) / 100
// (half to even on the scaled value), and writes the integer 0 for values that are not > 0.
nlohmann::json Rounded(double value) {
  if (!(value > 0)) return 0;
  return std::nearbyint(value * 100.0) / 100.0;
}

class OverallSystemUsageRule : public Rule {
 public:
  std::string_view name() const override { return "OverallSystemUsage"; }

  bool Evaluate(const Window& window) override {
    if (window.model == nullptr) return false;
    const analysis::Model& model = *window.model;
    // A sample exactly on the window's start was summed in the previous window (both windows
    // hold it, RULES.md §0); adding it again would double that timestamp's sum.
    const bool skip_start = last_end_ns_ == window.start_ns;
    // This window's per-timestamp sums. Every timestamp summed here is complete: its samples on
    // the window's end are all in this window, and the next window skips them.
    std::map<const char*, std::map<uint32_t, std::map<int64_t, double>>> window_sums;
    for (size_t i = 0; i < model.series().size(); ++i) {
      const analysis::SystemSeries& series = model.series()[i];
      const std::string_view dimension = model.String(series.dimension);
      const std::string_view series_name = model.String(series.name);
      const char* metric = nullptr;
      if (dimension == "GPUMemoryUtilization") {
        metric = kGpuMemory;
      } else if (dimension == "GPUUtilization") {
        metric = kGpu;
      } else if (series_name == "MemoryUsedPercent") {
        metric = kHostMemory;
      } else if (dimension == "CPUUtilization") {
        metric = kCpu;
      } else if (dimension == "Algorithm") {
        metric = kNetwork;
      } else if (dimension == "I/OWaitPercentage") {
        metric = kIo;
      }
      if (metric == nullptr) continue;
      const auto [begin, end] = SampleRange(window, i);
      // Device counts are names seen anywhere (the reference's gpu_ids / core_ids).
      if (metric == kCpu && begin < end) core_names_.insert(std::string(series_name));
      if (metric == kGpu && begin < end) gpu_names_.insert(std::string(series_name));
      std::map<int64_t, double>& sums = window_sums[metric][series.node];
      for (size_t k = begin; k < end; ++k) {
        if (skip_start && series.time_ns[k] == window.start_ns) continue;
        sums[series.time_ns[k]] += series.value[k];
      }
    }
    last_end_ns_ = window.end_ns;
    for (const auto& [metric, per_node] : window_sums) {
      for (const auto& [node, sums] : per_node) {
        std::vector<double> added;
        added.reserve(sums.size());
        for (const auto& [time_ns, sum] : sums) added.push_back(sum);
        MergeSorted(&sorted_sums_[metric][node], added);
      }
    }

    // Datapoints: the CPU timestamps of the first node with CPU data.
    for (const auto& [node, sums] : sorted_sums_[kCpu]) {
      if (sums.empty()) continue;
      datapoints_ = static_cast<int64_t>(sums.size());
      break;
    }
    const double gpus = static_cast<double>(std::max<size_t>(gpu_names_.size(), 1));
    const double cores = static_cast<double>(std::max<size_t>(core_names_.size(), 1));
    Record(model, kNetwork, 1);
    Record(model, kGpu, gpus);
    Record(model, kCpu, cores);
    Record(model, kHostMemory, 1);
    Record(model, kGpuMemory, gpus);
    Record(model, kIo, cores);
    return false;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "OverallSystemUsage";
    report.description =
        "Reports the system usage per node: max, p99, p95, p50 and min of the GPU and GPU memory utilization, "
        "CPU utilization, host memory, network throughput and I/O wait, each averaged over the node's devices "
        "per sample. It never triggers.";
    report.recommendation =
        "Use these numbers to size the instance: low GPU and CPU figures leave money on the table, figures near "
        "100 % show the resource that limits training.";
    report.reporting = true;
    report.datapoints = datapoints_;
    report.details = details_;
    report.stepscope_details = stepscope_details_;
    report.parameters = "";  // the reference has no parameters: RuleParameters is ""
    return report;
  }

 private:
  void Record(const analysis::Model& model, const char* metric, double devices) {
    nlohmann::json& entry = details_[metric];
    if (entry.is_null()) entry = nlohmann::json::object();
    nlohmann::json& extra = stepscope_details_[metric];
    if (extra.is_null()) extra = nlohmann::json::object();
    for (const auto& [node, sums] : sorted_sums_[metric]) {
      if (sums.empty()) continue;
      const analysis::BoxStats stats = SortedBoxStats(sums);
      entry[model.nodes()[node].name] = {{"max", Rounded(stats.max / devices)},
                                         {"p99", Rounded(stats.p99 / devices)},
                                         {"p95", Rounded(stats.p95 / devices)},
                                         {"p50", Rounded(stats.p50 / devices)},
                                         {"min", Rounded(stats.min / devices)}};
      extra[model.nodes()[node].name] = {{"p90", Rounded(analysis::SortedQuantile(sums, 0.90) / devices)}};
    }
  }

  // metric -> node index -> the per-timestamp sums over the node's devices, ascending.
  std::map<const char*, std::map<uint32_t, std::vector<double>>> sorted_sums_;
  nlohmann::json details_ = nlohmann::json::object();
  nlohmann::json stepscope_details_ = nlohmann::json::object();
  std::set<std::string> gpu_names_;
  std::set<std::string> core_names_;
  int64_t last_end_ns_ = -1;
  int64_t datapoints_ = 0;
};

}  // namespace

std::unique_ptr<Rule> MakeOverallSystemUsageRule() { return std::make_unique<OverallSystemUsageRule>(); }

}  // namespace stepscope::rules
