#include "server/run_views.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/vocabulary.h"
#include "rules/step_facts.h"
#include "server/series_buckets.h"

namespace stepscope::server {

std::string SeriesMetricKey(const analysis::Model& model, const analysis::SystemSeries& series) {
  const std::string_view type = model.String(series.type), name = model.String(series.name),
                         dimension = model.String(series.dimension);
  std::string metric = analysis::MetricForSeriesKey(type, name, dimension);
  if (!metric.empty()) return metric;
  return std::string(type) + "/" + std::string(name) + "/" + std::string(dimension);
}

bool MetricKeyMatches(std::string_view pattern, std::string_view key) {
  // Classic glob with one backtrack point: '*' is the only metacharacter.
  size_t p = 0, k = 0, star = std::string_view::npos, resume = 0;
  while (k < key.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = k;
    } else if (p < pattern.size() && pattern[p] == key[k]) {
      ++p;
      ++k;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      k = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

nlohmann::json SeriesAnswer(const analysis::Model& model, const SeriesQuery& query) {
  int64_t first_ns = 0, last_ns = 0;
  std::set<std::string> available;
  std::vector<std::pair<const analysis::SystemSeries*, std::string>> chosen;
  for (const analysis::SystemSeries& series : model.series()) {
    if (series.time_ns.empty()) continue;
    first_ns = first_ns == 0 ? series.time_ns.front() : std::min(first_ns, series.time_ns.front());
    last_ns = std::max(last_ns, series.time_ns.back());
    std::string key = SeriesMetricKey(model, series);
    const bool wanted = std::any_of(query.keys.begin(), query.keys.end(),
                                    [&](const std::string& pattern) { return MetricKeyMatches(pattern, key); });
    if (wanted && chosen.size() < kMaxSeriesPerAnswer) chosen.emplace_back(&series, key);
    available.insert(std::move(key));
  }
  const int64_t from_ns = query.from_ns > 0 ? query.from_ns : first_ns;
  const int64_t to_ns = query.to_ns > 0 ? query.to_ns : last_ns;
  nlohmann::json answer = {{"from_ns", from_ns}, {"to_ns", to_ns}, {"bucket_ns", 0},
                           {"keys", available}, {"series", nlohmann::json::array()}};
  for (const auto& [series, key] : chosen) {
    const Buckets buckets = BucketSamples(series->time_ns, series->value, from_ns, to_ns, query.points);
    answer["bucket_ns"] = std::max<int64_t>(answer["bucket_ns"].get<int64_t>(), buckets.bucket_ns);
    const std::string node = series->node < model.nodes().size() ? model.nodes()[series->node].name : "";
    answer["series"].push_back({{"node", node}, {"key", key}, {"t_ns", buckets.t_ns}, {"min", buckets.min},
                                {"max", buckets.max}, {"mean", buckets.mean}});
  }
  return answer;
}

nlohmann::json RecentStepsAnswer(const analysis::Model& model, size_t last) {
  last = std::clamp<size_t>(last, 1, kMaxRecentSteps);
  // The earliest start among each (node, pid)'s last `last` steps bounds the window measured.
  std::map<std::pair<uint32_t, int32_t>, std::vector<int64_t>> starts;
  for (uint32_t index : model.steps()) {
    const analysis::FrameworkEvent& step = model.events()[index];
    if (step.kind == analysis::EventKind::kSpan) starts[{step.node, step.pid}].push_back(step.start_ns);
  }
  nlohmann::json answer = {{"steps", nlohmann::json::array()}};
  if (starts.empty()) return answer;
  int64_t window_start_ns = INT64_MAX;
  for (const auto& [key, times] : starts) {
    window_start_ns = std::min(window_start_ns, times[times.size() > last ? times.size() - last : 0]);
  }
  rules::Window window;
  window.model = &model;
  window.start_ns = window_start_ns;
  window.end_ns = model.last_ns() + 1;
  window.events = model.EventsStartingIn(window.start_ns, window.end_ns);
  std::map<std::pair<uint32_t, int32_t>, std::vector<rules::StepFacts>> per_process;
  for (rules::StepFacts& step : rules::CollectStepFacts(window)) {
    per_process[{step.node, step.pid}].push_back(std::move(step));
  }
  for (auto& [key, steps] : per_process) {
    const size_t skip = steps.size() > last ? steps.size() - last : 0;
    for (size_t i = skip; i < steps.size(); ++i) {
      const rules::StepFacts& step = steps[i];
      const int64_t known = step.forward_ns + step.backward_ns + step.optimizer_ns + step.data_wait_ns;
      auto ms = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
      const nlohmann::json parts = nlohmann::json::array({
          {{"name", "forward"}, {"ms", ms(step.forward_ns)}},
          {{"name", "backward"}, {"ms", ms(step.backward_ns)}},
          {{"name", "optimizer"}, {"ms", ms(step.optimizer_ns)}},
          {{"name", "data wait"}, {"ms", ms(step.data_wait_ns)}},
          {{"name", "other"}, {"ms", ms(std::max<int64_t>(step.duration_ns() - known, 0))}},
      });
      answer["steps"].push_back({{"node", step.node < model.nodes().size() ? model.nodes()[step.node].name : ""},
                                 {"rank", step.rank >= 0 ? nlohmann::json(step.rank) : nlohmann::json(nullptr)},
                                 {"pid", step.pid},
                                 {"step", step.number},
                                 {"phase", step.phase},
                                 {"start_ns", step.start_ns},
                                 {"end_ns", step.end_ns},
                                 {"duration_ms", ms(step.duration_ns())},
                                 {"disturbed", step.disturbed},
                                 {"parts", parts}});
    }
  }
  return answer;
}

}  // namespace stepscope::server
