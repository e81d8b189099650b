// The host call that launched each device operation (cudaLaunchKernel, cudaMemcpyAsync, ...), from
// the model's launch flows ("ac2g"; "async_cpu_to_gpu" in older PyTorch traces): the Kineto
// importer and the stepscope loader both link a launch to its device work by correlation id, so
// this reads their links instead of matching correlation ids again.
//
// A rule that measures launch latency (LaunchBound) keeps one index and calls Update() with each
// window's model: the driver hands the same model for every window of an offline evaluation, so
// the index is built once there; a live run's reload is another model (other event and flow
// arrays), and the index is rebuilt from it. Not thread-safe (one rule, one driver thread).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/model.h"

namespace stepscope::rules {

class KernelLaunches {
 public:
  // Indexes `model`'s launch flows, unless this model is the one indexed last.
  void Update(const analysis::Model& model);
  // The launch of device event `device_event` (an index into events()), or nullopt when no
  // launch flow leads to it.
  std::optional<uint32_t> LaunchOf(uint32_t device_event) const;

 private:
  // What identifies the indexed model: its address and its arrays' addresses and sizes.
  const analysis::Model* model_ = nullptr;
  const analysis::FrameworkEvent* events_ = nullptr;
  size_t event_count_ = 0;
  const analysis::Flow* flows_ = nullptr;
  size_t flow_count_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> launch_of_;  // (device event, launch), by device event
};

}  // namespace stepscope::rules
