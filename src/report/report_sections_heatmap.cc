#include "report/report_sections_heatmap.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/vocabulary.h"

namespace stepscope::report {
namespace {

struct Device {
  uint32_t node = 0;
  int kind_order = 0;  // cores before GPUs on each node
  int index = 0;
  const char* kind = "";
  const analysis::SystemSeries* series = nullptr;
};

// The node's per-core CPU utilization ("cpu3") and per-GPU utilization ("gpu0") series.
std::vector<Device> Devices(const analysis::Model& model) {
  std::vector<Device> devices;
  for (const analysis::SystemSeries& series : model.series()) {
    if (series.time_ns.empty()) continue;
    const std::string_view type = model.String(series.type), name = model.String(series.name);
    const std::string_view dimension = model.String(series.dimension);
    if (type == "cpu" && dimension == "CPUUtilization") {
      if (const int index = analysis::DeviceIndex(name, "cpu"); index >= 0)
        devices.push_back({series.node, 0, index, "CPU", &series});
    } else if (type == "gpu" && dimension == "GPUUtilization") {
      if (const int index = analysis::DeviceIndex(name, "gpu"); index >= 0)
        devices.push_back({series.node, 1, index, "GPU", &series});
    }
  }
  std::sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) {
    return std::tie(a.node, a.kind_order, a.index) < std::tie(b.node, b.kind_order, b.index);
  });
  return devices;
}

}  // namespace

nlohmann::json BuildUtilizationHeatmap(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  const std::vector<Device> devices = Devices(model);
  if (devices.empty()) return nullptr;
  // As many columns as the densest device has samples, up to the bound: a short run keeps one
  // column per sample instead of a row of mostly empty cells.
  size_t most_samples = 0;
  for (const Device& device : devices) most_samples = std::max(most_samples, device.series->time_ns.size());
  const size_t columns = std::clamp<size_t>(most_samples, 1, kHeatmapMaxColumns);
  const int64_t span_ns = std::max<int64_t>(context.end_ns - context.start_ns, 1);
  // Ceiling division: the last sample, at end_ns, still falls in the last column.
  const int64_t bucket_ns = (span_ns + static_cast<int64_t>(columns) - 1) / static_cast<int64_t>(columns);

  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> sum(columns);
  std::vector<uint32_t> count(columns);
  for (size_t d = 0; d < devices.size() && d < kHeatmapMaxRows; ++d) {
    const analysis::SystemSeries& series = *devices[d].series;
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(count.begin(), count.end(), 0u);
    for (size_t i = 0; i < series.time_ns.size() && i < series.value.size(); ++i) {
      const double value = series.value[i];
      const int64_t offset_ns = series.time_ns[i] - context.start_ns;
      if (std::isnan(value) || offset_ns < 0 || offset_ns > span_ns) continue;
      const size_t column = std::min(static_cast<size_t>(offset_ns / bucket_ns), columns - 1);
      sum[column] += value;
      ++count[column];
    }
    nlohmann::json values = nlohmann::json::array();
    for (size_t c = 0; c < columns; ++c) {
      // Whole percent: what a colour can show, and a third of the bytes of a rounded float.
      values.push_back(count[c] > 0 ? nlohmann::json(std::lround(sum[c] / count[c])) : nlohmann::json());
    }
    rows.push_back({{"node", model.nodes()[devices[d].node].name},
                    {"device", std::string(model.String(series.name))},
                    {"kind", devices[d].kind},
                    {"values", std::move(values)}});
  }
  return {{"bucket_s", static_cast<double>(bucket_ns) / 1e9},
          {"columns", columns},
          {"rows", std::move(rows)},
          {"rows_total", devices.size()}};
}

}  // namespace stepscope::report
