#include "rules/sorted_runs.h"

#include <algorithm>
#include <bit>
#include <iterator>

namespace stepscope::rules {
namespace {

bool ByValue(const SortedRuns::Entry& a, const SortedRuns::Entry& b) { return a.value < b.value; }

// First entry of `run` with value > x.
std::vector<SortedRuns::Entry>::const_iterator FirstAbove(const std::vector<SortedRuns::Entry>& run, double x) {
  return std::upper_bound(run.begin(), run.end(), x,
                          [](double v, const SortedRuns::Entry& e) { return v < e.value; });
}

// First entry of `run` with value >= x.
std::vector<SortedRuns::Entry>::const_iterator FirstAtLeast(const std::vector<SortedRuns::Entry>& run, double x) {
  return std::lower_bound(run.begin(), run.end(), x,
                          [](const SortedRuns::Entry& e, double v) { return e.value < v; });
}

}  // namespace

void SortedRuns::Add(std::vector<Entry> batch) {
  if (batch.empty()) return;
  size_ += batch.size();
  for (const Entry& entry : batch) max_index_ = std::max(max_index_, entry.index);
  std::sort(batch.begin(), batch.end(), ByValue);
  runs_.push_back(std::move(batch));
  // Merge the newest run into its predecessor while it is at least half as large: run sizes then
  // at least halve from one run to the next, so there are O(log n) runs and every value takes
  // part in O(log n) merges.
  while (runs_.size() >= 2 && 2 * runs_.back().size() >= runs_[runs_.size() - 2].size()) {
    std::vector<Entry> newest = std::move(runs_.back());
    runs_.pop_back();
    std::vector<Entry>& older = runs_.back();
    std::vector<Entry> merged;
    merged.reserve(older.size() + newest.size());
    std::merge(older.begin(), older.end(), newest.begin(), newest.end(), std::back_inserter(merged), ByValue);
    older = std::move(merged);
  }
}

size_t SortedRuns::CountAbove(double x) const {
  size_t count = 0;
  for (const std::vector<Entry>& run : runs_) count += static_cast<size_t>(run.end() - FirstAbove(run, x));
  return count;
}

size_t SortedRuns::CountBetween(double low, double high) const {
  if (!(low <= high)) return 0;
  size_t count = 0;
  for (const std::vector<Entry>& run : runs_) {
    count += static_cast<size_t>(FirstAbove(run, high) - FirstAtLeast(run, low));
  }
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
    for (const std::vector<Entry>& run : runs_) {
      for (auto it = FirstAbove(run, x); it != run.end(); ++it) bits[it->index / 64] |= uint64_t{1} << (it->index % 64);
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
  for (const std::vector<Entry>& run : runs_) {
    for (auto it = FirstAbove(run, x); it != run.end(); ++it) indices.push_back(it->index);
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

std::vector<double> SortedRuns::SortedValues() const {
  std::vector<double> values;
  values.reserve(size_);
  for (const std::vector<Entry>& run : runs_) {
    const size_t middle = values.size();
    for (const Entry& entry : run) values.push_back(entry.value);
    std::inplace_merge(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  }
  return values;
}

}  // namespace stepscope::rules
