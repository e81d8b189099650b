#include "rules/framework_activity.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "analysis/vocabulary.h"

namespace stepscope::rules {
namespace {

using analysis::EventKind;
using analysis::FrameworkEvent;
using analysis::Model;

// Operators and Horovod operations at or below this share (%) are left out of the CPU/GPU and
// horovod keys (the reference's chart filter), and the rest renormalised to 100.
constexpr double kMinSharePct = 2.0;

bool ContainsIgnoreCase(std::string_view text, std::string_view lower_needle) {
  if (lower_needle.size() > text.size()) return false;
  for (size_t i = 0; i + lower_needle.size() <= text.size(); ++i) {
    size_t j = 0;
    while (j < lower_needle.size() &&
           std::tolower(static_cast<unsigned char>(text[i + j])) == lower_needle[j]) {
      ++j;
    }
    if (j == lower_needle.size()) return true;
  }
  return false;
}

// Horovod timelines name a phase per tensor ("Adam_Allreduce/HorovodAllreduce_..."); importers
// may also tag the events with category "horovod".
bool IsHorovod(std::string_view phase, std::string_view category) {
  return category == "horovod" || phase.find("Horovod") != std::string_view::npos ||
         phase.find("horovod") != std::string_view::npos;
}

// share = value / total * 100 in the reference's order of operations; 0 for an all-zero total.
double SharePct(double value, double total) { return total > 0 ? value / total * 100.0 : 0.0; }

template <typename Map>
int64_t Sum(const Map& totals) {
  int64_t sum = 0;
  for (const auto& [key, ns] : totals) sum += ns;
  return sum;
}

// The reference's filter_events: operators merged over phases, shares of the total, those
// above the threshold kept and renormalised; totals in µs.
void WriteFilteredOperators(const std::map<std::string, std::map<std::string, int64_t, std::less<>>, std::less<>>& by_phase,
                            nlohmann::json* shares, nlohmann::json* totals) {
  std::map<std::string, int64_t, std::less<>> operators;
  for (const auto& [phase, ops] : by_phase) {
    for (const auto& [name, ns] : ops) operators[name] += ns;
  }
  const double total = static_cast<double>(Sum(operators));
  std::vector<std::pair<const std::string*, double>> kept;
  double kept_sum = 0;
  for (const auto& [name, ns] : operators) {
    const double share = SharePct(static_cast<double>(ns), total);
    if (share > kMinSharePct) {
      kept.emplace_back(&name, share);
      kept_sum += share;
    }
  }
  *shares = nlohmann::json::object();
  *totals = nlohmann::json::object();
  for (const auto& [name, share] : kept) {
    (*shares)[*name] = SharePct(share, kept_sum);
    (*totals)[*name] = MicrosecondsJson(operators[*name]);
  }
}

nlohmann::json SharesOf(const std::map<std::string, int64_t, std::less<>>& totals) {
  nlohmann::json shares = nlohmann::json::object();
  const double total = static_cast<double>(Sum(totals));
  for (const auto& [name, ns] : totals) shares[name] = SharePct(static_cast<double>(ns), total);
  return shares;
}

}  // namespace

nlohmann::json MicrosecondsJson(int64_t ns) {
  if (ns % 1000 == 0) return nlohmann::json(ns / 1000);
  return nlohmann::json(static_cast<double>(ns) / 1000.0);
}

void FrameworkActivity::AddTo(Totals* totals, std::string_view key, int64_t ns) {
  auto it = totals->find(key);
  if (it == totals->end()) it = totals->emplace(std::string(key), 0).first;
  it->second += ns;
}

void FrameworkActivity::Add(const Model& model, const FrameworkEvent& event) {
  if (event.kind != EventKind::kSpan) return;
  const std::string_view phase = model.String(event.phase);
  if (phase == analysis::kStepscopePhase) return;
  const std::string_view name = model.String(event.name);
  const int64_t ns = event.duration_ns();
  ++events_;

  if (ContainsIgnoreCase(phase, "cpu")) {
    auto it = cpu_.find(phase);
    if (it == cpu_.end()) it = cpu_.emplace(std::string(phase), Totals{}).first;
    AddTo(&it->second, name, ns);
  } else if (ContainsIgnoreCase(phase, "gpu")) {
    auto it = gpu_.find(phase);
    if (it == gpu_.end()) it = gpu_.emplace(std::string(phase), Totals{}).first;
    AddTo(&it->second, name, ns);
  } else if (phase.find("Step") != std::string_view::npos) {
    AddTo(&step_phases_, phase, ns);
    // The reference takes the gap's ends from steps that carry a step number.
    if (event.step >= 0) {
      if (!any_numbered_step_) first_step_start_ns_ = event.start_ns;
      last_step_end_ns_ = any_numbered_step_ ? std::max(last_step_end_ns_, event.end_ns) : event.end_ns;
      any_numbered_step_ = true;
    }
  } else if (phase == "Forward-SubModuleInternal") {
    AddTo(&forward_, name, ns);
  } else if (phase == "Backward-SubModuleInternal") {
    AddTo(&backward_, name, ns);
  } else if (IsHorovod(phase, model.String(event.category))) {
    AddTo(&horovod_, name, ns);
  } else {
    AddTo(&general_, phase, ns);
  }
}

void FrameworkActivity::AddAt(const Model& model, uint32_t node, int64_t t_ns) {
  for (uint32_t index : model.EventsOverlapping(t_ns, t_ns)) {
    const FrameworkEvent& event = model.events()[index];
    if (node != kAllNodes && event.node != node) continue;
    if (event.start_ns < t_ns && event.end_ns > t_ns) Add(model, event);
  }
}

void FrameworkActivity::AddOver(const Model& model, uint32_t node, int64_t begin_ns, int64_t end_ns) {
  for (uint32_t index : model.EventsOverlapping(begin_ns, end_ns)) {
    const FrameworkEvent& event = model.events()[index];
    if (node != kAllNodes && event.node != node) continue;
    Add(model, event);
  }
}

void FrameworkActivity::WriteDetails(nlohmann::json* details) const {
  nlohmann::json& out = *details;

  // ratio: each CPU/GPU operator phase's share of all operator time.
  int64_t operator_ns = 0;
  for (const auto& [phase, ops] : cpu_) operator_ns += Sum(ops);
  for (const auto& [phase, ops] : gpu_) operator_ns += Sum(ops);
  nlohmann::json ratio = nlohmann::json::object();
  for (const auto* group : {&cpu_, &gpu_}) {
    for (const auto& [phase, ops] : *group) {
      ratio[phase] = SharePct(static_cast<double>(Sum(ops)), static_cast<double>(operator_ns));
    }
  }
  out["ratio"] = std::move(ratio);

  if (!cpu_.empty()) WriteFilteredOperators(cpu_, &out["CPU"], &out["CPU_total"]);
  if (!gpu_.empty()) WriteFilteredOperators(gpu_, &out["GPU"], &out["GPU_total"]);

  Totals phases = step_phases_;
  if (with_step_gap_ && !step_phases_.empty()) {
    const int64_t span_ns = any_numbered_step_ ? last_step_end_ns_ - first_step_start_ns_ : 0;
    // Clamped: steps of several nodes or processes overlap, and their sum can exceed the span.
    phases["others"] = std::max<int64_t>(0, span_ns - Sum(step_phases_));
  }
  out["phase"] = SharesOf(phases);
  out["phase_time"] = nlohmann::json::object();

  if (!general_.empty()) out["general"] = SharesOf(general_);

  if (!forward_.empty() && !backward_.empty()) {
    const double forward_ns = static_cast<double>(Sum(forward_));
    const double backward_ns = static_cast<double>(Sum(backward_));
    out["forward_backward"] = {{"Forward pass", SharePct(forward_ns, forward_ns + backward_ns)},
                               {"Backward pass", SharePct(backward_ns, forward_ns + backward_ns)}};
  }

  if (!horovod_.empty()) {
    const double total = static_cast<double>(Sum(horovod_));
    Totals kept;
    for (const auto& [name, ns] : horovod_) {
      if (ns > 0 && static_cast<double>(ns) / total > kMinSharePct / 100.0) kept.emplace(name, ns);
    }
    out["horovod"] = SharesOf(kept);
  }
}

nlohmann::json FrameworkActivity::ToJson() const {
  nlohmann::json details = nlohmann::json::object();
  WriteDetails(&details);
  return details;
}

std::vector<ActivityShare> FrameworkActivity::Top(size_t limit, int64_t range_ns) const {
  std::vector<ActivityShare> all;
  auto add = [&](const char* kind, const std::string& name, int64_t ns) {
    ActivityShare share;
    share.kind = kind;
    share.name = name;
    share.total_ns = ns;
    share.share = range_ns > 0 ? static_cast<double>(ns) / static_cast<double>(range_ns) : 0.0;
    all.push_back(std::move(share));
  };
  Totals cpu_ops, gpu_ops;
  for (const auto& [phase, ops] : cpu_) {
    for (const auto& [name, ns] : ops) cpu_ops[name] += ns;
  }
  for (const auto& [phase, ops] : gpu_) {
    for (const auto& [name, ns] : ops) gpu_ops[name] += ns;
  }
  for (const auto& [name, ns] : cpu_ops) add("operator", name, ns);
  for (const auto& [name, ns] : gpu_ops) add("kernel", name, ns);
  for (const auto& [name, ns] : forward_) add("annotation", "forward " + name, ns);
  for (const auto& [name, ns] : backward_) add("annotation", "backward " + name, ns);
  for (const auto& [name, ns] : horovod_) add("operator", name, ns);
  for (const auto& [phase, ns] : general_) add("phase", phase, ns);
  // Largest first; ties by name so the order is stable.
  std::sort(all.begin(), all.end(), [](const ActivityShare& a, const ActivityShare& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.name < b.name;
  });
  if (all.size() > limit) all.resize(limit);
  return all;
}

nlohmann::json FrameworkActivityAt(const Model& model, uint32_t node, int64_t t_ns) {
  FrameworkActivity activity;
  activity.AddAt(model, node, t_ns);
  return activity.ToJson();
}

nlohmann::json FrameworkActivityOver(const Model& model, uint32_t node, int64_t begin_ns, int64_t end_ns) {
  FrameworkActivity activity;
  activity.AddOver(model, node, begin_ns, end_ns);
  return activity.ToJson();
}

}  // namespace stepscope::rules
