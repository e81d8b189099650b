// A growing multiset of (value, index) pairs that answers "how many values lie above x" and "which
// indices hold values above x" in O(log² n), with O(log n) amortised work per added value.
//
// Why: rules that compare every value seen so far against a threshold that moves each window
// (StepOutlier: mean + stddev·σ of all steps so far) would otherwise rescan or re-sort the whole
// history in each of a run's windows, quadratic in the run's length. Keeping one sorted vector
// and merging each window's batch into it still moves the whole history once per window; this
// keeps sorted runs of geometrically decreasing sizes instead (a binary counter of runs, as in
// a log-structured merge tree), so each value is merged O(log n) times in all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stepscope::rules {

class SortedRuns {
 public:
  struct Entry {
    double value = 0;
    size_t index = 0;  // the caller's position of the value (e.g. in its arrival order)
  };

  // Adds a batch (any order). NaN values are not supported (callers add finite durations).
  void Add(std::vector<Entry> batch);

  size_t size() const { return size_; }
  // Values strictly greater than x.
  size_t CountAbove(double x) const;
  // Values v with low <= v <= high.
  size_t CountBetween(double low, double high) const;
  // The indices of the values strictly greater than x, ascending (fastest when the indices are
  // dense, e.g. 0, 1, 2, ... in arrival order).
  std::vector<size_t> IndicesAbove(double x) const;
  // Every value, ascending.
  std::vector<double> SortedValues() const;

 private:
  std::vector<std::vector<Entry>> runs_;  // each sorted by value; sizes decrease geometrically
  size_t size_ = 0;
  size_t max_index_ = 0;
};

}  // namespace stepscope::rules
