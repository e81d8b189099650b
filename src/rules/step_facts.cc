#include "rules/step_facts.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace stepscope::rules {
namespace {

constexpr std::string_view kStepPrefix = "Step:ModeKeys.";

// Union length of intervals given in ascending start order, clipped to [begin, end].
class IntervalUnion {
 public:
  void Add(int64_t start, int64_t end) {
    if (end <= start) return;
    if (open_ && start <= current_end_) {
      current_end_ = std::max(current_end_, end);
      return;
    }
    Close();
    open_ = true;
    current_start_ = start;
    current_end_ = end;
  }
  int64_t Total() {
    Close();
    return total_;
  }

 private:
  void Close() {
    if (open_) total_ += current_end_ - current_start_;
    open_ = false;
  }
  bool open_ = false;
  int64_t current_start_ = 0, current_end_ = 0, total_ = 0;
};

bool IsSync(std::string_view category, std::string_view name) {
  if (category != "cuda_runtime" && category != "cuda_driver" && category != "cuda_sync") return false;
  if (category == "cuda_sync") return true;
  if (name.find("Synchronize") != std::string_view::npos) return true;
  // A plain cudaMemcpy blocks the host until the copy is done; the Async variants do not.
  return name.starts_with("cudaMemcpy") && name.find("Async") == std::string_view::npos;
}

std::string_view ActivityKind(const analysis::Model& model, const analysis::FrameworkEvent& event) {
  const std::string_view phase = model.String(event.phase);
  if (phase == "cpu_functions") return "operator";
  if (phase.starts_with("gpu_functions")) return "kernel";
  if (phase == "python_function") return "python";
  if (phase == "Forward" || phase == "Backward" || phase == "OptimizerStep" || phase.starts_with("DataLoader")) {
    return "phase";
  }
  return "annotation";
}

}  // namespace

std::string_view StepPhaseName(std::string_view phase) {
  return phase.starts_with(kStepPrefix) ? phase.substr(kStepPrefix.size()) : phase;
}

std::vector<StepFacts> CollectStepFacts(const Window& window) {
  const analysis::Model& model = *window.model;
  const auto& events = model.events();
  std::vector<StepFacts> steps;
  for (size_t i = window.events.first; i < window.events.second; ++i) {
    const analysis::FrameworkEvent& step = events[i];
    const std::string_view phase = model.String(step.phase);
    if (!phase.starts_with(kStepPrefix) || step.kind != analysis::EventKind::kSpan) continue;
    StepFacts facts;
    facts.node = step.node;
    facts.pid = step.pid;
    facts.rank = model.RankOf(step.node, step.pid);
    facts.phase = std::string(StepPhaseName(phase));
    facts.number = step.step;
    facts.start_ns = step.start_ns;
    facts.end_ns = step.end_ns;
    facts.disturbed = model.IsDisturbedStep(step);
    // Children start inside the step (events are sorted by start): no overlap scan needed.
    IntervalUnion data, forward, backward, optimizer, sync;
    auto [begin, end] = model.EventsStartingIn(step.start_ns, step.end_ns + 1);
    for (size_t j = begin; j < end; ++j) {
      const analysis::FrameworkEvent& event = events[j];
      if (j == i || event.node != step.node || event.pid != step.pid) continue;
      const int64_t clipped_end = std::min(event.end_ns, step.end_ns);
      const std::string_view name = model.String(event.phase);
      if (name == "DataLoaderIter") data.Add(event.start_ns, clipped_end);
      else if (name == "Forward") forward.Add(event.start_ns, clipped_end);
      else if (name == "Backward") backward.Add(event.start_ns, clipped_end);
      else if (name == "OptimizerStep") optimizer.Add(event.start_ns, clipped_end);
      else if (IsSync(model.String(event.category), model.String(event.name))) {
        sync.Add(event.start_ns, clipped_end);
        ++facts.sync_count;
      }
    }
    facts.data_wait_ns = data.Total();
    facts.forward_ns = forward.Total();
    facts.backward_ns = backward.Total();
    facts.optimizer_ns = optimizer.Total();
    facts.sync_ns = sync.Total();
    steps.push_back(std::move(facts));
  }
  return steps;
}

std::vector<ActivityShare> TopActivity(const analysis::Model& model, uint32_t node, int32_t pid, int64_t begin_ns,
                                       int64_t end_ns, size_t limit) {
  std::map<std::pair<std::string, std::string>, int64_t> totals;
  const auto& events = model.events();
  auto [begin, end] = model.EventsStartingIn(begin_ns, end_ns + 1);
  for (size_t i = begin; i < end; ++i) {
    const analysis::FrameworkEvent& event = events[i];
    if (event.node != node || (pid >= 0 && event.pid != pid && event.device < 0)) continue;
    if (event.kind != analysis::EventKind::kSpan) continue;
    const std::string_view phase = model.String(event.phase);
    if (phase.starts_with(kStepPrefix) || phase == "stepscope") continue;
    const int64_t clipped = std::min(event.end_ns, end_ns) - event.start_ns;
    if (clipped <= 0) continue;
    totals[{std::string(ActivityKind(model, event)), std::string(model.String(event.name))}] += clipped;
  }
  std::vector<ActivityShare> shares;
  const double span = static_cast<double>(std::max<int64_t>(end_ns - begin_ns, 1));
  for (const auto& [key, total] : totals) {
    shares.push_back(ActivityShare{key.first, key.second, total, static_cast<double>(total) / span});
  }
  std::sort(shares.begin(), shares.end(), [](const ActivityShare& a, const ActivityShare& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (shares.size() > limit) shares.resize(limit);
  return shares;
}

void NodeNames::Update(const analysis::Model& model) {
  names_.resize(std::max(names_.size(), model.nodes().size()));
  for (size_t i = 0; i < model.nodes().size(); ++i) names_[i] = model.nodes()[i].name;
}

std::string NodeNames::operator()(uint32_t node) const {
  return node < names_.size() ? names_[node] : std::to_string(node);
}

void WorstSteps::Offer(const analysis::Model& model, StepFacts step) {
  if (entries_.size() == capacity_ && step.*key_ <= entries_.back().first.*key_) return;
  auto activity = TopActivity(model, step.node, step.pid, step.start_ns, step.end_ns, 5);
  entries_.emplace_back(std::move(step), std::move(activity));
  std::sort(entries_.begin(), entries_.end(),
            [this](const Entry& a, const Entry& b) { return a.first.*key_ > b.first.*key_; });
  if (entries_.size() > capacity_) entries_.pop_back();
}

std::string FormatDurationNs(int64_t ns) {
  char text[32];
  const double value = static_cast<double>(ns);
  if (ns >= 1'000'000'000) std::snprintf(text, sizeof(text), "%.2f s", value / 1e9);
  else if (ns >= 1'000'000) std::snprintf(text, sizeof(text), "%.1f ms", value / 1e6);
  else std::snprintf(text, sizeof(text), "%.0f µs", value / 1e3);
  return text;
}

std::string FormatPercent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %%", fraction * 100.0);
  return text;
}

}  // namespace stepscope::rules
