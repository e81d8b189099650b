// Dataloader (shared/RULES.md §6): how many data-loader processes run in parallel, against the
// node's CPU cores. Sticky: once a violation is seen, met for every later window.
//
// Per node: every DataLoaderWorker / DataLoaderIter event counts its process in the one-second
// bucket of its start; after each window, each bucket of the window appends its number of
// distinct processes to the node's list; the median of that list (truncated to an integer) is
// out of bounds when below cores·min_threshold/100 or above cores·max_threshold/100, once the
// list is longer than patience.
//
// Differences from the reference (docs/rules.md "Dataloader"):
// - **Fixed**: buckets, cores and the median are kept per node (the reference pools every
//   node's processes and cores: the same pid on two nodes counted once); one violation per node
//   and window out of bounds. Identical on one node.
// - The process is the event's pid (importers move SageMaker's args.pid there).
// - A node whose cores are unknown (no CPUUtilization series and no cores in its facts) is not
//   judged: the reference compares with 0 cores and reports "too many" for any data loader.
// - Framework events belong to the window containing their start (RULES.md §0).
//
// Cost: a 24 h run has ~350,000 data-loader events and 1,440 windows, so the window loop keeps
// only what decides a window's outcome (the per-node median, from a sorted copy of the at most
// ~1,000 kept counts); the percentiles and histogram of every data-loading time seen so far only
// feed Details and are computed in Report(), over the same values the last window saw.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/numerics.h"
#include "rules/cpu_headroom.h"
#include "rules/builtin_rules.h"

namespace stepscope::rules {
namespace {

using analysis::EventArg;
using analysis::FrameworkEvent;
using analysis::Model;

constexpr std::string_view kRuleName = "Dataloader";
constexpr std::string_view kInitializePhase = "DataLoaderIterInitialize";
constexpr std::string_view kIterPhase = "DataLoaderIter";
constexpr std::string_view kWorkerPhase = "DataLoaderWorker";
// The reference forgets the per-second counts once more than this many are kept, so the median
// follows the recent past.
constexpr size_t kMaxKeptCounts = 1000;
constexpr int kHistogramBins = 100;

// The reference's prefetch flag: False until a data-loader event is seen (then unknown, not
// reported) or an event whose name contains "Prefetch" (then True); the latest of these wins.
enum class Prefetch : uint8_t { kFalse, kUnknown, kTrue };

struct NodeState {
  uint32_t node = 0;                      // index in the latest model
  std::set<std::string> cores;            // CPUUtilization names, from the first window with any
  int64_t fact_cores = 0;                 // NodeFacts.cpu_cores, the fallback
  std::vector<double> parallel_counts;    // distinct processes per one-second bucket
  std::vector<double> sorted_counts;      // parallel_counts, ascending: the median without a sort
  int64_t median = 0;
  bool evaluated = false;

  int64_t core_count() const { return cores.empty() ? fact_cores : static_cast<int64_t>(cores.size()); }
};

class DataloaderRule final : public Rule {
 public:
  DataloaderRule() {
    parameters_.Declare("min_threshold", RuleParameters::Kind::kPositive, "70");
    parameters_.Declare("max_threshold", RuleParameters::Kind::kPositive, "200");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "10");
    parameters_.SetReportLines({{"min_threshold", "min_threshold"}, {"max_threshold", "max_threshold"}});
    report_.rule = std::string(kRuleName);
    report_.description =
        "Checks how many data-loader processes run in parallel on each node against its CPU cores: triggers "
        "when the median per second is below min_threshold % or above max_threshold % of the cores.";
    report_.recommendation =
        "Too few: raise the DataLoader's num_workers toward the number of cores, set pin_memory=True when "
        "training on a GPU, and keep prefetch_factor batches in flight. Too many: lower num_workers so the "
        "workers do not compete with the training process for the cores.";
  }

  std::string_view name() const override { return kRuleName; }

  bool Evaluate(const Window& window) override {
    const Model& model = *window.model;
    cpu_.Add(window);
    const double min_threshold = parameters_.Number("min_threshold");
    const double max_threshold = parameters_.Number("max_threshold");
    const size_t patience = static_cast<size_t>(parameters_.Number("patience"));

    // Cores per node, from the first window in which the node reports CPUUtilization.
    std::map<std::string, std::set<std::string>> window_cores;
    for (size_t s = 0; s < model.series().size() && s < window.samples.size(); ++s) {
      const analysis::SystemSeries& series = model.series()[s];
      if (window.samples[s].first == window.samples[s].second) continue;
      if (model.String(series.dimension) != "CPUUtilization") continue;
      window_cores[NodeName(model, series.node)].emplace(model.String(series.name));
    }
    for (auto& [node_name, names] : window_cores) {
      NodeState& state = nodes_[node_name];
      if (state.cores.empty()) state.cores = std::move(names);
    }

    if (window.events.first < window.events.second) {
      for (auto& [node_name, state] : nodes_) {
        if (state.parallel_counts.size() > kMaxKeptCounts) {
          state.parallel_counts.clear();
          state.sorted_counts.clear();
        }
      }
    }

    // Room for every loading time the model can still hold, once: grown by doubling, the vector's
    // last growth held the old and the new copy at once (~48 MB for 2 M times on a day's run).
    // Capacity never written is never resident, so the bound costs nothing.
    if (dataloading_time_s_.capacity() == 0) dataloading_time_s_.reserve(model.events().size() - window.events.first);
    // node name -> second -> distinct processes.
    std::map<std::string, std::map<int64_t, std::set<int32_t>>> buckets;
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const FrameworkEvent& event = model.events()[i];
      const std::string_view phase = model.String(event.phase);
      if (phase == kInitializePhase) {
        if (const EventArg* arg = model.FindArg(event, "pin_memory")) pin_memory_ = ArgJson(model, *arg);
        if (const EventArg* arg = model.FindArg(event, "num_workers")) num_workers_ = ArgJson(model, *arg);
      }
      if (phase == kWorkerPhase || phase == kIterPhase) {
        ++report_.datapoints;
        dataloading_time_s_.push_back(static_cast<double>(event.end_ns - event.start_ns) / 1e9);
        // Integer floor: a double cannot hold epoch nanoseconds exactly.
        const int64_t second = event.start_ns >= 0 ? event.start_ns / 1'000'000'000
                                                   : -((-event.start_ns + 999'999'999) / 1'000'000'000);
        buckets[NodeName(model, event.node)][second].insert(event.pid);
        prefetch_ = Prefetch::kUnknown;
      }
      if (model.String(event.name).find("Prefetch") != std::string_view::npos) prefetch_ = Prefetch::kTrue;
    }
    if (buckets.empty()) return report_.triggered > 0;

    const int64_t violations_before = report_.violations;
    for (auto& [node_name, per_second] : buckets) {
      NodeState& state = nodes_[node_name];
      for (uint32_t n = 0; n < model.nodes().size(); ++n) {
        if (model.nodes()[n].name == node_name) {
          state.node = n;
          state.fact_cores = model.nodes()[n].cpu_cores;
        }
      }
      for (const auto& [second, pids] : per_second) {
        const double count = static_cast<double>(pids.size());
        state.parallel_counts.push_back(count);
        state.sorted_counts.insert(std::upper_bound(state.sorted_counts.begin(), state.sorted_counts.end(), count),
                                   count);
      }
      // int(np.median(...)): truncation. (analysis::Median sorts a copy, then takes this.)
      state.median = static_cast<int64_t>(analysis::SortedQuantile(state.sorted_counts, 0.5));
      state.evaluated = true;
      const int64_t cores = state.core_count();
      if (state.parallel_counts.size() <= patience || cores <= 0) continue;
      const double cores_d = static_cast<double>(cores);
      if (static_cast<double>(state.median) < cores_d * (min_threshold / 100)) {
        ++report_.violations;
        findings_[node_name] = MakeFinding(window, state.node, node_name, state, /*too_few=*/true);
      }
      if (static_cast<double>(state.median) > cores_d * (max_threshold / 100)) {
        ++report_.violations;
        findings_[node_name] = MakeFinding(window, state.node, node_name, state, /*too_few=*/false);
      }
    }
    WriteDetails();
    if (report_.violations > violations_before) report_.last_trigger_ns = window.start_ns;
    if (report_.violations > 0) report_.triggered = 1;
    return report_.triggered > 0;
  }

  RuleReport Report() const override {
    RuleReport report = report_;
    report.parameters = parameters_.ReportString();
    // Every window that adds data-loading times ends with WriteDetails(), so the last one wrote
    // this key over all of dataloading_time_s_ as it is now.
    if (!dataloading_time_s_.empty()) {
      // Report() is const and may be called from several threads at once: the cache is shared.
      const std::lock_guard<std::mutex> lock(cache_mutex_);
      if (cached_time_count_ != dataloading_time_s_.size()) {
        cached_dataloading_time_ = DataloadingTimeJson();
        cached_time_count_ = dataloading_time_s_.size();
      }
      report.details["dataloading_time"] = cached_dataloading_time_;
    }
    for (const auto& [node_name, finding] : findings_) report.findings.push_back(finding);
    return report;
  }

 private:
  static std::string NodeName(const Model& model, uint32_t node) {
    return node < model.nodes().size() ? model.nodes()[node].name : std::to_string(node);
  }

  void WriteDetails() {
    nlohmann::json& details = report_.details;
    if (pin_memory_) details["pin_memory"] = *pin_memory_;
    if (num_workers_) details["num_workers"] = *num_workers_;
    if (prefetch_ != Prefetch::kUnknown) details["prefetch"] = prefetch_ == Prefetch::kTrue;

    // One node: the reference's keys. Several: the first node (by name) at the top level as well,
    // and every node under "nodes".
    size_t evaluated = 0;
    const NodeState* first = nullptr;
    for (const auto& [node_name, state] : nodes_) {
      if (!state.evaluated) continue;
      ++evaluated;
      if (first == nullptr) first = &state;
    }
    if (first != nullptr) {
      details["cores"] = first->core_count();
      details["dataloaders"] = first->median;
    }
    if (evaluated > 1) {
      nlohmann::json per_node = nlohmann::json::object();
      for (const auto& [node_name, state] : nodes_) {
        if (state.evaluated) per_node[node_name] = {{"cores", state.core_count()}, {"dataloaders", state.median}};
      }
      details["nodes"] = std::move(per_node);
    }

    // "dataloading_time" is added by Report().
  }

  // Details.dataloading_time over every data-loading time so far. Sorts the times in place
  // (the caller holds cache_mutex_): nothing reads their arrival order, and a sorted copy would
  // double what a day's millions of times hold; the next call's sort finds them nearly sorted.
  nlohmann::json DataloadingTimeJson() const {
    std::vector<double>& sorted = dataloading_time_s_;
    std::sort(sorted.begin(), sorted.end());
    // The histogram does not depend on the values' order.
    const analysis::Histogram histogram = analysis::EqualBinHistogram(sorted, kHistogramBins);
    nlohmann::json probs = nlohmann::json::array();
    for (double count : histogram.counts) probs.push_back(static_cast<int64_t>(count));
    // analysis::Quantile is SortedQuantile over a sorted copy.
    return {{"p25", analysis::SortedQuantile(sorted, 0.25)},
            {"p50", analysis::SortedQuantile(sorted, 0.50)},
            {"p95", analysis::SortedQuantile(sorted, 0.95)},
            {"probs", probs},
            {"binedges", histogram.edges}};
  }

  Finding MakeFinding(const Window& window, uint32_t node, const std::string& node_name, const NodeState& state,
                      bool too_few) const {
    const int64_t cores = state.core_count();
    Finding finding;
    finding.id = std::string(kRuleName) + "/" + node_name + "/" + (too_few ? "too_few" : "too_many");
    finding.rule = std::string(kRuleName);
    finding.severity = Severity::kWarning;
    finding.title = "A median of " + std::to_string(state.median) + " data-loader processes ran in parallel on " +
                    node_name + " with " + std::to_string(cores) + " cores (" +
                    (too_few ? "below " + parameters_.Text("min_threshold") : "above " + parameters_.Text("max_threshold")) +
                    " % of the cores)";
    const std::string workers = num_workers_ ? num_workers_->dump() : "unknown";
    const std::string pin = pin_memory_ ? pin_memory_->dump() : "unknown";
    if (too_few) {
      finding.recommendation = "Raise DataLoader(num_workers=...) from " + workers + " toward " + std::to_string(cores) +
                               " (the node's cores); set pin_memory=True (now " + pin +
                               ") when training on a GPU; keep batches in flight with prefetch_factor=2 or more.";
      finding.next_step = "Set num_workers to " + std::to_string(std::max<int64_t>(1, cores * 7 / 10)) +
                          " or more and compare the step time.";
      // More workers need free cores: on a full host, say who fills it instead.
      AdviseOnAFullHost(cpu_.Of(node), node_name, finding);
    } else {
      finding.recommendation = "Lower DataLoader(num_workers=...) from " + workers + " to at most " +
                               std::to_string(cores) +
                               " so the workers stop competing with the training process for the cores; "
                               "keep pin_memory=True and a small prefetch_factor instead.";
      finding.next_step = "Set num_workers to " + std::to_string(cores) + " and compare the step time.";
    }
    Evidence evidence;
    evidence.node = node_name;
    evidence.start_ns = window.start_ns;
    evidence.end_ns = window.end_ns;
    evidence.what = "median of " + std::to_string(state.parallel_counts.size()) +
                    " one-second counts of distinct data-loader processes: " + std::to_string(state.median);
    finding.evidence.push_back(std::move(evidence));
    return finding;
  }

  RuleReport report_;
  std::map<std::string, NodeState> nodes_;
  // Every data-loading time (s); Report() sorts it in place, so its order means nothing.
  mutable std::vector<double> dataloading_time_s_;
  // Report()'s Details.dataloading_time, valid while cached_time_count_ == dataloading_time_s_.size().
  mutable std::mutex cache_mutex_;
  mutable size_t cached_time_count_ = std::numeric_limits<size_t>::max();
  mutable nlohmann::json cached_dataloading_time_;
  std::map<std::string, Finding> findings_;  // per node: the latest out-of-bounds finding
  std::optional<nlohmann::json> pin_memory_;
  CpuHeadroomTally cpu_;  // host CPU vs the job's, for the advice
  std::optional<nlohmann::json> num_workers_;
  Prefetch prefetch_ = Prefetch::kFalse;
};

}  // namespace

std::unique_ptr<Rule> MakeDataloaderRule() { return std::make_unique<DataloaderRule>(); }

}  // namespace stepscope::rules
