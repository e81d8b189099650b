#include "analysis/vocabulary.h"

#include <array>

namespace stepscope::analysis {
namespace {

struct FixedMetric {
  std::string_view metric;
  std::string_view type;
  std::string_view name;
  std::string_view dimension;
};

// Node-wide metrics with a SageMaker counterpart (shared/FORMATS.md: names as SageMaker writes
// them; network series carry the "Algorithm" dimension there).
constexpr std::array<FixedMetric, 6> kFixedMetrics = {{
    {"memory/used_pct", "memory", "MemoryUsedPercent", ""},
    {"network/rx_bytes_per_s", "network", "ReceiveBytesPerSecond", "Algorithm"},
    {"network/tx_bytes_per_s", "network", "TransmitBytesPerSecond", "Algorithm"},
    {"disk/iops", "i/o", "IOPS", ""},
    {"disk/read_bytes_per_s", "i/o", "ReadThroughputInBytesPerSecond", ""},
    {"disk/write_bytes_per_s", "i/o", "WriteThroughputInBytesPerSecond", ""},
}};

// Per-device metrics "<type>/<type><N>/<leaf>" -> (type, "<type><N>", dimension).
struct DeviceMetric {
  std::string_view type;  // also the device name prefix: "cpu" -> "cpu3"
  std::string_view leaf;
  std::string_view dimension;
};
constexpr std::array<DeviceMetric, 4> kDeviceMetrics = {{
    {"cpu", "util_pct", "CPUUtilization"},
    {"cpu", "iowait_pct", "I/OWaitPercentage"},
    {"gpu", "util_pct", "GPUUtilization"},
    {"gpu", "memory_used_pct", "GPUMemoryUtilization"},
}};

SeriesKey StepscopeKey(std::string_view metric) {
  return SeriesKey{std::string(kStepscopeSeriesType), std::string(metric), ""};
}

}  // namespace

int DeviceIndex(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size() || name.size() - prefix.size() > 6) return -1;
  int index = 0;
  for (char c : name.substr(prefix.size())) {
    if (c < '0' || c > '9') return -1;
    index = index * 10 + (c - '0');
  }
  return index;
}

SeriesKey SeriesKeyForMetric(std::string_view metric) {
  for (const FixedMetric& fixed : kFixedMetrics) {
    if (fixed.metric == metric) {
      return SeriesKey{std::string(fixed.type), std::string(fixed.name), std::string(fixed.dimension)};
    }
  }
  // "<type>/<device>/<leaf>" with exactly three parts.
  const size_t first = metric.find('/');
  if (first == std::string_view::npos) return StepscopeKey(metric);
  const size_t second = metric.find('/', first + 1);
  if (second == std::string_view::npos || metric.find('/', second + 1) != std::string_view::npos) {
    return StepscopeKey(metric);
  }
  const std::string_view type = metric.substr(0, first);
  const std::string_view device = metric.substr(first + 1, second - first - 1);
  const std::string_view leaf = metric.substr(second + 1);
  for (const DeviceMetric& entry : kDeviceMetrics) {
    if (entry.type == type && entry.leaf == leaf && DeviceIndex(device, entry.type) >= 0) {
      return SeriesKey{std::string(type), std::string(device), std::string(entry.dimension)};
    }
  }
  return StepscopeKey(metric);
}

std::string MetricForSeriesKey(std::string_view type, std::string_view name, std::string_view dimension) {
  if (type == kStepscopeSeriesType) {
    // Only names that really stay under "stepscope" (a SageMaker metric never does).
    return dimension.empty() && !name.empty() && SeriesKeyForMetric(name).type == kStepscopeSeriesType
               ? std::string(name)
               : std::string();
  }
  for (const FixedMetric& fixed : kFixedMetrics) {
    if (fixed.type == type && fixed.name == name && fixed.dimension == dimension) return std::string(fixed.metric);
  }
  for (const DeviceMetric& entry : kDeviceMetrics) {
    if (entry.type == type && entry.dimension == dimension && DeviceIndex(name, entry.type) >= 0) {
      std::string metric(type);
      metric.append("/").append(name).append("/").append(entry.leaf);
      return metric;
    }
  }
  return std::string();
}

GpuMetricParts ParseGpuMetric(std::string_view metric) {
  GpuMetricParts parts;
  if (!metric.starts_with("gpu/")) return parts;
  std::string_view rest = metric.substr(4);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return parts;
  const int gpu = DeviceIndex(rest.substr(0, slash), "gpu");
  if (gpu < 0) return parts;
  rest = rest.substr(slash + 1);
  int64_t pid = -1;
  if (const size_t next = rest.find('/'); next != std::string_view::npos) {
    const std::string_view process = rest.substr(0, next);
    // "pid" and at most ten digits; anything else is not a shape stepscope writes.
    if (!process.starts_with("pid") || process.size() == 3 || process.size() > 13) return parts;
    pid = 0;
    for (char c : process.substr(3)) {
      if (c < '0' || c > '9') return parts;
      pid = pid * 10 + (c - '0');
    }
    rest = rest.substr(next + 1);
  }
  if (rest.empty() || rest.find('/') != std::string_view::npos) return parts;
  parts.gpu = gpu;
  parts.pid = pid;
  parts.leaf = rest;
  return parts;
}

std::span<const GpuThrottleReason> GpuThrottleReasons() {
  static constexpr GpuThrottleReason kReasons[] = {
      {"power_cap", "power cap", true, false},
      {"hw_slowdown", "HW slowdown", true, true},
      {"sw_thermal", "SW thermal slowdown", true, false},
      {"hw_thermal", "HW thermal slowdown", true, true},
      {"hw_power_brake", "HW power brake", true, true},
      {"sync_boost", "sync boost", true, false},
      {"idle", "idle", false, false},
      {"app_clocks", "application clocks setting", true, false},
  };
  return kReasons;
}

const GpuThrottleReason* FindGpuThrottleReason(std::string_view leaf) {
  if (leaf.starts_with("throttle_")) leaf.remove_prefix(9);
  for (const GpuThrottleReason& reason : GpuThrottleReasons()) {
    if (reason.leaf == leaf) return &reason;
  }
  return nullptr;
}

PerfMetricParts SplitPerfMetric(std::string_view metric) {
  if (!metric.starts_with(kPerfMetricPrefix)) return {};
  const std::string_view rest = metric.substr(kPerfMetricPrefix.size());
  const size_t slash = rest.find('/');
  if (slash == 0 || slash == std::string_view::npos || slash + 1 == rest.size() ||
      rest.find('/', slash + 1) != std::string_view::npos) {
    return {};
  }
  return {rest.substr(0, slash), rest.substr(slash + 1)};
}

bool IsStepscopeOwnEventName(std::string_view name) {
  return name.starts_with("DetailWindow") || name.starts_with("Lifecycle:") || name == "Control";
}

std::string_view PhaseForEventName(std::string_view name) {
  return IsStepscopeOwnEventName(name) ? kStepscopePhase : name;
}

}  // namespace stepscope::analysis
