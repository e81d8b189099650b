#include "sampler/nvml_gpu_source.h"

#include <algorithm>
#include <cassert>

#include "platform/nvml/nvml_errors.h"

namespace stepscope {
namespace {

constexpr double kMilliwattsPerWatt = 1000.0;

}  // namespace

NvmlGpuSource::NvmlGpuSource(std::unique_ptr<NvmlLoader> nvml) : nvml_(std::move(nvml)) {
  assert(nvml_ != nullptr);
  gpus_.reserve(nvml_->gpus().size());
  for (const NvmlGpu& gpu : nvml_->gpus()) {
    GpuState& state = gpus_.emplace_back();
    state.nvml_gpu = &gpu;
    const std::string id = "gpu" + std::to_string(gpu.index);
    state.label = id + " (" + gpu.name + ")";
    const std::string prefix = "gpu/" + id + "/";
    state.util_pct = prefix + "util_pct";
    state.memory_used_bytes = prefix + "memory_used_bytes";
    state.memory_total_bytes = prefix + "memory_total_bytes";
    state.memory_used_pct = prefix + "memory_used_pct";
    state.power_w = prefix + "power_w";
    state.temperature_c = prefix + "temperature_c";
    state.sm_clock_mhz = prefix + "sm_clock_mhz";
  }
}

Status NvmlGpuSource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  std::vector<std::string> problems;
  for (GpuState& gpu : gpus_) {
    if (gpu.nvml_gpu->handle == nullptr) {
      // The loader could not get a handle; say so once, then stay quiet.
      if (!gpu.handle_error_reported) problems.push_back(gpu.nvml_gpu->status.message());
      gpu.handle_error_reported = true;
      continue;
    }
    const size_t first = out.size();
    if (!PollGpu(gpu, out, problems)) out.resize(first);
  }
  if (problems.empty()) return OkStatus();
  std::string message = problems[0];
  for (size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
  return UnavailableError(std::move(message));
}

bool NvmlGpuSource::PollGpu(GpuState& gpu, std::vector<MetricSample>& out,
                            std::vector<std::string>& problems) {
  const nvml::NvmlEntryPoints& nvml = nvml_->entry_points();
  nvml::nvmlDevice_t device = gpu.nvml_gpu->handle;
  auto supported = [&gpu](Reading r) { return !gpu.unsupported[static_cast<size_t>(r)]; };

  if (supported(Reading::kUtilization)) {
    nvml::nvmlUtilization_t utilization{};
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetUtilizationRates(device, &utilization);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.util_pct, static_cast<double>(utilization.gpu)});
    } else if (!OnFailure(gpu, Reading::kUtilization, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kMemory)) {
    nvml::nvmlMemory_t memory{};
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetMemoryInfo(device, &memory);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.memory_used_bytes, static_cast<double>(memory.used)});
      out.push_back({gpu.memory_total_bytes, static_cast<double>(memory.total)});
      if (memory.total > 0) {
        out.push_back({gpu.memory_used_pct, static_cast<double>(memory.used) * 100.0 /
                                                static_cast<double>(memory.total)});
      }
    } else if (!OnFailure(gpu, Reading::kMemory, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kPower)) {
    unsigned int power_mw = 0;
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetPowerUsage(device, &power_mw);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.power_w, static_cast<double>(power_mw) / kMilliwattsPerWatt});
    } else if (!OnFailure(gpu, Reading::kPower, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kTemperature)) {
    unsigned int temperature_c = 0;
    nvml::nvmlReturn_t rc =
        nvml.nvmlDeviceGetTemperature(device, nvml::kTemperatureGpu, &temperature_c);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.temperature_c, static_cast<double>(temperature_c)});
    } else if (!OnFailure(gpu, Reading::kTemperature, rc, problems)) {
      return false;
    }
  }
  if (supported(Reading::kSmClock)) {
    unsigned int clock_mhz = 0;
    nvml::nvmlReturn_t rc = nvml.nvmlDeviceGetClockInfo(device, nvml::kClockSm, &clock_mhz);
    if (rc == nvml::kSuccess) {
      out.push_back({gpu.sm_clock_mhz, static_cast<double>(clock_mhz)});
    } else if (!OnFailure(gpu, Reading::kSmClock, rc, problems)) {
      return false;
    }
  }
  return true;
}

bool NvmlGpuSource::OnFailure(GpuState& gpu, Reading reading, nvml::nvmlReturn_t rc,
                              std::vector<std::string>& problems) {
  static constexpr const char* kCalls[kReadingCount] = {
      "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetPowerUsage",
      "nvmlDeviceGetTemperature", "nvmlDeviceGetClockInfo"};
  static constexpr const char* kMetrics[kReadingCount] = {
      "util_pct", "memory_used_bytes, memory_total_bytes and memory_used_pct", "power_w",
      "temperature_c", "sm_clock_mhz"};
  const size_t r = static_cast<size_t>(reading);
  const std::string call = std::string(kCalls[r]) + "(" + gpu.label + ")";

  if (rc == nvml::kErrorNotSupported) {
    // A board that lacks a sensor lacks it for good: stop asking, say so once.
    gpu.unsupported[r] = true;
    problems.push_back(FormatNvmlCallError(nvml_->entry_points(), call, rc) + ": " +
                       std::string(NvmlErrorNextStep(rc)) + "; " + kMetrics[r] +
                       " omitted for gpu" + std::to_string(gpu.nvml_gpu->index));
    return true;
  }
  const auto key = std::make_pair(reading, rc);
  if (std::find(gpu.reported_failures.begin(), gpu.reported_failures.end(), key) ==
      gpu.reported_failures.end()) {
    gpu.reported_failures.push_back(key);
    problems.push_back(FormatNvmlCallError(nvml_->entry_points(), call, rc) + ": " +
                       std::string(NvmlErrorNextStep(rc)) + "; gpu" +
                       std::to_string(gpu.nvml_gpu->index) +
                       " has no metrics while this lasts (reported once)");
  }
  return false;
}

}  // namespace stepscope
