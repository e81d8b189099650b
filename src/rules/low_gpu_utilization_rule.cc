// LowGPUUtilization (shared/RULES.md §3): per GPU, once it has more than `patience` values, the
// p95 and p5 of its last `window` utilization values flag under-utilization (p95 <
// threshold_p95) or fluctuation (p95 > threshold_p95 and p5 < threshold_p5). Sticky: met for
// every window after the first violation.
#include <memory>
#include <span>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/series_history.h"
#include "rules/system_findings.h"
#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

class LowGPUUtilizationRule : public Rule {
 public:
  LowGPUUtilizationRule() {
    parameters_.Declare("threshold_p95", RuleParameters::Kind::kPercent, "70");
    parameters_.Declare("threshold_p5", RuleParameters::Kind::kPercent, "10");
    parameters_.Declare("window", RuleParameters::Kind::kCount, "500");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "1000");
  }

  std::string_view name() const override { return "LowGPUUtilization"; }

  bool Evaluate(const Window& window) override {
    if (window.model == nullptr) return tally_.triggered > 0;
    const double threshold_p95 = parameters_.Number("threshold_p95");
    const double threshold_p5 = parameters_.Number("threshold_p5");
    const auto window_size = static_cast<size_t>(parameters_.Number("window"));
    const auto patience = static_cast<size_t>(parameters_.Number("patience"));
    utilization_.Take(window, window_size);
    for (SeriesHistory& gpu : utilization_.mutable_all()) {
      tally_.datapoints = static_cast<int64_t>(gpu.size());
      if (gpu.size() <= patience) continue;
      const std::span<const double> recent = gpu.Recent(window_size);
      const double p95 = analysis::Quantile(recent, 0.95);
      const double p5 = analysis::Quantile(recent, 0.05);
      if (p95 < threshold_p95) {
        RecordViolation(window, gpu, p95, p5, /*fluctuating=*/false);
      } else if (p95 > threshold_p95 && p5 < threshold_p5) {
        RecordViolation(window, gpu, p95, p5, /*fluctuating=*/true);
      }
    }
    return tally_.triggered > 0;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "LowGPUUtilization";
    report.description =
        "Checks each GPU for low or fluctuating utilization: after patience values, the p95 of its last "
        "window values below threshold_p95 means under-utilization; a p95 above threshold_p95 with a p5 "
        "below threshold_p5 means the GPU alternates between busy and idle.";
    report.recommendation =
        "An under-utilized GPU does little work per step: increase the batch size, or move to a smaller or "
        "single-GPU instance. A fluctuating GPU waits between bursts of work: look for data loading or host "
        "synchronization between steps (CPUBottleneck, Dataloader, step time breakdown).";
    report.parameters = parameters_.ReportString();
    tally_.FillReport(report);
    return report;
  }

 private:
  void RecordViolation(const Window& window, SeriesHistory& gpu, double p95w, double p5w, bool fluctuating) {
    tally_.Trigger(window.start_ns);
    const std::string& node = window.model->nodes()[gpu.node()].name;
    const std::string& gpu_name = gpu.name();
    const analysis::BoxStats stats = SortedBoxStats(gpu.Sorted(*window.model));
    tally_.details[node][gpu_name] = {{"gpu_max", stats.max}, {"gpu_95", p95w},       {"gpu_5", p5w},
                                {"p25", stats.p25},     {"p50", stats.p50},     {"p75", stats.p75},
                                {"p95", stats.p95},     {"upper", stats.upper}, {"lower", stats.lower}};
    // The reference's last_timestamp: the start of the window being evaluated, in µs.
    tally_.details["last_timestamp"] = window.start_ns / 1000;

    const size_t recent = std::min(gpu.size(), static_cast<size_t>(parameters_.Number("window")));
    Finding finding;
    finding.id = "LowGPUUtilization/" + node + "/" + gpu_name;
    finding.rule = "LowGPUUtilization";
    std::string what;
    if (fluctuating) {
      finding.severity = Severity::kWarning;
      finding.title = gpu_name + " on " + node + " fluctuates: p95 " + FormatNumber(p95w) + " %, p5 " +
                      FormatNumber(p5w) + " % over its last " + std::to_string(recent) + " samples";
      finding.recommendation =
          "The GPU alternates between busy and idle: find what it waits for between bursts (data loading, "
          "host-side work, synchronization) and overlap it with compute.";
      finding.next_step = "Compare the idle stretches with the step timeline and the CPUBottleneck findings.";
      what = "p95 GPU utilization " + FormatNumber(p95w) + " % but p5 " + FormatNumber(p5w) + " % over the last " +
             std::to_string(recent) + " samples of " + gpu_name;
    } else {
      finding.severity = p95w < parameters_.Number("threshold_p95") / 2 ? Severity::kCritical : Severity::kWarning;
      finding.title = gpu_name + " on " + node + " is under-utilized: p95 " + FormatNumber(p95w) +
                      " % over its last " + std::to_string(recent) + " samples";
      finding.recommendation =
          "The GPU has spare capacity: increase the batch size (scaling the learning rate), or run on a smaller "
          "instance or fewer GPUs.";
      finding.next_step = "Check the BatchSize rule and GPU memory headroom before raising the batch size.";
      what = "p95 GPU utilization " + FormatNumber(p95w) + " % over the last " + std::to_string(recent) +
             " samples of " + gpu_name;
    }
    tally_.findings.Record(finding, node, window.start_ns, window.end_ns, what);
  }

  SeriesHistories utilization_{"GPUUtilization"};
  SystemRuleTally tally_;
};

}  // namespace

std::unique_ptr<Rule> MakeLowGPUUtilizationRule() { return std::make_unique<LowGPUUtilizationRule>(); }

}  // namespace stepscope::rules
