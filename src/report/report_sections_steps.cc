#include "report/report_sections_steps.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/numerics.h"
#include "analysis/step_times.h"
#include "analysis/vocabulary.h"
#include "base/json_fields.h"
#include "report/phase_display_names.h"
#include "report/report_model_series.h"
#include "rules/rank_step_times.h"

namespace stepscope::report {
namespace {


// The phase of a DataLoader worker's batch fetch (analysis/vocabulary.h PhaseForEventName).
constexpr std::string_view kDataLoaderWorkerPhase = "DataLoaderWorker";

struct Total {
  int64_t ns = 0;       // inclusive: what ran inside an operator counts in it too
  int64_t self_ns = 0;  // exclusive: its own time, the operators nested in it taken out
  int64_t calls = 0;
};

// Self time of operator spans: per thread (and device), a span's self time is its duration less
// the spans nested in it. Events arrive in start order, the longer first on equal starts, so a
// stack of the open spans finds each one's parent. Only the top of a stack ever shrinks, so a
// span's self time is final once it leaves its stack: it is added to its total then, and
// nothing per event outlives its stack (a day's run has millions of operator spans).
class SelfTimes {
 public:
  // Adds `event`'s self time to `total->self_ns` once it is settled; its parent's shrinks.
  void Add(const analysis::FrameworkEvent& event, Total* total) {
    std::vector<Open>& stack = stacks_[{event.node, event.pid, event.tid, event.device}];
    while (!stack.empty() && stack.back().end_ns <= event.start_ns) Settle(stack);
    if (!stack.empty()) {
      const int64_t nested = std::min(event.end_ns, stack.back().end_ns) - event.start_ns;
      stack.back().self_ns -= std::max<int64_t>(nested, 0);
    }
    stack.push_back({event.end_ns, event.duration_ns(), total});
  }
  // Settles the spans still open (those the last events of their thread left).
  void Finish() {
    for (auto& [key, stack] : stacks_) {
      while (!stack.empty()) Settle(stack);
    }
  }

 private:
  struct Open {
    int64_t end_ns;
    int64_t self_ns;
    Total* total;
  };
  static void Settle(std::vector<Open>& stack) {
    stack.back().total->self_ns += std::max<int64_t>(stack.back().self_ns, 0);
    stack.pop_back();
  }
  std::map<std::tuple<uint32_t, int32_t, int64_t, int32_t>, std::vector<Open>> stacks_;
};

// The top kMaxTableRows of `totals` by self time (ties by name), each with its share of all
// operators' self time: nested operators are not counted twice, so the shares add up to 100 %.
nlohmann::json OperatorRows(const analysis::Model& model, const std::unordered_map<analysis::StringId, Total>& totals) {
  std::vector<std::pair<analysis::StringId, Total>> rows(totals.begin(), totals.end());
  int64_t all_self_ns = 0;
  for (const auto& [name, total] : rows) all_self_ns += total.self_ns;
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    if (a.second.self_ns != b.second.self_ns) return a.second.self_ns > b.second.self_ns;
    return model.String(a.first) < model.String(b.first);
  });
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < rows.size() && i < kMaxTableRows; ++i) {
    const Total& total = rows[i].second;
    out.push_back({{"name", model.String(rows[i].first)},
                   {"total_ms", NsToMs(total.ns)},
                   {"self_ms", NsToMs(total.self_ns)},
                   {"share", all_self_ns > 0 ? static_cast<double>(total.self_ns) / static_cast<double>(all_self_ns)
                                             : 0.0},
                   {"calls", total.calls}});
  }
  return out;
}

// DataLoader worker processes: (node, pid) of every process with a DataLoaderWorker span and no
// step of its own (a training process that loads in-process, num_workers=0, stays a trainer).
std::set<std::pair<uint32_t, int32_t>> DataLoaderWorkerProcesses(const analysis::Model& model) {
  const analysis::StringId worker_phase = model.FindString(kDataLoaderWorkerPhase);
  std::set<std::pair<uint32_t, int32_t>> workers, trainers;
  if (worker_phase == analysis::kEmptyString) return workers;
  for (const analysis::FrameworkEvent& event : model.events()) {
    if (event.kind != analysis::EventKind::kSpan) continue;
    if (event.phase == worker_phase) workers.emplace(event.node, event.pid);
    else if (model.StepPhaseOf(event) != analysis::StepPhase::kNone) trainers.emplace(event.node, event.pid);
  }
  for (const auto& trainer : trainers) workers.erase(trainer);
  return workers;
}

// Per rank and step phase on every node that ran several ranks (rules/rank_step_times.h).
nlohmann::json RankRows(const analysis::Model& model, const std::vector<rules::RankStepTimes>& ranks) {
  nlohmann::json rows = nlohmann::json::array();
  for (const rules::RankStepTimes& rank : ranks) {
    rows.push_back({{"node", model.nodes()[rank.node].name},
                    {"rank", rank.rank},
                    {"local_rank", rank.local_rank},
                    {"world_size", rank.world_size},
                    {"pid", rank.pid},
                    {"pids", rank.pids},
                    {"phase", rank.phase},
                    {"count", rank.step_ms.size()},
                    {"mean_ms", analysis::Mean(rank.step_ms)},
                    {"p50_ms", analysis::SortedQuantile(rank.step_ms, 0.50)},
                    {"p95_ms", analysis::SortedQuantile(rank.step_ms, 0.95)},
                    {"max_ms", rank.step_ms.back()},
                    {"backward_p50_ms", analysis::SortedQuantile(rank.backward_ms, 0.50)},
                    {"outside_backward_p50_ms", analysis::SortedQuantile(rank.outside_backward_ms, 0.50)},
                    {"data_wait_share", rank.data_wait_share()}});
  }
  return rows;
}


// One series of the shared step-duration histogram: a node's steps of one phase, or one rank's
// on a node that ran several.
struct DurationSeries {
  std::string label;
  std::string node;
  std::string phase;
  int32_t rank = -1;
  const std::vector<double>* duration_ms = nullptr;
};

// SageMaker's step-duration chart: one histogram, a series per node (per rank where a node ran
// several), all on the same bin edges so the bars line up and a legend click compares them.
// Equal bins from the smallest to the largest duration of any series.
nlohmann::json SharedHistogram(const std::vector<DurationSeries>& series) {
  // Equal bins depend only on the smallest and the largest value: the edges of those two are
  // those of every duration (without copying a day's millions of them together).
  std::vector<double> extremes;
  for (const DurationSeries& s : series) {
    if (s.duration_ms->empty()) continue;
    const auto [min_it, max_it] = std::minmax_element(s.duration_ms->begin(), s.duration_ms->end());
    if (extremes.empty()) extremes = {*min_it, *max_it};
    extremes = {std::min(extremes[0], *min_it), std::max(extremes[1], *max_it)};
  }
  std::vector<double> edges = analysis::EqualBinHistogram(extremes, kStepHistogramBins).edges;
  // Rounded before counting, so the counts are those of the edges the document carries; the
  // outer edges outwards, so the shortest and the longest step stay inside.
  const double first = std::floor(edges.front() * 1e4) / 1e4, last = std::ceil(edges.back() * 1e4) / 1e4;
  for (double& edge : edges) edge = RoundForChart(edge);
  edges.front() = first;
  edges.back() = last;
  nlohmann::json out = nlohmann::json::array();
  for (const DurationSeries& s : series) {
    nlohmann::json counts = nlohmann::json::array();
    for (double count : analysis::EdgeHistogram(*s.duration_ms, edges).counts) counts.push_back(static_cast<int64_t>(count));
    out.push_back({{"label", s.label},
                   {"node", s.node},
                   {"phase", s.phase},
                   {"rank", s.rank >= 0 ? nlohmann::json(s.rank) : nlohmann::json()},
                   {"counts", std::move(counts)}});
  }
  return {{"bin_edges_ms", edges}, {"series", std::move(out)}};
}

// StepOutlier's outlier step numbers for (node, phase), read in both of its shapes (RULES.md §5):
// step_details[node] = {"phase", "step_numbers", ...} when the node has one phase (the
// reference's shape, which writes the numbers as strings), step_details[node][phase] = {...}
// when two phases each had enough steps.
nlohmann::json StepOutlierNumbers(const nlohmann::json& step_details, const std::string& node,
                                  std::string_view full_phase) {
  const nlohmann::json entry = JsonObject(step_details, node.c_str());
  const std::string phase(full_phase);
  const nlohmann::json numbers = entry.contains("step_numbers") && JsonString(entry, "phase") == phase
                                     ? JsonArray(entry, "step_numbers")
                                     : JsonArray(JsonObject(entry, phase.c_str()), "step_numbers");
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& number : numbers) {
    int64_t step = 0;
    if (number.is_number_integer()) {
      out.push_back(number.get<int64_t>());
    } else if (number.is_string()) {
      const std::string text = number.get<std::string>();
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), step);
      if (error == std::errc() && end == text.data() + text.size()) out.push_back(step);
    }
  }
  return out;
}

// StepOutlier's outlier steps with their durations, so the page marks them on the per-step line
// even where downsampling dropped them from it. A step number that several ranks ran is marked
// at its longest duration, the one that stood out.
nlohmann::json OutlierPoints(const analysis::Model& model, const nlohmann::json& outliers,
                             const analysis::StepTimeGroup& group) {
  std::unordered_map<int64_t, double> longest_ms;
  for (const nlohmann::json& step : outliers) {
    if (step.is_number_integer()) longest_ms.emplace(step.get<int64_t>(), -1.0);
  }
  for (size_t i = 0; i < group.measured.size(); ++i) {
    auto it = longest_ms.find(model.events()[group.measured[i]].step);
    if (it != longest_ms.end()) it->second = std::max(it->second, group.duration_ms[i]);
  }
  nlohmann::json point_steps = nlohmann::json::array(), point_ms = nlohmann::json::array();
  for (size_t i = 0; i < outliers.size() && point_steps.size() < kMaxPointsPerSeries; ++i) {
    if (!outliers[i].is_number_integer()) continue;
    const double ms = longest_ms.at(outliers[i].get<int64_t>());
    if (ms < 0) continue;  // a step left out of the statistics (a detail window ran in it)
    point_steps.push_back(outliers[i]);
    point_ms.push_back(RoundForChart(ms));
  }
  return {{"step", std::move(point_steps)}, {"duration_ms", std::move(point_ms)}};
}

}  // namespace

nlohmann::json BuildFrameworkSection(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  // Buckets by phase, first match, as RULES.md §11: "cpu" -> CPU operators, "gpu" -> GPU
  // operators, "Step" -> step time, per-module passes skipped, everything else "general".
  enum class Bucket : uint8_t { kCpu, kGpu, kStep, kSkip, kGeneral };
  std::unordered_map<analysis::StringId, Bucket> bucket_of;
  std::unordered_map<analysis::StringId, Total> cpu, gpu;
  std::map<std::string, int64_t> step_ns;  // by step phase ("TRAIN")
  std::unordered_map<analysis::StringId, int64_t> general_ns;
  // Self times are settled only when every nested span is seen: collected per event first.
  SelfTimes self_times;
  int64_t first_step_ns = INT64_MAX, last_step_end_ns = INT64_MIN, all_steps_ns = 0;
  size_t counted = 0;
  // DataLoader workers run beside the training processes: their busy time overlaps the loop's
  // wall time, so it is kept apart from the general phases instead of added to them.
  const std::set<std::pair<uint32_t, int32_t>> workers = DataLoaderWorkerProcesses(model);
  std::map<std::string, int64_t> worker_ns;  // by display name
  for (const analysis::FrameworkEvent& event : model.events()) {
    if (event.kind != analysis::EventKind::kSpan) continue;
    auto [it, inserted] = bucket_of.try_emplace(event.phase, Bucket::kGeneral);
    if (inserted) {
      const std::string_view phase = model.String(event.phase);
      if (phase.find("cpu") != std::string_view::npos) it->second = Bucket::kCpu;
      else if (phase.find("gpu") != std::string_view::npos) it->second = Bucket::kGpu;
      // Training steps only: a phase of the step named like one (OptimizerStep) is framework
      // time inside the steps, counted once, as Forward and Backward are.
      else if (phase.find("Step") != std::string_view::npos && model.StepPhaseOf(event) != analysis::StepPhase::kNone)
        it->second = Bucket::kStep;
      else if (phase.ends_with("-SubModuleInternal") || phase == analysis::kStepscopePhase || phase.empty())
        it->second = Bucket::kSkip;
    }
    const int64_t duration_ns = event.duration_ns();
    switch (it->second) {
      case Bucket::kCpu:
      case Bucket::kGpu: {
        Total& total = (it->second == Bucket::kCpu ? cpu : gpu)[event.name];
        total.ns += duration_ns;
        ++total.calls;
        self_times.Add(event, &total);
        break;
      }
      case Bucket::kStep: {
        step_ns[analysis::StepPhaseName(model.StepPhaseOf(event))] += duration_ns;
        all_steps_ns += duration_ns;
        first_step_ns = std::min(first_step_ns, event.start_ns);
        last_step_end_ns = std::max(last_step_end_ns, event.end_ns);
        break;
      }
      case Bucket::kGeneral:
        if (workers.contains({event.node, event.pid})) worker_ns[PhaseDisplayName(model.String(event.phase))] += duration_ns;
        else general_ns[event.phase] += duration_ns;
        break;
      case Bucket::kSkip: continue;
    }
    ++counted;
  }
  self_times.Finish();
  if (counted == 0) {
    return Unavailable("No framework event was recorded (" + SourceDescription(model) +
                       "): annotate the training loop (stepscope.step(), the torch integration) to see where its "
                       "time goes.");
  }
  nlohmann::json phases = {{"TRAIN_s", 0.0}, {"EVAL_s", 0.0}};
  for (const auto& [phase, ns] : step_ns) phases[phase + "_s"] = NsToS(ns);
  // Time between steps inside the loop: what the reference calls "others".
  phases["others_s"] = first_step_ns <= last_step_end_ns
                           ? std::max(0.0, NsToS(last_step_end_ns - first_step_ns - all_steps_ns))
                           : 0.0;
  // By readable name: two phases may share one ("cuda_runtime" and "cat:cuda_runtime"), their
  // times add up.
  std::map<std::string, int64_t> general_by_name;
  for (const auto& [phase, ns] : general_ns) general_by_name[PhaseDisplayName(model.String(phase))] += ns;
  std::vector<std::pair<std::string, int64_t>> general_rows(general_by_name.begin(), general_by_name.end());
  std::sort(general_rows.begin(), general_rows.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  nlohmann::json general = nlohmann::json::object();
  for (size_t i = 0; i < general_rows.size() && i < kMaxTableRows; ++i) {
    general[general_rows[i].first] = NsToS(general_rows[i].second);
  }
  int64_t all_worker_ns = 0;
  nlohmann::json worker_phases = nlohmann::json::object();
  for (const auto& [name, ns] : worker_ns) {
    worker_phases[name] = NsToS(ns);
    all_worker_ns += ns;
  }
  return {{"available", true},
          {"phases", std::move(phases)},
          {"general", std::move(general)},
          {"workers",
           {{"processes", workers.size()}, {"busy_s", NsToS(all_worker_ns)}, {"phases", std::move(worker_phases)}}},
          {"cpu_operators", OperatorRows(model, cpu)},
          {"gpu_operators", OperatorRows(model, gpu)}};
}

nlohmann::json BuildStepsSection(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  const std::vector<analysis::StepTimeGroup> groups = analysis::GroupStepTimes(model);
  if (groups.empty()) {
    return Unavailable("No training step was recorded (" + SourceDescription(model) +
                       "): mark steps with stepscope.step() or the torch integration.");
  }
  const nlohmann::json outliers_by_node = JsonObject(context.Details("StepOutlier"), "step_details");
  const std::vector<rules::RankStepTimes> rank_times = rules::CollectRankStepTimes(model);
  std::vector<DurationSeries> histogram_series;
  nlohmann::json nodes = nlohmann::json::array();
  for (const analysis::StepTimeGroup& group : groups) {
    // Steps stepscope's detail windows ran in are left out of the statistics (the summary does
    // the same: analysis/step_times.h); a phase with no other step has nothing to show.
    if (group.measured.empty()) continue;
    const std::string& node = model.nodes()[group.node].name;
    const std::string_view full_phase = model.String(group.phase);
    const std::string_view phase = analysis::StepPhaseName(model.StepPhaseOfId(group.phase));
    const std::vector<double>& duration_ms = group.duration_ms;
    std::vector<double> sorted = duration_ms;
    std::sort(sorted.begin(), sorted.end());
    const nlohmann::json outliers = StepOutlierNumbers(outliers_by_node, node, full_phase);
    bool per_rank = false;
    for (const rules::RankStepTimes& rank : rank_times) {
      if (rank.node != group.node || rank.phase != phase) continue;
      per_rank = true;
      histogram_series.push_back({node + " · rank " + std::to_string(rank.rank) + " · " + std::string(phase), node,
                                  std::string(phase), rank.rank, &rank.step_ms});
    }
    if (!per_rank) histogram_series.push_back({node + " · " + std::string(phase), node, std::string(phase), -1, &duration_ms});

    const std::vector<size_t> kept = MinMaxDownsample(duration_ms, kMaxPointsPerSeries);
    nlohmann::json series_steps = nlohmann::json::array(), series_ms = nlohmann::json::array();
    for (size_t i : kept) {
      series_steps.push_back(model.events()[group.measured[i]].step);
      series_ms.push_back(RoundForChart(duration_ms[i]));
    }
    nlohmann::json bounded_outliers = nlohmann::json::array();
    for (size_t i = 0; i < outliers.size() && i < kMaxPointsPerSeries; ++i) bounded_outliers.push_back(outliers[i]);
    nodes.push_back({{"node", node},
                     {"phase", phase},
                     {"count", group.measured.size()},
                     {"disturbed", group.disturbed},
                     {"mean_ms", analysis::Mean(duration_ms)},
                     {"std_ms", analysis::StdDev(duration_ms)},
                     {"min_ms", sorted.front()},
                     {"p50_ms", analysis::SortedQuantile(sorted, 0.50)},
                     {"p95_ms", analysis::SortedQuantile(sorted, 0.95)},
                     {"p99_ms", analysis::SortedQuantile(sorted, 0.99)},
                     {"max_ms", sorted.back()},
                     {"outliers", std::move(bounded_outliers)},
                     {"outliers_total", outliers.size()},
                     {"outlier_points", OutlierPoints(model, outliers, group)},
                     {"series",
                      {{"step", std::move(series_steps)},
                       {"duration_ms", std::move(series_ms)},
                       {"downsampled", kept.size() < duration_ms.size()},
                       {"original_points", duration_ms.size()}}}});
  }
  nlohmann::json histogram = SharedHistogram(histogram_series);
  nlohmann::json ranks = RankRows(model, rank_times);
  const size_t ranks_total = ranks.size();
  if (ranks.size() > kMaxTableRows) ranks.erase(ranks.begin() + kMaxTableRows, ranks.end());
  return {{"available", true},
          {"nodes", std::move(nodes)},
          {"histogram", std::move(histogram)},
          {"ranks", std::move(ranks)},
          {"ranks_total", ranks_total}};
}

}  // namespace stepscope::report
