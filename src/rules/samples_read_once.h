// Reads each system sample once across the driver's windows, for rules that count samples
// (GPUErrors, GPUThrottling): a window holds both of its edges (RULES.md §0), so a sample on an
// edge belongs to two windows, and several samples of one poll (Xid events) share its time.
// Each window reads [where that series' last read stopped, the window's end); Finish reads what
// lies on the last window's end edge.
//
// Callers: rules, one per rule object. Threading: the rule's.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/model.h"

namespace stepscope::rules {

class SamplesReadOnce {
 public:
  // visit(t, value) for the samples of `series` (named `metric`) in `range` that no read took,
  // before `end_ns`.
  template <typename Visit>
  void Read(const analysis::SystemSeries& series, std::string_view metric, std::pair<size_t, size_t> range,
            int64_t end_ns, Visit&& visit) {
    int64_t& read_until = read_until_.try_emplace({series.node, std::string(metric)}, INT64_MIN).first->second;
    const int64_t from = read_until;
    read_until = end_ns;
    for (size_t i = range.first; i < range.second; ++i) {
      const int64_t t = series.time_ns[i];
      if (t < from || t >= end_ns) continue;
      visit(t, series.value[i]);
    }
  }
  // A window was read up to `end_ns` (its end edge is Finish's).
  void WindowRead(int64_t end_ns) { last_window_end_ns_ = end_ns; }
  // For Finish: every sample's range and the end that takes the last window's end edge (and
  // nothing after it: the driver may leave a tail unevaluated, as the reference does); false
  // when no window was read.
  bool LastEdge(const analysis::Model& model, std::vector<std::pair<size_t, size_t>>* ranges, int64_t* end_ns) const {
    if (last_window_end_ns_ == INT64_MIN) return false;
    ranges->resize(model.series().size());
    for (size_t s = 0; s < ranges->size(); ++s) (*ranges)[s] = {0, model.series()[s].time_ns.size()};
    *end_ns = last_window_end_ns_ + 1;
    return true;
  }

 private:
  std::map<std::pair<uint32_t, std::string>, int64_t> read_until_;  // per (node, series name)
  int64_t last_window_end_ns_ = INT64_MIN;
};

}  // namespace stepscope::rules
