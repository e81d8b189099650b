// GPUMemoryIncrease (shared/RULES.md §8): per GPU and per GPUMemoryUtilization sample, the mean
// of its last `window` values against the mean of the `window` values before them; a rise of
// more than `increase` percentage points, once the GPU has more than `patience` values, is a
// violation. Sticky: met for every window after the first violation.
#include <algorithm>
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

constexpr std::string_view kMemoryDimension = "GPUMemoryUtilization";

class GPUMemoryIncreaseRule : public Rule {
 public:
  GPUMemoryIncreaseRule() {
    parameters_.Declare("increase", RuleParameters::Kind::kPercent, "5");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "1000");
    parameters_.Declare("window", RuleParameters::Kind::kCount, "10");
  }

  std::string_view name() const override { return "GPUMemoryIncrease"; }

  bool Evaluate(const Window& window) override {
    if (window.model == nullptr) return tally_.triggered > 0;
    const analysis::Model& model = *window.model;
    struct SampleRef {
      int64_t time_ns;
      size_t series;
      size_t sample;
    };
    // The rule is evaluated per sample, in time order over all GPUs of all nodes.
    std::vector<SampleRef> samples;
    for (size_t i = 0; i < model.series().size(); ++i) {
      if (model.String(model.series()[i].dimension) != kMemoryDimension) continue;
      const auto [begin, end] = SampleRange(window, i);
      for (size_t k = begin; k < end; ++k) samples.push_back({model.series()[i].time_ns[k], i, k});
    }
    std::stable_sort(samples.begin(), samples.end(),
                     [](const SampleRef& a, const SampleRef& b) { return a.time_ns < b.time_ns; });
    const auto window_size = static_cast<size_t>(parameters_.Number("window"));
    const auto patience = static_cast<size_t>(parameters_.Number("patience"));
    const double increase = parameters_.Number("increase");
    for (const SampleRef& ref : samples) {
      const analysis::SystemSeries& series = model.series()[ref.series];
      const std::string& node = model.nodes()[series.node].name;
      const std::string gpu(model.String(series.name));
      SeriesHistory& values =
          values_.try_emplace({series.node, gpu}, series.node, gpu, kMemoryDimension, 2 * window_size).first->second;
      values.Take(window, ref.series, ref.sample, ref.sample + 1);
      tally_.datapoints = static_cast<int64_t>(values.size());
      if (values.size() <= 2 * window_size) continue;
      // **Fixed**: the reference compares with values[-window-1:-2], a window shifted by one and
      // one value short; stepscope compares with the `window` values just before the last ones.
      const std::span<const double> recent = values.Recent(2 * window_size);
      const double diff = analysis::Mean(recent.last(window_size)) - analysis::Mean(recent.first(window_size));
      if (!(diff > increase) || values.size() <= patience) continue;
      tally_.Trigger(window.start_ns);
      const analysis::BoxStats stats = SortedBoxStats(values.Sorted(model));
      tally_.details[node][gpu] = {{"increase", diff}, {"gpu_max", stats.max}, {"p05", stats.p05},
                             {"p25", stats.p25}, {"p50", stats.p50},     {"p75", stats.p75},
                             {"p95", stats.p95}, {"upper", stats.upper}, {"lower", stats.lower}};
      tally_.details["last_timestamp"] = window.start_ns / 1000;  // the window start in µs, as the reference

      Finding finding;
      finding.id = "GPUMemoryIncrease/" + node + "/" + gpu;
      finding.rule = "GPUMemoryIncrease";
      finding.severity = stats.max > 90 ? Severity::kCritical : Severity::kWarning;
      finding.title = "GPU memory of " + gpu + " on " + node + " keeps growing: +" + FormatNumber(diff) +
                      " points between consecutive " + std::to_string(window_size) + "-sample averages, now " +
                      FormatNumber(recent.back()) + " %";
      finding.recommendation =
          "Memory that grows during training usually means tensors kept alive across steps (losses or outputs "
          "accumulated with their graph, growing caches); left alone it ends in an out-of-memory error.";
      finding.next_step = "Detach or .item() values kept for logging, and check for lists that grow every step.";
      tally_.findings.Record(finding, node, window.start_ns, window.end_ns,
                       "mean GPU memory of the last " + std::to_string(window_size) + " samples of " + gpu + " " +
                           FormatNumber(diff) + " points above the " + std::to_string(window_size) +
                           " before them (max " + FormatNumber(stats.max) + " %)");
    }
    return tally_.triggered > 0;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "GPUMemoryIncrease";
    report.description =
        "Checks each GPU for a large rise in memory use: the average of its last window memory-utilization "
        "values against the average of the window values before them; a rise above increase percentage "
        "points after patience values is a violation.";
    report.recommendation =
        "Growing GPU memory points to tensors kept across steps or growing caches; fix it before it becomes an "
        "out-of-memory failure. If growth is expected (e.g. a curriculum of longer sequences), raise increase.";
    report.parameters = parameters_.ReportString();
    tally_.FillReport(report);
    return report;
  }

 private:
  std::map<std::pair<uint32_t, std::string>, SeriesHistory> values_;  // (node, gpu) -> memory %
  SystemRuleTally tally_;
};

}  // namespace

std::unique_ptr<Rule> MakeGPUMemoryIncreaseRule() { return std::make_unique<GPUMemoryIncreaseRule>(); }

}  // namespace stepscope::rules
