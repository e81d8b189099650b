// Per-timestamp aggregates of SageMaker system series, shared by the system-metric rules
// (shared/RULES.md §0 "CPU total", §4 BatchSize, §7 LoadBalancing, §10 OverallSystemUsage).
//
// SageMaker never stores a CPU total: it is derived per node and per exact timestamp from the
// per-core samples. All functions read one window's sample ranges (Window::samples) and are pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/numerics.h"
#include "rules/rule.h"

namespace stepscope::rules {

struct TimedValue {
  int64_t time_ns = 0;
  double value = 0;
};

struct TimestampSums {
  std::vector<TimedValue> sums;  // ascending time, one entry per distinct timestamp
  size_t series_count = 0;       // distinct series (cores, GPUs) that had samples in the window
};

// Sums, per exact timestamp, the window's samples of every series on `node` whose dimension is
// `dimension` (and whose name is `name`, when not empty).
TimestampSums SumPerTimestamp(const Window& window, uint32_t node, std::string_view dimension,
                              std::string_view name = {});

// RULES.md §0 "CPU total": per exact timestamp, the sum of the per-core CPUUtilization values
// divided by the number of distinct cores seen on the node in this window.
std::vector<TimedValue> CpuTotals(const Window& window, uint32_t node);

// The mean GPUUtilization over the node's GPUs per timestamp (LoadBalancing's node comparison):
// the per-timestamp sum divided by the number of distinct GPUs seen in the window.
std::vector<TimedValue> MeanGpuUtilization(const Window& window, uint32_t node);

// analysis::ComputeBoxStats on values already sorted ascending. Sticky rules report box
// statistics over a GPU's whole history in every window; keeping a sorted copy (merged per
// window) avoids sorting a day of samples again in each of a day's 1440 windows.
analysis::BoxStats SortedBoxStats(std::span<const double> sorted);
// Merges `added` into the ascending `sorted`.
void MergeSorted(std::vector<double>* sorted, std::span<const double> added);

// The window's sample range of series `index` ({0, 0} when the window has none for it).
std::pair<size_t, size_t> SampleRange(const Window& window, size_t index);

}  // namespace stepscope::rules
