// What a sticky system rule has seen of one series (shared/RULES.md §3 LowGPUUtilization, §4
// BatchSize, §7 LoadBalancing, §8 GPUMemoryIncrease): the reference keeps every value of every
// window in time order, a sample on a window edge twice (it belongs to both windows), and reads
// the last few of them each window and, on a violation, statistics over all of them.
//
// Why no copy of the values: the model already holds every sample, and each rule's own copy of a
// day's series (172,800 samples × 8 B per GPU, several rules, several GPUs) was held together
// with the model at the report's peak. A history keeps only what the rules read: how many values
// it has taken, the last `recent_capacity` of them (a bounded tail), and, once a rule first asks
// for statistics over all of them, a sorted copy, brought up to date from the model's samples of
// the windows taken since the last such question (only violations ask, so a run without them
// never sorts).
//
// Taken windows are remembered by time, not by sample index: online, each window may come with
// a fresh reload of the run, in which a completed window's samples are the same ones at the same
// times (the driver only evaluates complete windows), but other series may sit elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/model.h"
#include "rules/rule.h"

namespace stepscope::rules {

class SeriesHistory {
 public:
  // `recent_capacity`: how many of the latest values Recent() can return (0: none are kept).
  SeriesHistory(uint32_t node, std::string_view name, std::string_view dimension, size_t recent_capacity);

  uint32_t node() const { return node_; }
  const std::string& name() const { return name_; }  // "gpu0"
  // Values taken so far (a window-edge sample taken in two windows counts twice).
  size_t size() const { return size_; }

  // Takes samples [begin, end) of series `series_index` of `window.model`, which lie in the
  // window (within window.samples[series_index]), after every value taken before.
  void Take(const Window& window, size_t series_index, size_t begin, size_t end);
  // The values of the last Take, in the model that Take was given (valid while it is).
  std::span<const double> last_taken() const { return last_taken_; }
  // The last min(count, size()) values, oldest first; `count` <= recent_capacity.
  std::span<const double> Recent(size_t count) const;
  // Every value taken, ascending; `model` is the model of the latest Take.
  const std::vector<double>& Sorted(const analysis::Model& model);

 private:
  // Samples [begin, end) of those the window [start_ns, end_ns] holds of this series, as offsets
  // from the window's first sample of it (Model::SamplesIn).
  struct TakenSamples {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    size_t begin = 0;
    size_t end = 0;
  };
  // This history's series in `model` (nullptr when the model has none).
  const analysis::SystemSeries* FindSeries(const analysis::Model& model);

  uint32_t node_;
  std::string name_;
  std::string dimension_;
  size_t recent_capacity_;
  size_t size_ = 0;
  size_t series_index_ = 0;  // where the series was in the latest model: checked before use
  std::span<const double> last_taken_;
  // The latest values, oldest first: up to twice the capacity, halved when full, so that
  // taking a value costs O(1) amortised and Recent() is one contiguous span.
  std::vector<double> recent_;
  std::vector<TakenSamples> unsorted_;  // taken since the last Sorted(), in order
  std::vector<double> sorted_;
};

// The histories of every series of one dimension ("GPUUtilization"), node-major, in first-seen
// order within a node.
class SeriesHistories {
 public:
  explicit SeriesHistories(std::string dimension) : dimension_(std::move(dimension)) {}
  // Takes the window's samples of every series of the dimension. `recent_capacity`: see
  // SeriesHistory (a rule's parameter, fixed before its first window).
  void Take(const Window& window, size_t recent_capacity);
  const std::vector<SeriesHistory>& all() const { return histories_; }
  std::vector<SeriesHistory>& mutable_all() { return histories_; }
  const SeriesHistory* Find(uint32_t node, std::string_view name) const;
  SeriesHistory* FindMutable(uint32_t node, std::string_view name) {
    return const_cast<SeriesHistory*>(static_cast<const SeriesHistories*>(this)->Find(node, name));
  }

 private:
  std::string dimension_;
  std::vector<SeriesHistory> histories_;
};

}  // namespace stepscope::rules
