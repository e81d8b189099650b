// Test helpers shared by the tests of stepscope's own rules (native_rules_unittest.cc,
// gpu_rules_unittest.cc): models built event by event, and the driver's window loop.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/model.h"
#include "rules/rule.h"

namespace stepscope::rules::native_test {

using analysis::EventArg;
using analysis::FrameworkEvent;
using analysis::Model;
using analysis::ModelBuilder;

inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kT0 = 1'700'000'000'000'000'000;

class Builder {
 public:
  Builder() : builder_(analysis::ModelSource::kStepscope) {}
  uint32_t Node(const std::string& name, const std::string& type = "", int count = 0) {
    analysis::NodeFacts facts;
    facts.name = name;
    facts.instance_type = type;
    facts.instance_count = count;
    return builder_.AddNode(facts);
  }
  // Returns the event's insertion index (for raw().AddFlow).
  uint32_t Span(uint32_t node, std::string_view phase, int64_t start_ms, int64_t end_ms, int64_t step = -1,
                std::string_view category = "", int32_t device = -1, std::string_view name = "",
                std::span<const EventArg> args = {}) {
    FrameworkEvent event;
    event.node = node;
    event.pid = 100;
    event.tid = device >= 0 ? 7 : 1;
    event.device = device;
    event.start_ns = kT0 + start_ms * kMs;
    event.end_ns = kT0 + end_ms * kMs;
    event.phase = builder_.Intern(phase);
    event.name = builder_.Intern(name.empty() ? phase : name);
    event.category = builder_.Intern(category);
    event.step = step;
    return builder_.AddEvent(event, args);
  }
  // A span of process `pid` (Span's are all pid 100).
  void ProcessSpan(uint32_t node, int32_t pid, std::string_view phase, int64_t start_ms, int64_t end_ms,
                   int64_t step = -1, std::span<const EventArg> args = {}) {
    FrameworkEvent event;
    event.node = node;
    event.pid = pid;
    event.tid = pid;
    event.start_ns = kT0 + start_ms * kMs;
    event.end_ns = kT0 + end_ms * kMs;
    event.phase = event.name = builder_.Intern(phase);
    event.step = step;
    builder_.AddEvent(event, args);
  }
  // What a torchrun worker's stream says: its rank, local rank and world size.
  void Process(uint32_t node, int32_t pid, int32_t rank, int32_t local_rank = -1, int32_t world_size = -1) {
    analysis::ProcessFacts facts;
    facts.node = node;
    facts.pid = pid;
    facts.rank = rank;
    facts.local_rank = local_rank;
    facts.world_size = world_size;
    builder_.AddProcess(facts);
  }
  void Sample(uint32_t node, std::string_view type, std::string_view name, std::string_view dimension,
              int64_t time_ms, double value) {
    builder_.AddSample(builder_.SeriesFor(node, type, name, dimension), kT0 + time_ms * kMs, value);
  }
  ModelBuilder& raw() { return builder_; }
  Model Finish() { return std::move(builder_).Finish(); }

 private:
  ModelBuilder builder_;
};

// Drives `rule` over `model` in windows of `scan_ms`, as the ProfilerReport driver does.
inline RuleReport Drive(Rule& rule, const Model& model, int64_t scan_ms = 60'000) {
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += scan_ms * kMs) {
    Window window;
    window.model = &model;
    window.start_ns = start;
    window.end_ns = start + scan_ms * kMs;
    for (const auto& series : model.series()) window.samples.push_back(Model::SamplesIn(series, start, window.end_ns));
    window.events = model.EventsStartingIn(start, window.end_ns);
    rule.Evaluate(window);
  }
  rule.Finish(model);
  return rule.Report();
}

}  // namespace stepscope::rules::native_test
