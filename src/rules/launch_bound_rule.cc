// LaunchBound (RULES.md §native): a GPU that runs many short kernels and idles between them,
// because each kernel takes less time to run than the host takes to launch the next one. The GPU
// then waits on the Python and CUDA launch overhead of every operation, however fast it is.
//
// Per (node, rank, GPU, step phase), over the steps with device work (step_device_work.h):
// - short kernels: kernels shorter than `short_kernel_us`, their count and their share of the
//   GPU's kernel time;
// - idle between back-to-back work: the gaps inside a step between one device operation's end and
//   the next one's start that are shorter than `launch_gap_us` (longer gaps have other causes:
//   data loading, host work; GpuIdle attributes them), as a share of step time;
// - launches (KernelLaunches: the host call a launch flow leads from): the median over steps of
//   each step's median launch call duration and launch-call-start -> kernel-start latency, and the
//   kernels shorter than their own launch call (HTA's "short kernels").
// Triggers when short kernels take more than `short_kernel_pct` % of the kernel time and the
// idle between back-to-back work exceeds `threshold_pct` % of step time. Estimated saving: that
// idle share, which launching the step's kernels at once (a CUDA graph) removes.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/kernel_launches.h"
#include "rules/step_device_work.h"

namespace stepscope::rules {
namespace {

// One step on one GPU, kept as evidence.
struct StepEvidence {
  int64_t number = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t kernels = 0;
  int64_t short_kernels = 0;
  int64_t gap_ns = 0;
  std::vector<ActivityShare> short_kernel_names;  // the step's largest short kernels
};

struct Totals {
  int64_t steps = 0;
  int64_t step_ns = 0;
  int64_t kernels = 0;
  int64_t kernel_ns = 0;
  int64_t short_kernels = 0;
  int64_t short_kernel_ns = 0;
  int64_t launched_kernels = 0;       // with a known launch
  int64_t shorter_than_launch = 0;    // of them, shorter than their launch call
  int64_t gaps = 0;
  int64_t gap_ns = 0;
  std::vector<double> step_median_launch_ns;    // per step: median launch call duration
  std::vector<double> step_median_to_start_ns;  // per step: median launch start -> kernel start
  std::map<std::string, KernelTotal> short_kernel_names;
  std::vector<StepEvidence> worst;    // most idle between work first
  int64_t first_start_ns = INT64_MAX;
  int64_t last_end_ns = 0;
};

// (node, rank, GPU, phase)
using Key = std::tuple<uint32_t, int32_t, int32_t, std::string>;

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

class LaunchBoundRule final : public Rule {
 public:
  LaunchBoundRule() {
    parameters_.Declare("threshold_pct", RuleParameters::Kind::kPercent, "10");
    parameters_.Declare("short_kernel_us", RuleParameters::Kind::kPositive, "10");
    parameters_.Declare("short_kernel_pct", RuleParameters::Kind::kPercent, "50");
    parameters_.Declare("launch_gap_us", RuleParameters::Kind::kPositive, "50");
  }
  std::string_view name() const override { return "LaunchBound"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    gpu_data_ = gpu_data_ || WindowHasDeviceWork(window);
    if (!gpu_data_) return false;
    launches_.Update(model);
    for (const StepDeviceWork& step_work : CollectStepDeviceWork(window)) {
      for (const auto& [device, work] : step_work.work) Measure(model, step_work.step, device, work);
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report = GpuRuleReport(
        *this, "Checks whether GPUs run many short kernels and idle between them, waiting for the host to launch the "
               "next one.",
        "Launch fewer, larger kernels: capture the step in a CUDA graph (torch.compile(mode=\"reduce-overhead\") or "
        "torch.cuda.CUDAGraph), fuse element-wise operations (torch.compile), or raise the batch size so that each "
        "kernel does more work.",
        gpu_data_);
    if (!gpu_data_) return report;
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    const double short_threshold = parameters_.Number("short_kernel_pct") / 100.0;
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& [key, totals] : totals_) {
      const auto& [node, rank, device, phase] = key;
      const std::string node_name = node_names_(node);
      report.datapoints += totals.steps;
      const double short_share = Share(totals.short_kernel_ns, totals.kernel_ns);
      const double gap_share = Share(totals.gap_ns, totals.step_ns);
      const double median_launch_us = analysis::Median(totals.step_median_launch_ns) / 1e3;
      const double median_to_start_us = analysis::Median(totals.step_median_to_start_ns) / 1e3;
      nlohmann::json entry = {{"node", node_name},
                              {"rank", rank},
                              {"gpu", device},
                              {"phase", phase},
                              {"steps", totals.steps},
                              {"step_ns", totals.step_ns},
                              {"kernels", totals.kernels},
                              {"kernel_ns", totals.kernel_ns},
                              {"short_kernels", totals.short_kernels},
                              {"short_kernel_ns", totals.short_kernel_ns},
                              {"short_kernel_share", short_share},
                              {"kernels_with_launch", totals.launched_kernels},
                              {"kernels_shorter_than_launch", totals.shorter_than_launch},
                              {"median_launch_us", nullptr},
                              {"median_launch_to_start_us", nullptr},
                              {"idle_between_work_ns", totals.gap_ns},
                              {"idle_between_work_share", gap_share}};
      // No launch known (a trace without flows or correlation ids): null, never 0 µs.
      if (!totals.step_median_launch_ns.empty()) {
        entry["median_launch_us"] = median_launch_us;
        entry["median_launch_to_start_us"] = median_to_start_us;
      }
      gpus.push_back(std::move(entry));
      if (totals.kernels == 0 || short_share <= short_threshold || gap_share <= threshold) continue;
      ++report.triggered;
      ++report.violations;
      report.last_trigger_ns = std::max(report.last_trigger_ns, totals.last_end_ns);
      report.findings.push_back(MakeFinding(report, node_name, key, totals, short_share, gap_share, median_launch_us,
                                            median_to_start_us));
    }
    report.details = {{"gpu_data", true}, {"gpus", std::move(gpus)}};
    if (totals_.empty()) report.details["why"] = "No steps with GPU work: the GPUs are measured per step.";
    return report;
  }

 private:
  // One step's work on one GPU, in start order.
  void Measure(const analysis::Model& model, const StepFacts& step, int32_t device, const std::vector<uint32_t>& work) {
    const auto short_ns = static_cast<int64_t>(parameters_.Number("short_kernel_us") * 1000);
    const auto gap_limit_ns = static_cast<int64_t>(parameters_.Number("launch_gap_us") * 1000);
    const auto& events = model.events();
    Totals& totals = totals_[{step.node, step.rank, device, step.phase}];
    StepEvidence evidence;
    evidence.number = step.number;
    evidence.start_ns = step.start_ns;
    evidence.end_ns = step.end_ns;
    std::vector<double> launch_ns, to_start_ns;
    std::map<std::string, KernelTotal> step_short_kernels;
    int64_t busy_until = -1;  // end of the device work so far; -1 before the first
    for (const uint32_t index : work) {
      const analysis::FrameworkEvent& event = events[index];
      if (busy_until >= 0 && event.start_ns > busy_until && event.start_ns - busy_until < gap_limit_ns) {
        ++totals.gaps;
        evidence.gap_ns += event.start_ns - busy_until;
      }
      busy_until = std::max(busy_until, std::min(event.end_ns, step.end_ns));
      if (DeviceWorkOf(model, event) != analysis::GpuWork::kKernel) continue;
      ++evidence.kernels;
      totals.kernel_ns += event.duration_ns();
      if (event.duration_ns() < short_ns) {
        ++evidence.short_kernels;
        totals.short_kernel_ns += event.duration_ns();
        KernelTotal& named = step_short_kernels[std::string(model.String(event.name))];
        ++named.launches;
        named.total_ns += event.duration_ns();
      }
      if (const std::optional<uint32_t> launch = launches_.LaunchOf(index)) {
        const analysis::FrameworkEvent& call = events[*launch];
        ++totals.launched_kernels;
        if (event.duration_ns() < call.duration_ns()) ++totals.shorter_than_launch;
        launch_ns.push_back(static_cast<double>(call.duration_ns()));
        to_start_ns.push_back(static_cast<double>(event.start_ns - call.start_ns));
      }
    }
    ++totals.steps;
    totals.step_ns += step.duration_ns();
    totals.kernels += evidence.kernels;
    totals.short_kernels += evidence.short_kernels;
    totals.gap_ns += evidence.gap_ns;
    if (!launch_ns.empty()) {
      totals.step_median_launch_ns.push_back(analysis::Median(launch_ns));
      totals.step_median_to_start_ns.push_back(analysis::Median(to_start_ns));
    }
    for (const auto& [kernel, total] : step_short_kernels) {
      KernelTotal& run_total = totals.short_kernel_names[kernel];
      run_total.launches += total.launches;
      run_total.total_ns += total.total_ns;
    }
    totals.first_start_ns = std::min(totals.first_start_ns, step.start_ns);
    totals.last_end_ns = std::max(totals.last_end_ns, step.end_ns);
    if (evidence.gap_ns > 0) {
      evidence.short_kernel_names = LargestKernels(step_short_kernels, step.duration_ns());
      KeepLargest(totals.worst, std::move(evidence), &StepEvidence::gap_ns);
    }
  }

  Finding MakeFinding(const RuleReport& report, const std::string& node_name, const Key& key, const Totals& totals,
                      double short_share, double gap_share, double median_launch_us, double median_to_start_us) const {
    const auto& [node, rank, device, phase] = key;
    const std::string gpu = GpuSubject(node_name, rank, device);
    const std::string short_limit = parameters_.Text("short_kernel_us") + " µs";
    Finding finding;
    finding.id = "LaunchBound/" + node_name + "/" + gpu + "/" + phase;
    finding.rule = report.rule;
    finding.severity = gap_share > 0.25 ? Severity::kCritical : Severity::kWarning;
    finding.title = gpu + " on " + node_name + " is launch-bound in " + phase + " steps: " +
                    FormatPercent(short_share) + " of its kernel time in kernels shorter than " + short_limit +
                    ", idle " + FormatPercent(gap_share) + " of step time between them";
    finding.estimated_saving = gap_share;
    finding.saving_basis = "the GPU's idle time between back-to-back work (gaps shorter than " +
                           parameters_.Text("launch_gap_us") +
                           " µs), which launching the step's kernels at once (a CUDA graph) removes";
    finding.recommendation = report.recommendation;
    finding.next_step = totals.worst.empty()
                            ? "Open a step in the timeline and look at the gaps between the GPU's kernels."
                            : "Open step " + std::to_string(totals.worst.front().number) +
                                  " in the timeline: the GPU row shows the short kernels and the gaps between them.";
    char launch_text[160] = "no launch of these kernels was recorded";
    if (!totals.step_median_launch_ns.empty()) {
      std::snprintf(launch_text, sizeof(launch_text),
                    "median launch call %.1f µs, launch to kernel start %.1f µs; %lld of %lld kernels ran shorter "
                    "than their launch call",
                    median_launch_us, median_to_start_us, static_cast<long long>(totals.shorter_than_launch),
                    static_cast<long long>(totals.launched_kernels));
    }
    Evidence summary = GpuEvidence(
        node_name, rank, phase, totals.first_start_ns, totals.last_end_ns,
        std::to_string(totals.short_kernels) + " of " + std::to_string(totals.kernels) + " kernels in " +
            std::to_string(totals.steps) + " steps were shorter than " + short_limit + " (" +
            FormatDurationNs(totals.short_kernel_ns) + " of " + FormatDurationNs(totals.kernel_ns) + " kernel time); " +
            launch_text + ". The largest short kernels:");
    summary.top_activity = LargestKernels(totals.short_kernel_names, totals.step_ns);
    finding.evidence.push_back(std::move(summary));
    for (const StepEvidence& step : totals.worst) {
      Evidence evidence = GpuEvidence(node_name, rank, phase, step.start_ns, step.end_ns,
                                      "step " + std::to_string(step.number) + ": " + std::to_string(step.kernels) +
                                          " kernels (" + std::to_string(step.short_kernels) + " shorter than " +
                                          short_limit + "), " + FormatDurationNs(step.gap_ns) + " idle between them",
                                      {step.number});
      evidence.top_activity = step.short_kernel_names;
      finding.evidence.push_back(std::move(evidence));
    }
    return finding;
  }

  std::map<Key, Totals> totals_;
  NodeNames node_names_;
  KernelLaunches launches_;
  bool gpu_data_ = false;
};

}  // namespace

std::unique_ptr<Rule> MakeLaunchBoundRule() { return std::make_unique<LaunchBoundRule>(); }

}  // namespace stepscope::rules
