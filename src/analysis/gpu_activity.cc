#include "analysis/gpu_activity.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace stepscope::analysis {
namespace {

struct KernelTotal {
  PrecisionMatch match;
  bool from_operator = false;
  int64_t total_ns = 0;
  int64_t launches = 0;
};

struct Accumulator {
  GpuActivity activity;
  std::vector<PriorityInterval> intervals;  // by GpuWork: kernel > memcpy > memset > sync
  std::map<std::pair<std::string, std::string>, MemoryOperationRow> memory;
  // Per kernel name and the operator that decided it (kEmptyString: the name did).
  std::map<std::pair<StringId, StringId>, KernelTotal> kernels;
};

// The innermost host operator (cpu_op) around each kernel's launch, for the kernels whose names
// state no precision: indexed by kernel event, kEmptyString where none is known.
std::unordered_map<uint32_t, StringId> LaunchingOperators(const Model& model, const std::vector<uint32_t>& kernels) {
  std::unordered_map<uint32_t, StringId> result;
  const StringId ac2g = model.FindString("ac2g"), cpu_op = model.FindString("cpu_op");
  if (kernels.empty() || ac2g == kEmptyString || cpu_op == kEmptyString) return result;
  std::unordered_map<uint32_t, uint32_t> launch_of;  // launch event -> kernel event
  std::vector<bool> wanted(model.events().size(), false);
  for (uint32_t kernel : kernels) wanted[kernel] = true;
  for (const Flow& flow : model.flows()) {
    if (flow.category == ac2g && flow.to < wanted.size() && wanted[flow.to]) launch_of[flow.from] = flow.to;
  }
  if (launch_of.empty()) return result;
  // Events are in (start, -end) order, so a thread's enclosing operators are a stack.
  std::map<std::tuple<uint32_t, int32_t, int64_t>, std::vector<uint32_t>> open;
  const auto& events = model.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    const FrameworkEvent& event = events[i];
    if (event.device >= 0 || event.kind != EventKind::kSpan) continue;
    const bool is_operator = event.category == cpu_op;
    const auto launch = launch_of.find(i);
    if (!is_operator && launch == launch_of.end()) continue;
    std::vector<uint32_t>& stack = open[{event.node, event.pid, event.tid}];
    while (!stack.empty() && events[stack.back()].end_ns < event.end_ns) stack.pop_back();
    if (launch != launch_of.end() && !stack.empty()) result[launch->second] = events[stack.back()].name;
    if (is_operator) stack.push_back(i);
  }
  return result;
}

void Sweep(Accumulator& accumulator) {
  GpuActivity& activity = accumulator.activity;
  const std::vector<int64_t> split =
      SplitTimeByPriority(accumulator.intervals, kGpuWorkCount, activity.first_ns, activity.last_ns);
  for (int w = 0; w < kGpuWorkCount; ++w) activity.exclusive_ns[w] = split[w];
  activity.idle_ns = split[kGpuWorkCount];
}

}  // namespace

const char* GpuWorkName(GpuWork work) {
  switch (work) {
    case GpuWork::kKernel: return "kernel";
    case GpuWork::kMemcpy: return "memcpy";
    case GpuWork::kMemset: return "memset";
    case GpuWork::kSync: return "sync";
  }
  return "";
}

std::vector<int64_t> SplitTimeByPriority(std::span<const PriorityInterval> intervals, int priority_count,
                                         int64_t begin_ns, int64_t end_ns) {
  std::vector<int64_t> split(static_cast<size_t>(priority_count) + 1, 0);
  if (end_ns <= begin_ns) return split;
  std::vector<std::tuple<int64_t, int, int>> edges;  // (time, priority, +1 / -1)
  edges.reserve(intervals.size() * 2);
  for (const PriorityInterval& interval : intervals) {
    const int64_t start = std::max(interval.start_ns, begin_ns), end = std::min(interval.end_ns, end_ns);
    if (end <= start || interval.priority < 0 || interval.priority >= priority_count) continue;
    edges.emplace_back(start, interval.priority, 1);
    edges.emplace_back(end, interval.priority, -1);
  }
  std::sort(edges.begin(), edges.end());
  std::vector<int> running(static_cast<size_t>(priority_count), 0);
  int64_t previous = begin_ns;
  for (const auto& [time, priority, delta] : edges) {
    if (time > previous) {
      int bucket = priority_count;
      for (int p = 0; p < priority_count; ++p) {
        if (running[p] > 0) {
          bucket = p;
          break;
        }
      }
      split[bucket] += time - previous;
      previous = time;
    }
    running[priority] += delta;
  }
  split[priority_count] += end_ns - previous;
  return split;
}

MemoryOperationRow ClassifyMemoryOperation(std::string_view name, GpuWork work) {
  MemoryOperationRow row;
  row.kind = "other";
  if (work == GpuWork::kMemset) {
    row.kind = "memset";
  } else if (name.starts_with("Memcpy ")) {
    const std::string_view rest = name.substr(7);
    const std::string_view kind = rest.substr(0, rest.find(' '));
    for (std::string_view known : {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"}) {
      if (kind == known) row.kind = std::string(known);
    }
  }
  // The host side of a copy is in the parenthesis: "(Pageable -> Device)", "(Device -> Pinned)".
  const size_t open = name.find('(');
  const std::string_view memory = open == std::string_view::npos ? std::string_view() : name.substr(open);
  if (memory.find("Pageable") != std::string_view::npos) row.host_memory = "pageable";
  else if (memory.find("Pinned") != std::string_view::npos) row.host_memory = "pinned";
  else if (memory.find("Managed") != std::string_view::npos) row.host_memory = "managed";
  return row;
}

std::vector<GpuActivity> ComputeGpuActivity(const Model& model) {
  std::array<StringId, kGpuWorkCount> categories = {model.FindString("kernel"), model.FindString("gpu_memcpy"),
                                                    model.FindString("gpu_memset"), model.FindString("cuda_sync")};
  const StringId bytes_key = model.FindString("bytes");
  std::map<std::pair<uint32_t, int32_t>, Accumulator> gpus;
  std::unordered_map<StringId, PrecisionMatch> precision_of_name;
  std::vector<uint32_t> unknown_kernels;
  std::vector<std::pair<Accumulator*, uint32_t>> kernel_events;
  const auto& events = model.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    const FrameworkEvent& event = events[i];
    if (event.device < 0 || event.kind != EventKind::kSpan || event.category == kEmptyString) continue;
    int work = 0;
    while (work < kGpuWorkCount && categories[work] != event.category) ++work;
    if (work == kGpuWorkCount) continue;
    Accumulator& gpu = gpus[{event.node, event.device}];
    GpuActivity& activity = gpu.activity;
    if (activity.count == std::array<int64_t, kGpuWorkCount>{}) {
      activity.node = event.node;
      activity.device = event.device;
      activity.first_ns = event.start_ns;
      activity.last_ns = event.end_ns;
    }
    activity.first_ns = std::min(activity.first_ns, event.start_ns);
    activity.last_ns = std::max(activity.last_ns, event.end_ns);
    ++activity.count[work];
    activity.summed_ns[work] += event.duration_ns();
    if (event.end_ns > event.start_ns) gpu.intervals.push_back({event.start_ns, event.end_ns, work});
    const auto kind = static_cast<GpuWork>(work);
    if (kind == GpuWork::kMemcpy || kind == GpuWork::kMemset) {
      MemoryOperationRow classified = ClassifyMemoryOperation(model.String(event.name), kind);
      MemoryOperationRow& row = gpu.memory[{classified.kind, classified.host_memory}];
      if (row.count == 0) row = std::move(classified);
      ++row.count;
      row.total_ns += event.duration_ns();
      const EventArg* bytes = bytes_key == kEmptyString ? nullptr : model.FindArg(event, "bytes");
      if (bytes != nullptr && (bytes->type == EventArg::Type::kInt || bytes->type == EventArg::Type::kDouble)) {
        row.bytes += bytes->type == EventArg::Type::kInt ? bytes->int_value : static_cast<int64_t>(bytes->double_value);
        ++row.with_bytes;
      }
    } else if (kind == GpuWork::kKernel) {
      auto [cached, inserted] = precision_of_name.try_emplace(event.name);
      if (inserted) cached->second = PrecisionFromKernelName(model.String(event.name));
      if (cached->second.precision == KernelPrecision::kUnknown) unknown_kernels.push_back(i);
      kernel_events.emplace_back(&gpu, i);
    }
  }
  const std::unordered_map<uint32_t, StringId> operators = LaunchingOperators(model, unknown_kernels);
  for (const auto& [gpu, index] : kernel_events) {
    const FrameworkEvent& event = events[index];
    PrecisionMatch match = precision_of_name[event.name];
    StringId decided_by = kEmptyString;
    if (match.precision == KernelPrecision::kUnknown) {
      if (auto found = operators.find(index); found != operators.end()) {
        const PrecisionMatch by_operator = PrecisionFromOperatorName(model.String(found->second));
        if (by_operator.precision != KernelPrecision::kUnknown) {
          match = by_operator;
          decided_by = found->second;
        }
      }
    }
    KernelTotal& total = gpu->kernels[{event.name, decided_by}];
    total.match = match;
    total.from_operator = decided_by != kEmptyString;
    total.total_ns += event.duration_ns();
    ++total.launches;
  }

  std::vector<GpuActivity> result;
  for (auto& [key, gpu] : gpus) {
    Sweep(gpu);
    GpuActivity& activity = gpu.activity;
    for (auto& [memory_key, row] : gpu.memory) activity.memory_operations.push_back(std::move(row));
    std::stable_sort(activity.memory_operations.begin(), activity.memory_operations.end(),
                     [](const MemoryOperationRow& a, const MemoryOperationRow& b) { return a.total_ns > b.total_ns; });
    std::array<PrecisionRow, kKernelPrecisionCount> rows;
    for (const auto& [kernel_key, total] : gpu.kernels) {
      PrecisionRow& row = rows[static_cast<int>(total.match.precision)];
      row.precision = total.match.precision;
      row.total_ns += total.total_ns;
      row.launches += total.launches;
      if (total.from_operator) row.from_operator += total.launches;
      row.examples.push_back({std::string(model.String(kernel_key.first)), std::string(total.match.pattern),
                              total.from_operator, total.total_ns, total.launches});
    }
    for (PrecisionRow& row : rows) {
      if (row.launches == 0) continue;
      std::stable_sort(row.examples.begin(), row.examples.end(), [](const PrecisionExample& a, const PrecisionExample& b) {
        return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.kernel < b.kernel;
      });
      if (row.examples.size() > kPrecisionExamples) row.examples.resize(kPrecisionExamples);
      activity.precisions.push_back(std::move(row));
    }
    result.push_back(std::move(activity));
  }
  return result;
}

}  // namespace stepscope::analysis
