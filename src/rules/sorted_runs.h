// A growing multiset of (value, index) pairs that answers "how many values lie above x" and "which
// indices hold values above x" in O(log² n), with O(log n) amortised work per added value.
//
// Why: rules that compare every value seen so far against a threshold that moves each window
// (StepOutlier: mean + stddev·σ of all steps so far) would otherwise rescan or re-sort the whole
// history in each of a run's windows, quadratic in the run's length. Keeping one sorted vector
// and merging each window's batch into it still moves the whole history once per window; this
// keeps sorted runs of geometrically decreasing sizes instead (a binary counter of runs, as in
// a log-structured merge tree), so each value is merged O(log n) times in all.
//
// Memory: a run is two arrays, values and 32-bit indices: 12 bytes an entry where an array of
// (double, size_t) pairs takes 16, and a merge holds both runs and their union for a moment. A
// day's run holds ~350,000 steps per series (StepOutlier), the report's peak holds all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stepscope::rules {

class SortedRuns {
 public:
  struct Entry {
    double value = 0;
    size_t index = 0;  // the caller's position of the value (e.g. in its arrival order); < 2^32
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
  struct Run {
    std::vector<double> values;     // ascending
    std::vector<uint32_t> indices;  // indices[i] is the caller's index of values[i]
  };
  std::vector<Run> runs_;  // sizes decrease geometrically
  size_t size_ = 0;
  size_t max_index_ = 0;
};

}  // namespace stepscope::rules
