// BatchSize (shared/RULES.md §4): a node whose CPU total, GPU utilization and GPU memory are
// all low (p95 of the last `window` values below their thresholds) could run a larger batch or
// a smaller instance. Sticky: met for every window after the first violation.
#include <map>
#include <memory>
#include <span>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/series_history.h"
#include "rules/system_findings.h"
#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

double TailP95(std::span<const double> values, size_t window) {
  return analysis::Quantile(values.last(std::min(window, values.size())), 0.95);
}

// RULES.md §0 CPU totals of one node, every window's. They are derived per timestamp, so the
// model holds no series to read them again from: kept whole (one value per timestamp and node,
// where the GPU series are read from the model).
struct CpuTotalHistory {
  std::vector<double> values;  // in time order
  std::vector<double> sorted;  // values[0, sorted_count) ascending, merged on a violation
  size_t sorted_count = 0;

  const std::vector<double>& Sorted() {
    MergeSorted(&sorted, std::span<const double>(values).subspan(sorted_count));
    sorted_count = values.size();
    return sorted;
  }
};

// The reference's box-plot object: {p25, p50, p75, p95, upper, lower}. Each series' whiskers use
// its own quartiles. **Fixed**: the reference computes the `gpuN_memory` IQR from the
// utilization p25; stepscope uses the memory p25.
nlohmann::json BoxJson(std::span<const double> sorted) {
  const analysis::BoxStats stats = SortedBoxStats(sorted);
  return {{"p25", stats.p25}, {"p50", stats.p50},     {"p75", stats.p75},
          {"p95", stats.p95}, {"upper", stats.upper}, {"lower", stats.lower}};
}

class BatchSizeRule : public Rule {
 public:
  BatchSizeRule() {
    parameters_.Declare("cpu_threshold_p95", RuleParameters::Kind::kPercent, "70");
    parameters_.Declare("gpu_threshold_p95", RuleParameters::Kind::kPercent, "70");
    parameters_.Declare("gpu_memory_threshold_p95", RuleParameters::Kind::kPercent, "70");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "1000");
    parameters_.Declare("window", RuleParameters::Kind::kCount, "500");
  }

  std::string_view name() const override { return "BatchSize"; }

  bool Evaluate(const Window& window) override {
    if (window.model == nullptr) return tally_.triggered > 0;
    const auto window_size = static_cast<size_t>(parameters_.Number("window"));
    const auto patience = static_cast<size_t>(parameters_.Number("patience"));
    utilization_.Take(window, window_size);
    memory_.Take(window, window_size);
    for (uint32_t node = 0; node < window.model->nodes().size(); ++node) {
      std::vector<TimedValue> totals = CpuTotals(window, node);
      if (totals.empty()) continue;
      CpuTotalHistory& cpu = cpu_totals_[node];
      for (const TimedValue& total : totals) cpu.values.push_back(total.value);
    }
    for (auto& [node, cpu] : cpu_totals_) {
      tally_.datapoints = static_cast<int64_t>(cpu.values.size());
      if (cpu.values.size() <= window_size || cpu.values.size() <= patience) continue;
      const double cpu_p95 = TailP95(cpu.values, window_size);
      if (!(cpu_p95 < parameters_.Number("cpu_threshold_p95"))) continue;
      // A node without GPU data has no entries here: skipped, never an error.
      for (SeriesHistory& gpu : utilization_.mutable_all()) {
        if (gpu.node() != node || gpu.size() <= window_size) continue;
        SeriesHistory* memory = memory_.FindMutable(node, gpu.name());
        if (memory == nullptr || memory->size() == 0) continue;
        const double gpu_p95 = analysis::Quantile(gpu.Recent(window_size), 0.95);
        const double memory_p95 = analysis::Quantile(memory->Recent(window_size), 0.95);
        if (gpu_p95 < parameters_.Number("gpu_threshold_p95") &&
            memory_p95 < parameters_.Number("gpu_memory_threshold_p95")) {
          RecordViolation(window, node, cpu, gpu, *memory, cpu_p95, gpu_p95, memory_p95);
        }
      }
    }
    return tally_.triggered > 0;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "BatchSize";
    report.description =
        "Checks whether the batch size is too small: on a node whose CPU total, GPU utilization and GPU "
        "memory utilization all stay low (p95 of the last window values below cpu_threshold_p95, "
        "gpu_threshold_p95 and gpu_memory_threshold_p95), the GPUs have room for more work per step.";
    report.recommendation =
        "Increase the batch size (and scale the learning rate), or move to a smaller instance type. Frameworks "
        "that reserve most GPU memory up front hide the headroom from this rule.";
    report.parameters = parameters_.ReportString();
    tally_.FillReport(report);
    return report;
  }

 private:
  void RecordViolation(const Window& window, uint32_t node_index, CpuTotalHistory& cpu, SeriesHistory& gpu,
                       SeriesHistory& memory, double cpu_p95, double gpu_p95, double memory_p95) {
    tally_.Trigger(window.start_ns);
    const std::string& node = window.model->nodes()[node_index].name;
    const std::string& gpu_name = gpu.name();
    tally_.details[node]["cpu"] = BoxJson(cpu.Sorted());
    tally_.details[node][gpu_name] = BoxJson(gpu.Sorted(*window.model));
    tally_.details[node][gpu_name + "_memory"] = BoxJson(memory.Sorted(*window.model));
    tally_.details["last_timestamp"] = window.start_ns / 1000;  // the window start in µs, as the reference

    Finding finding;
    finding.id = "BatchSize/" + node + "/" + gpu_name;
    finding.rule = "BatchSize";
    finding.severity = Severity::kInfo;
    finding.title = gpu_name + " on " + node + " has room for a larger batch: p95 GPU " + FormatNumber(gpu_p95) +
                    " %, GPU memory " + FormatNumber(memory_p95) + " %, CPU " + FormatNumber(cpu_p95) + " %";
    finding.recommendation =
        "Increase the batch size until GPU memory or utilization approaches its limit (scale the learning rate "
        "with it), or choose a smaller instance.";
    finding.next_step = "Try doubling the batch size and compare step throughput.";
    const std::string what = "p95 over the last " + parameters_.Text("window") + " samples: GPU utilization " +
                             FormatNumber(gpu_p95) + " %, GPU memory " + FormatNumber(memory_p95) +
                             " %, CPU total " + FormatNumber(cpu_p95) + " %";
    tally_.findings.Record(finding, node, window.start_ns, window.end_ns, what);
  }

  SeriesHistories utilization_{"GPUUtilization"};
  SeriesHistories memory_{"GPUMemoryUtilization"};
  std::map<uint32_t, CpuTotalHistory> cpu_totals_;  // per node index
  SystemRuleTally tally_;
};

}  // namespace

std::unique_ptr<Rule> MakeBatchSizeRule() { return std::make_unique<BatchSizeRule>(); }

}  // namespace stepscope::rules
