// What the GPU rules (LaunchBound, PageableCopy, LowPrecisionOpportunity) share: each step's
// device work, per GPU, and how they say that a run has none.
//
// A step's device work is the kernels, copies and memsets (analysis::GpuWork, by the categories
// Kineto and stepscope's GPU tracer give them) on the step's node that start inside the step and
// belong to its process: stepscope's GPU streams give device work the pid of the process that
// launched it, so another rank's work on the same node is left out; Kineto gives device work a
// pid of its own per GPU, which names no process of the run, and such work counts for every step
// of the node (a Kineto trace holds one process). Sync records and GPU annotations are no work.
// Pure over the window's model; the rules keep numbers, never these indices, across windows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/gpu_activity.h"
#include "analysis/model.h"
#include "rules/rule.h"
#include "rules/step_facts.h"

namespace stepscope::rules {

struct StepDeviceWork {
  StepFacts step;
  // GPU -> indices into the model's events(), in start order.
  std::map<int32_t, std::vector<uint32_t>> work;
};

// Kernel, memcpy or memset; nullopt for anything else (host events, sync records, annotations).
std::optional<analysis::GpuWork> DeviceWorkOf(const analysis::Model& model, const analysis::FrameworkEvent& event);

// The steps that start in the window, each with its device work (steps without any included).
std::vector<StepDeviceWork> CollectStepDeviceWork(const Window& window);

// Whether any kernel, copy or memset starts in the window.
bool WindowHasDeviceWork(const Window& window);

// A GPU rule's Details when the run has no device work (CPU-only runs, SageMaker data, traces
// recorded without CUDA activity): {"gpu_data": false, "why": "No GPU data: ..."}.
nlohmann::json NoGpuDataDetails();

// The start of a GPU rule's report: its name, texts and parameters, with NoGpuDataDetails() when
// the run has no GPU data (the rule then returns it as it is).
RuleReport GpuRuleReport(const Rule& rule, std::string description, std::string recommendation, bool gpu_data);

// Evidence about `rank` (-1: none) on `node` over [start_ns, end_ns] of `phase` steps ("" when not
// about steps).
Evidence GpuEvidence(std::string node, int32_t rank, std::string phase, int64_t start_ns, int64_t end_ns,
                     std::string what, std::vector<int64_t> steps = {});

// How findings and evidence name a GPU: "gpu0", with its rank when known ("rank-1/gpu0") and the
// node's name does not already say it (a Kineto trace's node is "rank-1").
std::string GpuSubject(std::string_view node_name, int32_t rank, int32_t device);

// A kernel name's launches and time, summed.
struct KernelTotal {
  int64_t launches = 0;
  int64_t total_ns = 0;
};
// The `limit` kernels with the most time, as evidence's top activity (kind "kernel"), each with
// its share of `span_ns`.
std::vector<ActivityShare> LargestKernels(const std::map<std::string, KernelTotal>& kernels, int64_t span_ns,
                                          size_t limit = 5);

// Keeps the `capacity` entries with the largest `key`, largest first (an equal key keeps the
// earlier entry ahead): the evidence steps a rule remembers across windows.
template <typename Entry>
void KeepLargest(std::vector<Entry>& entries, Entry entry, int64_t Entry::*key, size_t capacity = 5) {
  if (entries.size() == capacity && entry.*key <= entries.back().*key) return;
  entries.push_back(std::move(entry));
  std::stable_sort(entries.begin(), entries.end(), [key](const Entry& a, const Entry& b) { return a.*key > b.*key; });
  if (entries.size() > capacity) entries.pop_back();
}

}  // namespace stepscope::rules
