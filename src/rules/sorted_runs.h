// A growing multiset of indices ordered by their values, that answers "how many values lie above
// x" and "which indices hold values above x" in O(log² n), with O(log n) amortised work per
// added index. The values are not kept here: the caller holds them and passes `value_of`
// (index -> double, the same value for an index every time) to each call.
//
// Why: rules that compare every value seen so far against a threshold that moves each window
// (StepOutlier: mean + stddev·σ of all steps so far) would otherwise rescan or re-sort the whole
// history in each of a run's windows, quadratic in the run's length. Keeping one sorted vector
// and merging each window's batch into it still moves the whole history once per window; this
// keeps sorted runs of geometrically decreasing sizes instead (a binary counter of runs, as in
// a log-structured merge tree), so each index is merged O(log n) times in all.
//
// Memory: 4 bytes an entry (a 32-bit index; the caller keeps its values anyway, and a second
// copy of them here cost StepOutlier 8 more bytes a step, ~2,000,000 steps on a day's run), and
// a merge holds both runs and their union for a moment.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace stepscope::rules {

class SortedRuns {
 public:
  // Adds a batch of indices (any order; each < 2^32). Their values must not be NaN.
  template <typename ValueOf>
  void Add(std::vector<uint32_t> batch, const ValueOf& value_of);

  size_t size() const { return size_; }
  // Values strictly greater than x.
  template <typename ValueOf>
  size_t CountAbove(double x, const ValueOf& value_of) const;
  // Values v with low <= v <= high.
  template <typename ValueOf>
  size_t CountBetween(double low, double high, const ValueOf& value_of) const;
  // The indices whose values are strictly greater than x, ascending (fastest when the indices
  // are dense, e.g. 0, 1, 2, ... in arrival order).
  template <typename ValueOf>
  std::vector<size_t> IndicesAbove(double x, const ValueOf& value_of) const;
  // Every value, ascending.
  template <typename ValueOf>
  std::vector<double> SortedValues(const ValueOf& value_of) const;

 private:
  using Run = std::vector<uint32_t>;  // indices, ascending by value
  template <typename ValueOf>
  static size_t FirstAbove(const Run& run, double x, const ValueOf& value_of) {
    return static_cast<size_t>(std::upper_bound(run.begin(), run.end(), x, [&](double v, uint32_t i) {
                                 return v < value_of(i);
                               }) - run.begin());
  }
  template <typename ValueOf>
  static size_t FirstAtLeast(const Run& run, double x, const ValueOf& value_of) {
    return static_cast<size_t>(std::lower_bound(run.begin(), run.end(), x, [&](uint32_t i, double v) {
                                 return value_of(i) < v;
                               }) - run.begin());
  }
  // Index lists of the values above x, one per run, into a sorted whole (a bitmap when dense).
  std::vector<size_t> Ascending(std::vector<size_t> indices, size_t count) const;

  std::vector<Run> runs_;  // sizes decrease geometrically
  size_t size_ = 0;
  size_t max_index_ = 0;
};

template <typename ValueOf>
void SortedRuns::Add(std::vector<uint32_t> batch, const ValueOf& value_of) {
  if (batch.empty()) return;
  size_ += batch.size();
  for (uint32_t index : batch) max_index_ = std::max<size_t>(max_index_, index);
  std::sort(batch.begin(), batch.end(), [&](uint32_t a, uint32_t b) { return value_of(a) < value_of(b); });
  runs_.push_back(std::move(batch));
  // Merge the newest run into its predecessor while it is at least half as large: run sizes then
  // at least halve from one run to the next, so there are O(log n) runs and every index takes
  // part in O(log n) merges.
  while (runs_.size() >= 2 && 2 * runs_.back().size() >= runs_[runs_.size() - 2].size()) {
    const Run newest = std::move(runs_.back());
    runs_.pop_back();
    Run& older = runs_.back();
    Run merged;
    merged.reserve(older.size() + newest.size());
    // As std::merge: on equal values the older run's entry first.
    std::merge(older.begin(), older.end(), newest.begin(), newest.end(), std::back_inserter(merged),
               [&](uint32_t a, uint32_t b) { return value_of(a) < value_of(b); });
    older = std::move(merged);
  }
}

template <typename ValueOf>
size_t SortedRuns::CountAbove(double x, const ValueOf& value_of) const {
  size_t count = 0;
  for (const Run& run : runs_) count += run.size() - FirstAbove(run, x, value_of);
  return count;
}

template <typename ValueOf>
size_t SortedRuns::CountBetween(double low, double high, const ValueOf& value_of) const {
  if (!(low <= high)) return 0;
  size_t count = 0;
  for (const Run& run : runs_) count += FirstAbove(run, high, value_of) - FirstAtLeast(run, low, value_of);
  return count;
}

template <typename ValueOf>
std::vector<size_t> SortedRuns::IndicesAbove(double x, const ValueOf& value_of) const {
  std::vector<size_t> indices;
  for (const Run& run : runs_) {
    for (size_t i = FirstAbove(run, x, value_of); i < run.size(); ++i) indices.push_back(run[i]);
  }
  const size_t count = indices.size();
  return Ascending(std::move(indices), count);
}

template <typename ValueOf>
std::vector<double> SortedRuns::SortedValues(const ValueOf& value_of) const {
  std::vector<double> values;
  values.reserve(size_);
  for (const Run& run : runs_) {
    const size_t middle = values.size();
    for (uint32_t index : run) values.push_back(value_of(index));
    std::inplace_merge(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  }
  return values;
}

}  // namespace stepscope::rules
