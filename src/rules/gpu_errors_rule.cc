// GPUErrors (RULES.md §native, docs/rules.md): a GPU reported hardware or driver errors during
// the run: Xid critical-error events (gpu/gpuN/xid, one sample per event, value = the Xid code)
// and ECC errors (the rise of the volatile totals gpu/gpuN/ecc_{corrected,uncorrected}_errors
// over the run; a total that falls, as after a driver reload, starts a new base). An Xid or an
// uncorrected ECC error is critical: the job may have produced wrong results or died from it.
// Corrected ECC errors are information: the hardware fixed them, but a rising count is a GPU to
// watch.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/vocabulary.h"
#include "rules/builtin_rules.h"
#include "rules/samples_read_once.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

// The Xid codes a training job meets most, what they mean and what to do (NVIDIA's Xid catalogue,
// docs.nvidia.com/deploy/xid-errors).
struct XidInfo {
  int code;
  const char* meaning;
  bool hardware;  // points at the GPU or the machine rather than the program
};
constexpr XidInfo kXids[] = {
    {13, "graphics engine exception (often an out-of-range access in a kernel)", false},
    {31, "GPU memory page fault (often an illegal address in a kernel)", false},
    {43, "GPU stopped processing (the program's context hit a fault)", false},
    {45, "preemptive cleanup after an earlier error", false},
    {48, "double-bit ECC error", true},
    {61, "internal micro-controller breakpoint", true},
    {62, "internal micro-controller halt", true},
    {63, "ECC page retirement or row remapping recorded", true},
    {64, "ECC page retirement or row remapping failed", true},
    {74, "NVLink error", true},
    {79, "GPU has fallen off the bus", true},
    {92, "high single-bit ECC error rate", true},
    {94, "contained ECC error", true},
    {95, "uncontained ECC error", true},
    {119, "GSP RPC timeout", true},
    {120, "GSP error", true},
};

const XidInfo* FindXid(int code) {
  for (const XidInfo& info : kXids) {
    if (info.code == code) return &info;
  }
  return nullptr;
}

struct EccCounter {
  double base = -1;  // the total at the first sample (or after a reset)
  double last = -1;
  double risen = 0;  // errors counted during the run
  int64_t first_rise_ns = -1;
  int64_t last_rise_ns = -1;
  int64_t samples = 0;
};

struct XidTally {
  int64_t count = 0;
  int64_t first_ns = -1;
  int64_t last_ns = -1;
};

struct GpuErrors {
  EccCounter corrected, uncorrected;
  std::map<int, XidTally> xids;  // by code
  int64_t xid_samples = 0;
};

class GpuErrorsRule final : public Rule {
 public:
  std::string_view name() const override { return "GPUErrors"; }

  bool Evaluate(const Window& window) override {
    node_names_.Update(*window.model);
    reads_.WindowRead(window.end_ns);
    return ReadSamples(*window.model, window.samples, window.end_ns);
  }

  void Finish(const analysis::Model& model) override {
    // The samples on the last window's end edge, which no later window read.
    std::vector<std::pair<size_t, size_t>> all;
    int64_t end_ns = 0;
    if (reads_.LastEdge(model, &all, &end_ns)) ReadSamples(model, all, end_ns);
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = std::string(name());
    report.description = "Checks whether a GPU reported Xid errors or ECC memory errors during the run.";
    report.recommendation = "Treat the GPU as suspect: check `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER` and "
                            "the kernel log (dmesg | grep -i xid), and drain the machine if errors repeat.";
    report.parameters = parameters_.ReportString();
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, errors] : gpus_) {
      const auto& [node_index, gpu] = key;
      const std::string node_name = node_names_(node_index);
      const std::string gpu_name = "gpu" + std::to_string(gpu);
      report.datapoints += errors.corrected.samples + errors.uncorrected.samples + errors.xid_samples;
      nlohmann::json xids = nlohmann::json::object();
      for (const auto& [code, tally] : errors.xids) xids[std::to_string(code)] = tally.count;
      details[node_name][gpu_name] = {{"ecc_corrected", errors.corrected.risen},
                                      {"ecc_uncorrected", errors.uncorrected.risen},
                                      {"xid", std::move(xids)}};
      if (!errors.xids.empty()) AddFinding(report, XidFinding(node_name, gpu_name, errors));
      if (errors.uncorrected.risen > 0) {
        AddFinding(report, EccFinding(node_name, gpu_name, errors.uncorrected, /*uncorrected=*/true));
      }
      if (errors.corrected.risen > 0) {
        AddFinding(report, EccFinding(node_name, gpu_name, errors.corrected, /*uncorrected=*/false));
      }
    }
    report.details = std::move(details);
    return report;
  }

 private:
  // Reads the error samples of `ranges` (per series of the model) not read yet, before `end_ns`
  // (samples_read_once.h). Returns whether an error was seen.
  bool ReadSamples(const analysis::Model& model, const std::vector<std::pair<size_t, size_t>>& ranges,
                   int64_t end_ns) {
    bool seen = false;
    for (size_t s = 0; s < model.series().size() && s < ranges.size(); ++s) {
      const analysis::SystemSeries& series = model.series()[s];
      if (model.String(series.type) != analysis::kStepscopeSeriesType) continue;
      const std::string_view metric = model.String(series.name);
      const analysis::GpuMetricParts parts = analysis::ParseGpuMetric(metric);
      if (parts.gpu < 0 || parts.pid >= 0) continue;
      const bool xid = parts.leaf == "xid";
      const bool corrected = parts.leaf == "ecc_corrected_errors";
      if (!xid && !corrected && parts.leaf != "ecc_uncorrected_errors") continue;
      GpuErrors& errors = gpus_[{series.node, parts.gpu}];
      reads_.Read(series, metric, ranges[s], end_ns, [&](int64_t t, double value) {
        if (xid) {
          ++errors.xid_samples;
          XidTally& tally = errors.xids[static_cast<int>(value)];
          ++tally.count;
          if (tally.first_ns < 0) tally.first_ns = t;
          tally.last_ns = t;
          seen = true;
          return;
        }
        EccCounter& counter = corrected ? errors.corrected : errors.uncorrected;
        ++counter.samples;
        if (counter.base < 0 || value < counter.last) {
          counter.base = counter.last = value;  // the first total, or the driver reset it
          return;
        }
        if (value > counter.last) {
          counter.risen += value - counter.last;
          if (counter.first_rise_ns < 0) counter.first_rise_ns = t;
          counter.last_rise_ns = t;
          seen = true;
        }
        counter.last = value;
      });
    }
    return seen;
  }


  static void AddFinding(RuleReport& report, Finding finding) {
    ++report.violations;
    ++report.triggered;
    for (const Evidence& evidence : finding.evidence) report.last_trigger_ns = std::max(report.last_trigger_ns, evidence.end_ns);
    report.findings.push_back(std::move(finding));
  }

  static Finding XidFinding(const std::string& node_name, const std::string& gpu_name, const GpuErrors& errors) {
    Finding finding;
    finding.id = "GPUErrors/" + node_name + "/" + gpu_name + "/xid";
    finding.rule = "GPUErrors";
    finding.severity = Severity::kCritical;
    int64_t total = 0;
    bool hardware = false;
    std::string codes;
    for (const auto& [code, tally] : errors.xids) {
      total += tally.count;
      const XidInfo* info = FindXid(code);
      hardware = hardware || info == nullptr || info->hardware;
      if (!codes.empty()) codes += ", ";
      codes += std::to_string(code);
      Evidence evidence;
      evidence.node = node_name;
      evidence.start_ns = tally.first_ns;
      evidence.end_ns = tally.last_ns;
      evidence.what = "Xid " + std::to_string(code) + " (" +
                      (info ? info->meaning : "see NVIDIA's Xid catalogue") + ") on " + gpu_name + ", " +
                      std::to_string(tally.count) + (tally.count == 1 ? " time" : " times");
      finding.evidence.push_back(std::move(evidence));
    }
    finding.title = gpu_name + " on " + node_name + " reported " + std::to_string(total) + " Xid error" +
                    (total == 1 ? "" : "s") + " (Xid " + codes + ")";
    finding.recommendation =
        hardware ? "An Xid that points at the hardware: stop scheduling on this GPU until it is checked (reset it with "
                   "nvidia-smi -r, look for repeated errors, replace it if they come back); results computed around "
                   "the error may be wrong."
                 : "An Xid a program can cause (a bad memory access in a kernel): run the failing step with "
                   "CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer to find the kernel, then check its inputs.";
    finding.next_step = "Read the kernel log on " + node_name +
                        " around the evidence times (dmesg -T | grep -i xid): it names the process and the channel.";
    return finding;
  }

  static Finding EccFinding(const std::string& node_name, const std::string& gpu_name, const EccCounter& counter,
                            bool uncorrected) {
    Finding finding;
    const char* kind = uncorrected ? "uncorrected" : "corrected";
    finding.id = "GPUErrors/" + node_name + "/" + gpu_name + "/ecc_" + kind;
    finding.rule = "GPUErrors";
    finding.severity = uncorrected ? Severity::kCritical : Severity::kInfo;
    char count[32];
    std::snprintf(count, sizeof(count), "%.0f", counter.risen);
    finding.title = gpu_name + " on " + node_name + " had " + count + " " + kind + " ECC memory error" +
                    (counter.risen == 1 ? "" : "s") + " during the run";
    finding.recommendation =
        uncorrected ? "Uncorrected memory errors corrupt data or kill the job: drain the GPU, reset it (nvidia-smi -r) "
                      "so the bad rows are remapped, and replace it if errors return."
                    : "The GPU corrected these itself; a count that keeps rising predicts uncorrected errors: watch it "
                      "and plan a replacement.";
    finding.next_step = "Run `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i " + gpu_name.substr(3) + "` on " +
                        node_name + ".";
    Evidence evidence;
    evidence.node = node_name;
    evidence.start_ns = counter.first_rise_ns;
    evidence.end_ns = counter.last_rise_ns;
    evidence.what = std::string("the volatile ") + kind + " ECC total of " + gpu_name + " rose by " + count;
    finding.evidence.push_back(std::move(evidence));
    return finding;
  }

  std::map<std::pair<uint32_t, int>, GpuErrors> gpus_;
  SamplesReadOnce reads_;
  NodeNames node_names_;
};

}  // namespace

std::unique_ptr<Rule> MakeGpuErrorsRule() { return std::make_unique<GpuErrorsRule>(); }

}  // namespace stepscope::rules
