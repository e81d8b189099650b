// Test helpers shared by the system-metric rule tests (system_rules_unittest.cc,
// bottleneck_rules_unittest.cc): SageMaker-keyed models built sample by sample, and the
// driver's window loop (consecutive [start, start + scan] windows from the first timestamp
// while start <= the last timestamp, RULES.md §0).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/model.h"
#include "rules/rule.h"

namespace stepscope::rules::system_test {

using analysis::Model;
using analysis::ModelBuilder;
using analysis::ModelSource;

inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kS = 1000 * kMs;
inline constexpr int64_t kT0 = 1'600'000'000 * kS;  // 1600000000.0 s
inline constexpr int64_t kHour = 3600 * kS;

class Data {
 public:
  Data& Add(const std::string& node, const std::string& type, const std::string& name, const std::string& dimension,
            int64_t time_ns, double value) {
    analysis::NodeFacts facts;
    facts.name = node;
    const uint32_t node_index = builder_.AddNode(facts);
    builder_.AddSample(builder_.SeriesFor(node_index, type, name, dimension), time_ns, value);
    return *this;
  }
  Data& Cpu(const std::string& node, int core, int64_t t, double value) {
    return Add(node, "cpu", "cpu" + std::to_string(core), "CPUUtilization", t, value);
  }
  Data& IoWait(const std::string& node, int core, int64_t t, double value) {
    return Add(node, "cpu", "cpu" + std::to_string(core), "I/OWaitPercentage", t, value);
  }
  Data& Gpu(const std::string& node, int gpu, int64_t t, double value) {
    return Add(node, "gpu", "gpu" + std::to_string(gpu), "GPUUtilization", t, value);
  }
  Data& GpuMemory(const std::string& node, int gpu, int64_t t, double value) {
    return Add(node, "gpu", "gpu" + std::to_string(gpu), "GPUMemoryUtilization", t, value);
  }
  Model Finish() { return std::move(builder_).Finish(); }

 private:
  ModelBuilder builder_{ModelSource::kSageMaker};
};

// The driver's windows: [start, start + scan] from the first timestamp while start <= last.
inline Window MakeWindow(const Model& model, size_t index, int64_t start_ns, int64_t scan_ns) {
  Window window;
  window.model = &model;
  window.index = index;
  window.start_ns = start_ns;
  window.end_ns = start_ns + scan_ns;
  for (const analysis::SystemSeries& series : model.series()) {
    window.samples.push_back(Model::SamplesIn(series, window.start_ns, window.end_ns));
  }
  window.events = model.EventsStartingIn(window.start_ns, window.end_ns);
  return window;
}

inline std::vector<bool> Drive(Rule& rule, const Model& model, int64_t scan_ns) {
  std::vector<bool> met;
  size_t index = 0;
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += scan_ns) {
    met.push_back(rule.Evaluate(MakeWindow(model, index++, start, scan_ns)));
  }
  return met;
}

inline void SetParameter(Rule& rule, const std::string& name, const std::string& value) {
  const Status status = rule.parameters().Set(rule.name(), name, value);
  ASSERT_TRUE(status.ok()) << status.message();
}

inline std::string SetError(Rule& rule, const std::string& name, const std::string& value) {
  return rule.parameters().Set(rule.name(), name, value).message();
}

inline void AddGpuSeries(Data& data, const std::string& node, int gpu, const std::vector<double>& values,
                  int64_t step_ns = 100 * kMs) {
  for (size_t i = 0; i < values.size(); ++i) data.Gpu(node, gpu, kT0 + static_cast<int64_t>(i) * step_ns, values[i]);
}

inline std::vector<double> Constant(size_t count, double value) { return std::vector<double>(count, value); }

}  // namespace stepscope::rules::system_test
