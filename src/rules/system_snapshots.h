// System snapshots and the bottleneck counting shared by CPUBottleneck and IOBottleneck
// (shared/RULES.md §0 "Snapshots", §1, §2).
//
// SageMaker's agent samples every metric of a node at nearly, not exactly, the same instant, so
// samples within 20 ms of a snapshot's anchor (its first sample) belong to that snapshot. Per
// node, walking that node's samples of a window in time order, a sample more than 20 ms from the
// current anchor starts a new snapshot; the anchor carries over from window to window, so a
// sample exactly on a window edge (it belongs to both windows) never starts a second snapshot.
//
// Per window, as the reference: a snapshot has low GPU when any GPUUtilization sample of it in
// this window is below the GPU threshold, and is "high" when any sample of the high dimension
// (CPUUtilization or I/OWaitPercentage) is above its threshold; a snapshot with both in this
// window is a bottleneck, remembered with how many GPU samples were low and how many core samples
// high (a later window seeing more of the same snapshot replaces the entry, as the reference's
// dict does). Low-GPU snapshots are counted once each, also when a window edge splits one (the
// reference's window-local dict would count such a snapshot in both windows). Used by one rule
// object on one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/framework_activity.h"
#include "rules/rule.h"

namespace stepscope::rules {

// Snapshots start when a sample is more than this far from the current anchor.
inline constexpr int64_t kSnapshotWindowNs = 20'000'000;

// "1591160699.457" for 1591160699457000000 ns: Python's repr of the nearest float seconds, which
// is how the reference's JSON keys its bottlenecks (a float dict key: the Timestamp it read,
// which the importer keeps to the ns).
std::string SecondsKey(int64_t time_ns);

class BottleneckTracker {
 public:
  struct Bottleneck {
    uint32_t node = 0;
    int64_t anchor_ns = 0;
    int64_t low_gpus = 0;    // GPU samples below the GPU threshold in the snapshot
    int64_t high_cores = 0;  // core samples above the CPU / I/O-wait threshold
  };

  // `high_dimension`: "CPUUtilization" or "I/OWaitPercentage".
  explicit BottleneckTracker(std::string high_dimension) : high_dimension_(std::move(high_dimension)) {}

  // Walks the window's samples; returns the bottlenecks found in this window (the reference's
  // `times`), in (node, anchor) order.
  std::vector<Bottleneck> Walk(const Window& window, double gpu_threshold_pct, double high_threshold_pct);

  int64_t datapoints() const { return datapoints_; }           // snapshots, summed over nodes
  int64_t low_gpu_snapshots() const { return low_gpu_; }       // Details.low_gpu_utilization
  int64_t bottleneck_count() const { return static_cast<int64_t>(bottlenecks_.size()); }
  // Details.bottlenecks: {"<anchor s>": {"GPUs": n, "CPUs": m}}. Two nodes with the same anchor
  // (the reference keys by time only) share one key; their counts are added.
  nlohmann::json BottlenecksJson() const;
  // Bottlenecks per node index, for findings.
  std::map<uint32_t, int64_t> BottlenecksPerNode() const;

 private:
  std::string high_dimension_;
  std::vector<std::optional<int64_t>> anchor_ns_;  // per node: the current snapshot's anchor
  std::vector<std::optional<int64_t>> low_gpu_counted_ns_;  // per node: last anchor counted low
  std::map<std::pair<uint32_t, int64_t>, std::pair<int64_t, int64_t>> bottlenecks_;
  int64_t datapoints_ = 0;
  int64_t low_gpu_ = 0;
};

// Everything CPUBottleneck and IOBottleneck share: the tracker, the report fields and findings.
// The two rule files differ only in names, parameters and texts.
class BottleneckRuleCore {
 public:
  struct Texts {
    std::string rule;            // "CPUBottleneck"
    std::string high_parameter;  // "cpu_threshold"
    std::string high_label;      // "CPU utilization" / "I/O wait"
    std::string description;
    std::string recommendation;
    std::string next_step;
  };
  BottleneckRuleCore(Texts texts, std::string high_dimension)
      : texts_(std::move(texts)), tracker_(std::move(high_dimension)) {}

  // Returns whether the rule triggered in this window (window-local semantics).
  bool Evaluate(const Window& window, const RuleParameters& parameters);
  RuleReport Report(const RuleParameters& parameters) const;

 private:
  struct WindowEvidence {
    uint32_t node = 0;
    int64_t start_ns = 0, end_ns = 0;
    int64_t bottlenecks = 0;
    int64_t first_anchor_ns = 0;
  };
  // The framework activity at a bottleneck instant of `node` (RULES.md §12).

  Texts texts_;
  BottleneckTracker tracker_;
  int64_t triggered_ = 0;
  int64_t last_trigger_ns_ = -1;
  // RULES.md §12: the framework activity at every bottleneck instant so far, accumulated.
  FrameworkActivity activity_;
  std::vector<std::string> node_names_;
  std::vector<WindowEvidence> evidence_;  // triggered windows, per node with bottlenecks
};

}  // namespace stepscope::rules
