// PageableCopy (RULES.md §native): host-to-device copies from pageable (not page-locked) host
// memory inside steps. CUDA cannot copy pageable memory by DMA: the driver stages it through a
// pinned buffer, the copy runs at a fraction of the link's bandwidth, and the host call returns
// only once the data is staged, so `.to(device, non_blocking=True)` cannot overlap it with
// compute. The copies are named by the host memory they read ("Memcpy HtoD (Pageable -> Device)",
// classified by analysis::ClassifyMemoryOperation as the GPU page does).
//
// Per (node, rank, step phase), over steps with device work (step_device_work.h): the pageable
// host-to-device copies that started in them (count, bytes where the trace gives them, time) and
// their share of step time; the pinned ones beside for comparison. Per node also every pageable
// host-to-device copy of the run, in steps or not (a trace without steps still shows them).
// Triggers when the share exceeds `threshold_pct` % of step time. Estimated saving: that share,
// the time pinned memory and non-blocking copies let run beside the GPU's compute.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "rules/builtin_rules.h"
#include "rules/step_device_work.h"

namespace stepscope::rules {
namespace {

struct Copies {
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t with_bytes = 0;  // copies whose trace gave a byte count
  int64_t total_ns = 0;

  void Add(const analysis::Model& model, const analysis::FrameworkEvent& event) {
    ++count;
    total_ns += event.duration_ns();
    const analysis::EventArg* arg = model.FindArg(event, "bytes");
    if (arg == nullptr) return;
    if (arg->type == analysis::EventArg::Type::kInt) bytes += arg->int_value;
    else if (arg->type == analysis::EventArg::Type::kDouble) bytes += static_cast<int64_t>(arg->double_value);
    else return;
    ++with_bytes;
  }
  void Merge(const Copies& other) {
    count += other.count;
    bytes += other.bytes;
    with_bytes += other.with_bytes;
    total_ns += other.total_ns;
  }
  nlohmann::json Json() const {
    return {{"count", count}, {"bytes", with_bytes > 0 ? nlohmann::json(bytes) : nlohmann::json(nullptr)},
            {"with_bytes", with_bytes}, {"total_ns", total_ns}};
  }
};

// One step, kept as evidence.
struct StepEvidence {
  int64_t number = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t copy_ns = 0;
  Copies copies;
};

struct Totals {
  int64_t steps = 0;
  int64_t step_ns = 0;
  Copies pageable;
  Copies pinned;
  std::vector<StepEvidence> worst;  // most pageable copy time first
  int64_t first_start_ns = INT64_MAX;
  int64_t last_end_ns = 0;
};

// (node, rank, phase)
using Key = std::tuple<uint32_t, int32_t, std::string>;

enum class HostMemory { kOther, kPageable, kPinned };

// Whether `event` is a host-to-device copy, and from which host memory.
HostMemory HostToDeviceSource(const analysis::Model& model, const analysis::FrameworkEvent& event) {
  if (DeviceWorkOf(model, event) != analysis::GpuWork::kMemcpy) return HostMemory::kOther;
  const analysis::MemoryOperationRow row =
      analysis::ClassifyMemoryOperation(model.String(event.name), analysis::GpuWork::kMemcpy);
  if (row.kind != "HtoD") return HostMemory::kOther;
  if (row.host_memory == "pageable") return HostMemory::kPageable;
  return row.host_memory == "pinned" ? HostMemory::kPinned : HostMemory::kOther;
}

std::string FormatBytes(const Copies& copies) {
  if (copies.with_bytes == 0) return "size unknown";
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", static_cast<double>(copies.bytes) / 1e6);
  return text;
}

class PageableCopyRule final : public Rule {
 public:
  PageableCopyRule() { parameters_.Declare("threshold_pct", RuleParameters::Kind::kPercent, "2"); }
  std::string_view name() const override { return "PageableCopy"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    const auto& events = model.events();
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const analysis::FrameworkEvent& event = events[i];
      if (!DeviceWorkOf(model, event)) continue;
      gpu_data_ = true;
      if (HostToDeviceSource(model, event) == HostMemory::kPageable) run_copies_[event.node].Add(model, event);
    }
    if (!gpu_data_) return false;
    for (const StepDeviceWork& step_work : CollectStepDeviceWork(window)) {
      if (step_work.work.empty()) continue;
      const StepFacts& step = step_work.step;
      Totals& totals = totals_[{step.node, step.rank, step.phase}];
      StepEvidence evidence;
      evidence.number = step.number;
      evidence.start_ns = step.start_ns;
      evidence.end_ns = step.end_ns;
      for (const auto& [device, work] : step_work.work) {
        for (const uint32_t index : work) {
          const HostMemory source = HostToDeviceSource(model, events[index]);
          if (source == HostMemory::kPageable) evidence.copies.Add(model, events[index]);
          else if (source == HostMemory::kPinned) totals.pinned.Add(model, events[index]);
        }
      }
      ++totals.steps;
      totals.step_ns += step.duration_ns();
      totals.pageable.Merge(evidence.copies);
      totals.first_start_ns = std::min(totals.first_start_ns, step.start_ns);
      totals.last_end_ns = std::max(totals.last_end_ns, step.end_ns);
      evidence.copy_ns = evidence.copies.total_ns;
      if (evidence.copies.count > 0) KeepLargest(totals.worst, std::move(evidence), &StepEvidence::copy_ns);
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report = GpuRuleReport(
        *this, "Checks for host-to-device copies from pageable host memory inside steps.",
        "Copy from pinned memory without blocking: DataLoader(..., pin_memory=True) and batch.to(device, "
        "non_blocking=True); tensors built on the host every step can be allocated pinned (pin_memory=True) or "
        "created on the GPU directly.",
        gpu_data_);
    if (!gpu_data_) return report;
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    nlohmann::json nodes = nlohmann::json::object();
    for (const auto& [node, copies] : run_copies_) nodes[node_names_(node)] = copies.Json();
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& [key, totals] : totals_) {
      const auto& [node, rank, phase] = key;
      const std::string node_name = node_names_(node);
      report.datapoints += totals.steps;
      const double share = totals.step_ns > 0 ? static_cast<double>(totals.pageable.total_ns) / totals.step_ns : 0.0;
      steps.push_back({{"node", node_name},
                       {"rank", rank},
                       {"phase", phase},
                       {"steps", totals.steps},
                       {"step_ns", totals.step_ns},
                       {"pageable_htod", totals.pageable.Json()},
                       {"pinned_htod", totals.pinned.Json()},
                       {"pageable_share", share}});
      if (totals.pageable.count == 0 || share <= threshold) continue;
      ++report.triggered;
      ++report.violations;
      report.last_trigger_ns = std::max(report.last_trigger_ns, totals.last_end_ns);
      report.findings.push_back(MakeFinding(report, node_name, key, totals, share));
    }
    report.details = {{"gpu_data", true}, {"pageable_htod_by_node", std::move(nodes)}, {"steps", std::move(steps)}};
    if (totals_.empty()) report.details["why"] = "No steps with GPU work: the copies' share is of step time.";
    return report;
  }

 private:
  Finding MakeFinding(const RuleReport& report, const std::string& node_name, const Key& key, const Totals& totals,
                      double share) const {
    const auto& [node, rank, phase] = key;
    const std::string subject = rank >= 0 && node_name != "rank-" + std::to_string(rank)
                                    ? node_name + "/rank-" + std::to_string(rank)
                                    : node_name;
    Finding finding;
    finding.id = "PageableCopy/" + subject + "/" + phase;
    finding.rule = report.rule;
    finding.severity = share > 0.1 ? Severity::kCritical : Severity::kWarning;
    char per_step[64];
    std::snprintf(per_step, sizeof(per_step), "%.1f", static_cast<double>(totals.pageable.count) / totals.steps);
    finding.title = phase + " steps on " + subject + " copy from pageable host memory " + per_step +
                    " times per step, " + FormatPercent(share) + " of step time";
    finding.estimated_saving = share;
    finding.saving_basis = "the pageable copies' share of step time: from pinned memory with non_blocking=True they "
                           "run beside the GPU's compute instead of holding up the step";
    finding.recommendation = report.recommendation;
    finding.next_step = "Find the .to(device)/.cuda() calls of step " + std::to_string(totals.worst.front().number) +
                        " in the timeline (the Memcpy HtoD (Pageable -> Device) rows lead to their launch) and "
                        "pin their source: the DataLoader's batches first.";
    finding.evidence.push_back(GpuEvidence(
        node_name, rank, phase, totals.first_start_ns, totals.last_end_ns,
        std::to_string(totals.pageable.count) + " host-to-device copies from pageable memory in " +
            std::to_string(totals.steps) + " steps: " + FormatBytes(totals.pageable) + ", " +
            FormatDurationNs(totals.pageable.total_ns) + " (" + std::to_string(totals.pinned.count) +
            " from pinned memory: " + FormatDurationNs(totals.pinned.total_ns) + ")"));
    for (const StepEvidence& step : totals.worst) {
      const double step_share = static_cast<double>(step.copy_ns) / std::max<int64_t>(1, step.end_ns - step.start_ns);
      finding.evidence.push_back(GpuEvidence(
          node_name, rank, phase, step.start_ns, step.end_ns,
          "step " + std::to_string(step.number) + ": " + std::to_string(step.copies.count) + " pageable copies, " +
              FormatBytes(step.copies) + ", " + FormatDurationNs(step.copy_ns) + " (" + FormatPercent(step_share) +
              " of the step)",
          {step.number}));
    }
    return finding;
  }

  std::map<Key, Totals> totals_;
  std::map<uint32_t, Copies> run_copies_;  // every pageable host-to-device copy, per node
  NodeNames node_names_;
  bool gpu_data_ = false;
};

}  // namespace

std::unique_ptr<Rule> MakePageableCopyRule() { return std::make_unique<PageableCopyRule>(); }

}  // namespace stepscope::rules
