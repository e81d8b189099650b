#include "analysis/gpu_idle_attribution.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "analysis/gpu_activity.h"

namespace stepscope::analysis {
namespace {

constexpr uint32_t kNoLaunch = std::numeric_limits<uint32_t>::max();
constexpr int Priority(StepGpuPart part) { return static_cast<int>(part); }
// The parts that intervals can claim; kHostBound is what none claims.
constexpr int kClaimedParts = kStepGpuPartCount - 1;

// Intervals sorted by start with the running maximum of their ends, so that the ones
// overlapping a window are found by binary search instead of a scan from the beginning.
class IntervalIndex {
 public:
  void Add(const PriorityInterval& interval) {
    if (interval.end_ns > interval.start_ns) intervals_.push_back(interval);
  }
  void Finish() {
    std::sort(intervals_.begin(), intervals_.end(),
              [](const PriorityInterval& a, const PriorityInterval& b) { return a.start_ns < b.start_ns; });
    max_end_.resize(intervals_.size());
    int64_t max_end = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < intervals_.size(); ++i) max_end_[i] = max_end = std::max(max_end, intervals_[i].end_ns);
  }
  // Appends the intervals that overlap [begin_ns, end_ns) to `out`.
  void Overlapping(int64_t begin_ns, int64_t end_ns, std::vector<PriorityInterval>& out) const {
    size_t i = static_cast<size_t>(std::upper_bound(max_end_.begin(), max_end_.end(), begin_ns) - max_end_.begin());
    for (; i < intervals_.size() && intervals_[i].start_ns < end_ns; ++i) {
      if (intervals_[i].end_ns > begin_ns) out.push_back(intervals_[i]);
    }
  }

 private:
  std::vector<PriorityInterval> intervals_;
  std::vector<int64_t> max_end_;
};

struct DeviceTimeline {
  IntervalIndex intervals;  // work, sync records and queued work
  std::vector<std::pair<int64_t, bool>> kernel_starts;  // (start, launched by a graph), sorted
};

using DeviceKey = std::pair<uint32_t, int32_t>;   // (node, device)
using ProcessKey = std::pair<uint32_t, int32_t>;  // (node, pid)

bool IsHostSyncCall(std::string_view name) {
  if (name.find("Synchronize") != std::string_view::npos) return true;
  // A plain cudaMemcpy (cuMemcpy) blocks the host until the copy is done; the Async variants do not.
  return (name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy")) && name.find("Async") == std::string_view::npos;
}

bool IsDataLoaderWait(std::string_view phase, std::string_view name) {
  return phase == "DataLoaderIter" || name.starts_with("enumerate(DataLoader)");
}

bool IsGraphLaunch(std::string_view name) { return name.find("GraphLaunch") != std::string_view::npos; }

}  // namespace

const char* StepGpuPartName(StepGpuPart part) {
  switch (part) {
    case StepGpuPart::kCompute: return "compute";
    case StepGpuPart::kCommunication: return "communication";
    case StepGpuPart::kMemcpy: return "memcpy";
    case StepGpuPart::kMemset: return "memset";
    case StepGpuPart::kDataWait: return "data_wait";
    case StepGpuPart::kSync: return "sync";
    case StepGpuPart::kOtherIdle: return "other";
    case StepGpuPart::kHostBound: return "host_bound";
  }
  return "";
}

bool IsCommunicationKernel(std::string_view name) {
  return name.starts_with("nccl") && name.find("Kernel") != std::string_view::npos;
}

std::vector<StepGpuBreakdown> ComputeGpuIdleAttribution(const Model& model) {
  std::vector<StepGpuBreakdown> result;
  if (model.steps().empty()) return result;
  const auto& events = model.events();
  // Without device events there is no row; found out before indexing every event (a day's CPU
  // run: ~100 MB for nothing).
  if (std::none_of(events.begin(), events.end(), [](const FrameworkEvent& e) { return e.device >= 0; })) {
    return result;
  }
  const StringId kernel = model.FindString("kernel"), memcpy = model.FindString("gpu_memcpy"),
                 memset = model.FindString("gpu_memset"), cuda_sync = model.FindString("cuda_sync"),
                 runtime = model.FindString("cuda_runtime"), driver = model.FindString("cuda_driver");
  const StringId launch_flows[] = {model.FindString("ac2g"), model.FindString("async_cpu_to_gpu")};

  // Each device operation's launch (the host call a launch -> kernel flow leads from).
  std::vector<uint32_t> launch_of(events.size(), kNoLaunch);
  for (const Flow& flow : model.flows()) {
    if (flow.category == kEmptyString || flow.to >= events.size() || flow.from >= events.size()) continue;
    if (flow.category != launch_flows[0] && flow.category != launch_flows[1]) continue;
    if (events[flow.to].device >= 0 && events[flow.from].device < 0) launch_of[flow.to] = flow.from;
  }

  std::map<DeviceKey, DeviceTimeline> devices;
  std::map<ProcessKey, std::set<int32_t>> devices_of_process;
  std::map<ProcessKey, IntervalIndex> host;  // data waits and synchronizing calls per process
  std::map<DeviceKey, int64_t> previous_end;  // the device's latest end so far, for unknown launches
  for (uint32_t i = 0; i < events.size(); ++i) {
    const FrameworkEvent& event = events[i];
    if (event.kind != EventKind::kSpan) continue;
    if (event.device < 0) {
      const std::string_view name = model.String(event.name);
      if (IsDataLoaderWait(model.String(event.phase), name)) {
        host[{event.node, event.pid}].Add({event.start_ns, event.end_ns, Priority(StepGpuPart::kDataWait)});
      } else if (event.category != kEmptyString && (event.category == runtime || event.category == driver) &&
                 IsHostSyncCall(name)) {
        host[{event.node, event.pid}].Add({event.start_ns, event.end_ns, Priority(StepGpuPart::kSync)});
      }
      continue;
    }
    if (event.category == kEmptyString) continue;
    StepGpuPart part;
    if (event.category == kernel) {
      part = IsCommunicationKernel(model.String(event.name)) ? StepGpuPart::kCommunication : StepGpuPart::kCompute;
    } else if (event.category == memcpy) {
      part = StepGpuPart::kMemcpy;
    } else if (event.category == memset) {
      part = StepGpuPart::kMemset;
    } else if (event.category == cuda_sync) {
      part = StepGpuPart::kSync;
    } else {
      continue;  // GPU annotations are no device work
    }
    const DeviceKey key{event.node, event.device};
    DeviceTimeline& device = devices[key];
    device.intervals.Add({event.start_ns, event.end_ns, Priority(part)});
    if (part == StepGpuPart::kSync) continue;
    // Work is queued from its launch (the launch call's end) until it starts; an operation whose
    // launch is unknown, since the device's latest end among the operations started before it
    // (events come in start order), or since ever for the first.
    const auto previous = previous_end.try_emplace(key, std::numeric_limits<int64_t>::min()).first;
    const uint32_t launch = launch_of[i];
    const int64_t queued_from = launch != kNoLaunch ? events[launch].end_ns : previous->second;
    device.intervals.Add({queued_from, event.start_ns, Priority(StepGpuPart::kOtherIdle)});
    previous->second = std::max(previous->second, event.end_ns);
    if (launch != kNoLaunch) devices_of_process[{events[launch].node, events[launch].pid}].insert(event.device);
    if (part == StepGpuPart::kCompute || part == StepGpuPart::kCommunication) {
      device.kernel_starts.emplace_back(event.start_ns,
                                        launch != kNoLaunch && IsGraphLaunch(model.String(events[launch].name)));
    }
  }
  if (devices.empty()) return result;
  for (auto& [key, device] : devices) device.intervals.Finish();
  for (auto& [key, index] : host) index.Finish();

  // Processes with steps per node: a node where one process steps owns all of the node's GPUs.
  std::map<uint32_t, std::set<int32_t>> stepping;
  for (uint32_t index : model.steps()) stepping[events[index].node].insert(events[index].pid);
  auto gpus_of = [&](uint32_t node, int32_t pid) {
    std::vector<int32_t> gpus;
    if (auto found = devices_of_process.find({node, pid}); found != devices_of_process.end()) {
      gpus.assign(found->second.begin(), found->second.end());
      return gpus;
    }
    const ProcessFacts* process = model.FindProcess(node, pid);
    const bool only_stepper = stepping[node].size() == 1;
    for (auto it = devices.lower_bound({node, std::numeric_limits<int32_t>::min()});
         it != devices.end() && it->first.first == node; ++it) {
      if (only_stepper || (process != nullptr && process->local_rank == it->first.second)) gpus.push_back(it->first.second);
    }
    return gpus;
  };

  std::vector<PriorityInterval> window;
  for (uint32_t index : model.steps()) {
    const FrameworkEvent& step = events[index];
    if (step.kind != EventKind::kSpan || step.end_ns <= step.start_ns) continue;
    const auto process = host.find({step.node, step.pid});
    for (int32_t gpu : gpus_of(step.node, step.pid)) {
      const DeviceTimeline& device = devices.at({step.node, gpu});
      window.clear();
      device.intervals.Overlapping(step.start_ns, step.end_ns, window);
      if (process != host.end()) process->second.Overlapping(step.start_ns, step.end_ns, window);
      const std::vector<int64_t> split = SplitTimeByPriority(window, kClaimedParts, step.start_ns, step.end_ns);
      StepGpuBreakdown row;
      row.node = step.node;
      row.pid = step.pid;
      row.rank = model.RankOf(step.node, step.pid);
      row.device = gpu;
      row.phase = model.StepPhaseOf(step);
      row.step = step.step;
      row.event = index;
      row.start_ns = step.start_ns;
      row.end_ns = step.end_ns;
      row.disturbed = model.IsDisturbedStep(step);
      std::copy(split.begin(), split.end(), row.part_ns.begin());
      auto first = std::lower_bound(device.kernel_starts.begin(), device.kernel_starts.end(),
                                    std::make_pair(step.start_ns, false));
      for (; first != device.kernel_starts.end() && first->first < step.end_ns; ++first) {
        ++row.kernels;
        if (first->second) ++row.graph_kernels;
      }
      result.push_back(row);
    }
  }
  return result;
}

}  // namespace stepscope::analysis
