#include "rules/sorted_runs.h"

#include <algorithm>
#include <bit>

namespace stepscope::rules {
namespace {

// Index of the first value of `values` > x.
size_t FirstAbove(const std::vector<double>& values, double x) {
  return static_cast<size_t>(std::upper_bound(values.begin(), values.end(), x) - values.begin());
}

// Index of the first value of `values` >= x.
size_t FirstAtLeast(const std::vector<double>& values, double x) {
  return static_cast<size_t>(std::lower_bound(values.begin(), values.end(), x) - values.begin());
}

}  // namespace

void SortedRuns::Add(std::vector<Entry> batch) {
  if (batch.empty()) return;
  size_ += batch.size();
  for (const Entry& entry : batch) max_index_ = std::max(max_index_, entry.index);
  std::sort(batch.begin(), batch.end(), [](const Entry& a, const Entry& b) { return a.value < b.value; });
  Run run;
  run.values.reserve(batch.size());
  run.indices.reserve(batch.size());
  for (const Entry& entry : batch) {
    run.values.push_back(entry.value);
    run.indices.push_back(static_cast<uint32_t>(entry.index));
  }
  batch = {};
  runs_.push_back(std::move(run));
  // Merge the newest run into its predecessor while it is at least half as large: run sizes then
  // at least halve from one run to the next, so there are O(log n) runs and every value takes
  // part in O(log n) merges.
  while (runs_.size() >= 2 && 2 * runs_.back().values.size() >= runs_[runs_.size() - 2].values.size()) {
    const Run newest = std::move(runs_.back());
    runs_.pop_back();
    Run& older = runs_.back();
    Run merged;
    const size_t total = older.values.size() + newest.values.size();
    merged.values.reserve(total);
    merged.indices.reserve(total);
    // As std::merge: on equal values the older run's entry first.
    size_t a = 0, b = 0;
    while (a < older.values.size() || b < newest.values.size()) {
      const bool take_newest =
          a == older.values.size() || (b < newest.values.size() && newest.values[b] < older.values[a]);
      const Run& from = take_newest ? newest : older;
      size_t& at = take_newest ? b : a;
      merged.values.push_back(from.values[at]);
      merged.indices.push_back(from.indices[at]);
      ++at;
    }
    older = std::move(merged);
  }
}

size_t SortedRuns::CountAbove(double x) const {
  size_t count = 0;
  for (const Run& run : runs_) count += run.values.size() - FirstAbove(run.values, x);
  return count;
}

size_t SortedRuns::CountBetween(double low, double high) const {
  if (!(low <= high)) return 0;
  size_t count = 0;
  for (const Run& run : runs_) count += FirstAbove(run.values, high) - FirstAtLeast(run.values, low);
  return count;
}

std::vector<size_t> SortedRuns::IndicesAbove(double x) const {
  std::vector<size_t> indices;
  const size_t count = CountAbove(x);
  if (count == 0) return indices;
  indices.reserve(count);
  // Dense indices (the usual case: positions in arrival order): mark them in a bitmap and read
  // it out in order, O(max index / 64 + count) instead of a sort's O(count log count).
  const size_t words = max_index_ / 64 + 1;
  if (words <= 8 * count) {
    std::vector<uint64_t> bits(words, 0);
    for (const Run& run : runs_) {
      for (size_t i = FirstAbove(run.values, x); i < run.indices.size(); ++i) {
        bits[run.indices[i] / 64] |= uint64_t{1} << (run.indices[i] % 64);
      }
    }
    for (size_t word = 0; word < words; ++word) {
      for (uint64_t rest = bits[word]; rest != 0; rest &= rest - 1) {
        indices.push_back(word * 64 + static_cast<size_t>(std::countr_zero(rest)));
      }
    }
    // Equal indices (allowed, if unusual) were marked once: fall back to sorting.
    if (indices.size() == count) return indices;
    indices.clear();
  }
  for (const Run& run : runs_) {
    for (size_t i = FirstAbove(run.values, x); i < run.indices.size(); ++i) indices.push_back(run.indices[i]);
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

std::vector<double> SortedRuns::SortedValues() const {
  std::vector<double> values;
  values.reserve(size_);
  for (const Run& run : runs_) {
    const size_t middle = values.size();
    values.insert(values.end(), run.values.begin(), run.values.end());
    std::inplace_merge(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  }
  return values;
}

}  // namespace stepscope::rules
