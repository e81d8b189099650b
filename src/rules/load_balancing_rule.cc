// LoadBalancing (shared/RULES.md §7): GPUs of one node that do different amounts of work. Per
// GPU, a histogram of its utilization in 2 % bins; a pair of GPUs whose histograms differ by more
// than `threshold` (square root of the Jensen-Shannon divergence), each with more than `patience`
// values, is a violation. In multi-node runs the nodes' mean GPU utilization is compared the
// same way. Sticky: met for every window after the first violation.
#include <cmath>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/series_history.h"
#include "rules/system_findings.h"
#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

// Edges 0, 2, ..., 100. **Fixed**: the reference's np.arange(0, 100, 2) ends at 98, so values
// above 98 % (a fully busy GPU) fall outside every bin.
std::vector<double> UtilizationEdges() {
  std::vector<double> edges;
  for (int edge = 0; edge <= 100; edge += 2) edges.push_back(edge);
  return edges;
}

std::vector<int64_t> Counts(const analysis::Histogram& histogram) {
  std::vector<int64_t> counts;
  counts.reserve(histogram.counts.size());
  for (double count : histogram.counts) counts.push_back(static_cast<int64_t>(count));
  return counts;
}

double Distance(const analysis::Histogram& a, const analysis::Histogram& b) {
  return std::sqrt(analysis::JensenShannonDivergence(a.counts, b.counts));
}

class LoadBalancingRule : public Rule {
 public:
  LoadBalancingRule() {
    parameters_.Declare("threshold", RuleParameters::Kind::kPositive, "0.2");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "1000");
  }

  std::string_view name() const override { return "LoadBalancing"; }

  bool Evaluate(const Window& window) override {
    if (window.model == nullptr) return tally_.triggered > 0;
    const analysis::Model& model = *window.model;
    utilization_.Take(window, /*recent_capacity=*/0);  // histograms need only each window's values
    const std::vector<double> edges = UtilizationEdges();
    for (uint32_t node = 0; node < model.nodes().size(); ++node) {
      std::vector<double> means;
      for (const TimedValue& mean : MeanGpuUtilization(window, node)) means.push_back(mean.value);
      if (!means.empty()) node_histograms_[node].Add(means, edges);
    }
    for (const SeriesHistory& gpu : utilization_.all()) tally_.datapoints = static_cast<int64_t>(gpu.size());

    const auto patience = static_cast<size_t>(parameters_.Number("patience"));
    const double threshold = parameters_.Number("threshold");
    // GPU pairs within each node. Histograms grow by each window's new values (a full
    // recount per window would cost a day's samples in each of a day's 1440 windows).
    const std::vector<SeriesHistory>& gpus = utilization_.all();
    std::vector<const analysis::Histogram*> histograms(gpus.size());
    for (size_t i = 0; i < gpus.size(); ++i) {
      Counted& counted = gpu_histograms_[{gpus[i].node(), gpus[i].name()}];
      // The values taken since the histogram last counted: none when the GPU had no sample in
      // this window (last_taken() then still holds an earlier window's).
      if (counted.values < gpus[i].size()) counted.Add(gpus[i].last_taken(), edges);
      histograms[i] = &counted.histogram;
      // As the reference: every GPU's workload, violation or not.
      tally_.details[model.nodes()[gpus[i].node()].name]["workloads"][gpus[i].name()] = Counts(counted.histogram);
    }
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].size() <= patience) continue;
      for (size_t j = i + 1; j < gpus.size(); ++j) {
        if (gpus[j].node() != gpus[i].node() || gpus[j].size() <= patience) continue;
        const double distance = Distance(*histograms[i], *histograms[j]);
        if (!(distance > threshold)) continue;
        const std::string& node = model.nodes()[gpus[i].node()].name;
        tally_.details[node]["distances"][gpus[i].name()][gpus[j].name()] = distance;
        RecordViolation(window, node, gpus[i].name() + "-" + gpus[j].name(),
                        gpus[i].name() + " and " + gpus[j].name() + " on " + node, distance);
      }
    }
    // Node pairs (stepscope's addition): the per-timestamp mean over each node's GPUs.
    std::vector<std::pair<uint32_t, const analysis::Histogram*>> nodes;
    for (const auto& [node, counted] : node_histograms_) {
      if (counted.values > patience) nodes.emplace_back(node, &counted.histogram);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (size_t j = i + 1; j < nodes.size(); ++j) {
        const double distance = Distance(*nodes[i].second, *nodes[j].second);
        if (!(distance > threshold)) continue;
        const std::string& a = model.nodes()[nodes[i].first].name;
        const std::string& b = model.nodes()[nodes[j].first].name;
        tally_.details["node_workloads"][a] = Counts(*nodes[i].second);
        tally_.details["node_workloads"][b] = Counts(*nodes[j].second);
        tally_.details["node_distances"][a][b] = distance;
        RecordViolation(window, a, "nodes-" + a + "-" + b, "the GPUs of nodes " + a + " and " + b, distance);
      }
    }
    return tally_.triggered > 0;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "LoadBalancing";
    report.description =
        "Checks whether GPUs share the work evenly: compares the utilization histograms (2 % bins) of every pair "
        "of GPUs on a node, and of the nodes' mean GPU utilization in multi-node runs; a distance (square root of "
        "the Jensen-Shannon divergence) above threshold is a violation.";
    report.recommendation =
        "Uneven GPU load makes the busy GPU set the pace. Check the data-parallel setup (every GPU should get a "
        "process and an equal share of each batch), uneven sharding of the dataset, and work done on one rank "
        "only (logging, evaluation, checkpointing).";
    report.parameters = parameters_.ReportString();
    tally_.FillReport(report);
    return report;
  }

 private:
  void RecordViolation(const Window& window, const std::string& node, const std::string& subject,
                       const std::string& label, double distance) {
    tally_.Trigger(window.start_ns);
    Finding finding;
    finding.id = "LoadBalancing/" + node + "/" + subject;
    finding.rule = "LoadBalancing";
    finding.severity = Severity::kWarning;
    finding.title = "Uneven GPU load between " + label + ": histogram distance " + FormatNumber(distance, 3);
    finding.recommendation =
        "Give every GPU the same share of work: one process per GPU with a distributed sampler, equal batch "
        "shares, and no extra work pinned to one device.";
    finding.next_step = "Compare the utilization histograms in Details (workloads) to see which side idles.";
    tally_.findings.Record(finding, node, window.start_ns, window.end_ns,
                     "utilization histograms of " + label + " differ by " + FormatNumber(distance, 3) +
                         " (threshold " + parameters_.Text("threshold") + ")");
  }

  // A histogram and how many values it has counted.
  struct Counted {
    analysis::Histogram histogram;
    size_t values = 0;
    void Add(std::span<const double> added, const std::vector<double>& edges) {
      const analysis::Histogram more = analysis::EdgeHistogram(added, edges);
      if (histogram.counts.empty()) histogram = more;
      else for (size_t bin = 0; bin < more.counts.size(); ++bin) histogram.counts[bin] += more.counts[bin];
      values += added.size();
    }
  };

  SeriesHistories utilization_{"GPUUtilization"};
  std::map<std::pair<uint32_t, std::string>, Counted> gpu_histograms_;  // (node, gpu)
  std::map<uint32_t, Counted> node_histograms_;  // per node index: mean GPU utilization
  SystemRuleTally tally_;
};

}  // namespace

std::unique_ptr<Rule> MakeLoadBalancingRule() { return std::make_unique<LoadBalancingRule>(); }

}  // namespace stepscope::rules
