#include "rules/series_history.h"

#include <algorithm>

#include "rules/system_totals.h"

namespace stepscope::rules {

SeriesHistory::SeriesHistory(uint32_t node, std::string_view name, std::string_view dimension,
                             size_t recent_capacity)
    : node_(node), name_(name), dimension_(dimension), recent_capacity_(recent_capacity) {}

void SeriesHistory::Take(const Window& window, size_t series_index, size_t begin, size_t end) {
  const analysis::SystemSeries& series = window.model->series()[series_index];
  series_index_ = series_index;
  last_taken_ = std::span<const double>(series.value).subspan(begin, end - begin);
  size_ += end - begin;

  const size_t window_first = SampleRange(window, series_index).first;
  const TakenSamples taken{window.start_ns, window.end_ns, begin - window_first, end - window_first};
  // GPUMemoryIncrease takes a window's samples one at a time: one entry for the run of them.
  if (!unsorted_.empty() && unsorted_.back().start_ns == taken.start_ns && unsorted_.back().end == taken.begin) {
    unsorted_.back().end = taken.end;
  } else {
    unsorted_.push_back(taken);
  }

  if (recent_capacity_ == 0) return;
  for (double value : last_taken_) {
    if (recent_.size() == 2 * recent_capacity_) recent_.erase(recent_.begin(), recent_.begin() + recent_capacity_);
    recent_.push_back(value);
  }
}

std::span<const double> SeriesHistory::Recent(size_t count) const {
  return std::span<const double>(recent_).last(std::min({count, recent_capacity_, recent_.size()}));
}

const analysis::SystemSeries* SeriesHistory::FindSeries(const analysis::Model& model) {
  const auto is_this = [&](const analysis::SystemSeries& series) {
    return series.node == node_ && model.String(series.name) == name_ && model.String(series.dimension) == dimension_;
  };
  if (series_index_ < model.series().size() && is_this(model.series()[series_index_])) {
    return &model.series()[series_index_];
  }
  for (size_t i = 0; i < model.series().size(); ++i) {
    if (!is_this(model.series()[i])) continue;
    series_index_ = i;
    return &model.series()[i];
  }
  return nullptr;
}

const std::vector<double>& SeriesHistory::Sorted(const analysis::Model& model) {
  if (unsorted_.empty()) return sorted_;
  const analysis::SystemSeries* series = FindSeries(model);
  if (series == nullptr) return sorted_;
  if (sorted_.empty()) {
    // Room for the whole series at once (and the few window-edge samples taken twice): grown by
    // doubling, a day's copy would hold up to twice its samples.
    sorted_.reserve(series->value.size() + series->value.size() / 32 + 16);
  }
  std::vector<double> added;
  for (const TakenSamples& taken : unsorted_) {
    const size_t window_first = analysis::Model::SamplesIn(*series, taken.start_ns, taken.end_ns).first;
    // Bounded by the series: a model that is not the run's (a misuse) must not index past it.
    const size_t begin = std::min(window_first + taken.begin, series->value.size());
    const size_t end = std::min(window_first + taken.end, series->value.size());
    added.insert(added.end(), series->value.begin() + static_cast<std::ptrdiff_t>(begin),
                 series->value.begin() + static_cast<std::ptrdiff_t>(end));
  }
  unsorted_.clear();
  MergeSorted(&sorted_, added);
  return sorted_;
}

void SeriesHistories::Take(const Window& window, size_t recent_capacity) {
  if (window.model == nullptr) return;
  const analysis::Model& model = *window.model;
  for (size_t i = 0; i < model.series().size(); ++i) {
    const analysis::SystemSeries& series = model.series()[i];
    if (model.String(series.dimension) != dimension_) continue;
    const auto [begin, end] = SampleRange(window, i);
    if (begin >= end) continue;
    const std::string_view name = model.String(series.name);
    SeriesHistory* history = FindMutable(series.node, name);
    if (history == nullptr) {
      // Node-major: after the last history of the same or a lower node.
      auto position = std::find_if(histories_.begin(), histories_.end(),
                                   [&](const SeriesHistory& other) { return other.node() > series.node; });
      history = &*histories_.insert(position, SeriesHistory(series.node, name, dimension_, recent_capacity));
    }
    history->Take(window, i, begin, end);
  }
}

const SeriesHistory* SeriesHistories::Find(uint32_t node, std::string_view name) const {
  for (const SeriesHistory& history : histories_) {
    if (history.node() == node && history.name() == name) return &history;
  }
  return nullptr;
}

}  // namespace stepscope::rules
