#include "prometheus/alert_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "prometheus/metric_names.h"

namespace stepscope::prometheus {
namespace {

struct Alert {
  std::string name;      // alertname
  std::string rule;      // the stepscope rule it stands for
  std::string severity;  // warning, critical
  std::string expr;
  std::string summary;
  std::string description;
};

// A Prometheus duration of at least `ns`, in whole seconds (or milliseconds below one).
std::string Duration(int64_t ns) {
  if (ns < 1'000'000'000) return std::to_string(std::max<int64_t>(1, (ns + 999'999) / 1'000'000)) + "ms";
  return std::to_string((ns + 999'999'999) / 1'000'000'000) + "s";
}

// A parameter as PromQL reads it ("70", "0.2").
std::string Number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

std::string Quoted(std::string_view text) { return nlohmann::json(text).dump(); }

class Builder {
 public:
  Builder(const rules::ProfilerReport& report, const AlertOptions& options) : report_(report), options_(options) {}

  const rules::RuleParameters* Parameters(std::string_view rule) const {
    for (const auto& instance : report_.rules()) {
      if (instance->name() == rule) return &instance->parameters();
    }
    return nullptr;
  }
  // The time `count` samples take, at least two scrapes (Prometheus' resolution).
  int64_t SamplesNs(double count) const {
    const auto ns = static_cast<int64_t>(std::ceil(count * static_cast<double>(options_.sample_interval_ns)));
    return std::max(ns, 2 * options_.scrape_interval_ns);
  }
  std::string Window(double count) const { return Duration(SamplesNs(count)); }
  // True once the job has run for `patience` samples (the rules' "more than patience values").
  std::string WarmedUp(double patience) const {
    const double seconds = patience * static_cast<double>(options_.sample_interval_ns) / 1e9;
    return "on(" + std::string(kJobLabel) + ", " + std::string(kNodeLabel) + ") (time() - " + std::string(kStartTime) +
           " > " + Number(seconds) + ")";
  }
  std::string Scrape() const { return Duration(options_.scrape_interval_ns); }

  const rules::ProfilerReport& report_;
  const AlertOptions& options_;
};

std::string By() { return "by (" + std::string(kJobLabel) + ", " + std::string(kNodeLabel) + ")"; }
std::string On() { return "on(" + std::string(kJobLabel) + ", " + std::string(kNodeLabel) + ")"; }

void AddLowGpuUtilization(const Builder& b, std::vector<Alert>& alerts) {
  const rules::RuleParameters* p = b.Parameters("LowGPUUtilization");
  if (p == nullptr) return;
  const std::string window = b.Window(p->Number("window"));
  const std::string p95 = "quantile_over_time(0.95, " + std::string(kGpuUtil) + "[" + window + "])";
  const std::string p5 = "quantile_over_time(0.05, " + std::string(kGpuUtil) + "[" + window + "])";
  const std::string warmed = b.WarmedUp(p->Number("patience"));
  alerts.push_back({"StepscopeLowGPUUtilization", "LowGPUUtilization", "warning",
                    p95 + " < " + Number(p->Number("threshold_p95")) + " and " + warmed,
                    "GPU {{ $labels.gpu }} on {{ $labels.node }} is under-utilized",
                    "p95 GPU utilization over the last " + window + " is {{ printf \"%.1f\" $value }} % (threshold_p95 " +
                        Number(p->Number("threshold_p95")) +
                        "): increase the batch size, or move to a smaller GPU instance."});
  alerts.push_back({"StepscopeGPUUtilizationFluctuating", "LowGPUUtilization", "warning",
                    "(" + p95 + " > " + Number(p->Number("threshold_p95")) + ") and (" + p5 + " < " +
                        Number(p->Number("threshold_p5")) + ") and " + warmed,
                    "GPU {{ $labels.gpu }} on {{ $labels.node }} fluctuates between busy and idle",
                    "p95 GPU utilization over the last " + window + " is {{ printf \"%.1f\" $value }} % while its p5 is under " +
                        Number(p->Number("threshold_p5")) +
                        " %: look for data-loading or synchronization stalls between steps."});
}

// CPUBottleneck and IOBottleneck: the share of recent samples where some core is over its
// threshold while some GPU is under gpu_threshold on the same node.
void AddBottleneck(const Builder& b, std::vector<Alert>& alerts, std::string_view rule, std::string_view metric,
                   std::string_view threshold_parameter, std::string_view what) {
  const rules::RuleParameters* p = b.Parameters(rule);
  if (p == nullptr) return;
  const double patience = p->Number("patience");
  const std::string range = b.Window(patience);
  const std::string both = "(max " + By() + " (" + std::string(metric) + "{cpu!=\"total\"}) > bool " +
                           Number(p->Number(threshold_parameter)) + ") * " + On() + " (min " + By() + " (" +
                           std::string(kGpuUtil) + ") < bool " + Number(p->Number("gpu_threshold")) + ")";
  alerts.push_back({"Stepscope" + std::string(rule), std::string(rule), "warning",
                    "100 * avg_over_time((" + both + ")[" + range + ":" + b.Scrape() + "]) > " +
                        Number(p->Number("threshold")) + " and " + b.WarmedUp(patience),
                    std::string(what) + " holds back the GPUs on {{ $labels.node }}",
                    "{{ printf \"%.1f\" $value }} % of the last " + range + " had a core over " +
                        Number(p->Number(threshold_parameter)) + " % " +
                        (rule == "CPUBottleneck" ? "busy" : "in I/O wait") + " while a GPU was under " +
                        Number(p->Number("gpu_threshold")) + " % (threshold " + Number(p->Number("threshold")) +
                        " %): " +
                        (rule == "CPUBottleneck" ? "move preprocessing off the training loop or to more cores."
                                                 : "read the data faster (local copies, more loader workers, larger files).")});
}

void AddGpuMemoryIncrease(const Builder& b, std::vector<Alert>& alerts) {
  const rules::RuleParameters* p = b.Parameters("GPUMemoryIncrease");
  if (p == nullptr) return;
  const std::string window = b.Window(p->Number("window"));
  const std::string metric = std::string(kGpuMemoryUsed) + "[" + window + "]";
  alerts.push_back({"StepscopeGPUMemoryIncrease", "GPUMemoryIncrease", "warning",
                    "avg_over_time(" + metric + ") - avg_over_time(" + metric + " offset " + window + ") > " +
                        Number(p->Number("increase")) + " and " + b.WarmedUp(p->Number("patience")),
                    "GPU {{ $labels.gpu }} memory on {{ $labels.node }} keeps growing",
                    "GPU memory use rose {{ printf \"%.1f\" $value }} percentage points in " + window +
                        " (increase " + Number(p->Number("increase")) +
                        "): look for tensors kept across steps (losses accumulated with their graph, growing caches)."});
}

Status AddStepOutlier(const Builder& b, std::vector<Alert>& alerts) {
  const rules::RuleParameters* p = b.Parameters("StepOutlier");
  if (p == nullptr) return OkStatus();
  const double stddev = p->Number("stddev");
  if (std::find(std::begin(kOutlierStddevs), std::end(kOutlierStddevs), stddev) == std::end(kOutlierStddevs)) {
    std::string known;
    for (double value : kOutlierStddevs) known += (known.empty() ? "" : ", ") + StddevLabel(value);
    return InvalidArgumentError("StepOutlier.stddev: " + Number(stddev) +
                                " has no Prometheus counter; the exposition counts outliers for stddev " + known);
  }
  std::string selector = "stddev=\"" + StddevLabel(stddev) + "\"";
  const std::string& mode = p->Text("mode");
  if (mode != "None" && !mode.empty()) {
    const size_t dot = mode.rfind('.');
    selector += ", phase=" + Quoted(dot == std::string::npos ? mode : mode.substr(dot + 1));
  }
  alerts.push_back({"StepscopeStepOutliers", "StepOutlier", "warning",
                    std::string(kStepOutliers) + "{" + selector + "} > " + Number(p->Number("n_outliers")),
                    "Slow {{ $labels.phase }} steps on {{ $labels.node }} rank {{ $labels.rank }}",
                    "{{ $value }} steps took longer than mean + " + StddevLabel(stddev) + " x stddev (n_outliers " +
                        Number(p->Number("n_outliers")) +
                        "): open the run's report for what ran during them."});
  return OkStatus();
}

void AddDataloaderStarvation(const Builder& b, std::vector<Alert>& alerts) {
  const rules::RuleParameters* p = b.Parameters("DataloaderStarvation");
  if (p == nullptr) return;
  const std::string share = "100 * " + std::string(kDataWaitRatio);
  const std::string enough = "on(" + std::string(kJobLabel) + ", " + std::string(kNodeLabel) + ", rank, phase) " +
                             std::string(kSteps) + " >= " + Number(p->Number("min_steps"));
  const std::string moderate = Number(p->Number("moderate_pct"));
  const std::string severe = Number(p->Number("severe_pct"));
  const std::string next = "): give the DataLoader more workers (within the free cores), pin_memory and prefetching.";
  alerts.push_back({"StepscopeDataloaderStarvation", "DataloaderStarvation", "warning",
                    "(" + share + " > " + moderate + ") and (" + share + " <= " + severe + ") and " + enough,
                    "The training loop on {{ $labels.node }} rank {{ $labels.rank }} waits for data",
                    "{{ printf \"%.1f\" $value }} % of {{ $labels.phase }} step time is spent waiting for the next batch (moderate_pct " +
                        moderate + next});
  alerts.push_back({"StepscopeDataloaderStarvationSevere", "DataloaderStarvation", "critical",
                    share + " > " + severe + " and " + enough,
                    "The training loop on {{ $labels.node }} rank {{ $labels.rank }} starves for data",
                    "{{ printf \"%.1f\" $value }} % of {{ $labels.phase }} step time is spent waiting for the next batch (severe_pct " +
                        severe + next});
}

void AddMemoryNearCapacity(const Builder& b, std::vector<Alert>& alerts) {
  const rules::RuleParameters* p = b.Parameters("MemoryNearCapacity");
  if (p == nullptr) return;
  const std::string threshold = Number(p->Number("threshold_pct"));
  const std::string range = b.Window(0);
  alerts.push_back({"StepscopeGPUMemoryNearCapacity", "MemoryNearCapacity", "warning",
                    "max_over_time(" + std::string(kGpuMemoryUsed) + "[" + range + "]) > " + threshold,
                    "GPU {{ $labels.gpu }} on {{ $labels.node }} is close to running out of memory",
                    "GPU memory use peaked at {{ printf \"%.1f\" $value }} % (threshold_pct " + threshold +
                        "): a larger batch or model will not fit; activation checkpointing or a smaller batch makes room."});
  alerts.push_back({"StepscopeHostMemoryNearCapacity", "MemoryNearCapacity", "warning",
                    "max_over_time(" + std::string(kMemoryUsed) + "[" + range + "]) > " + threshold,
                    "Host memory on {{ $labels.node }} is close to running out",
                    "Host memory use peaked at {{ printf \"%.1f\" $value }} % (threshold_pct " + threshold +
                        "): fewer or lighter DataLoader workers, or a larger instance."});
}

}  // namespace

StatusOr<std::string> AlertRulesYaml(const rules::ProfilerReport& rules, const AlertOptions& options) {
  if (options.sample_interval_ns <= 0 || options.scrape_interval_ns <= 0) {
    return InvalidArgumentError("the sampling and scrape intervals must be positive");
  }
  const Builder builder(rules, options);
  std::vector<Alert> alerts;
  AddLowGpuUtilization(builder, alerts);
  AddBottleneck(builder, alerts, "CPUBottleneck", kCpuUtil, "cpu_threshold", "The CPU");
  AddBottleneck(builder, alerts, "IOBottleneck", kCpuIowait, "io_threshold", "I/O wait");
  AddGpuMemoryIncrease(builder, alerts);
  STEPSCOPE_RETURN_IF_ERROR(AddStepOutlier(builder, alerts));
  AddDataloaderStarvation(builder, alerts);
  AddMemoryNearCapacity(builder, alerts);

  std::string yaml =
      "# Generated by `stepscope alerts`: Prometheus alerting rules equivalent to stepscope's built-in\n"
      "# system rules, over the series of `stepscope run --metrics-port` (docs/prometheus.md).\n"
      "# Sampling interval " + Duration(options.sample_interval_ns) + ", scrape interval " +
      Duration(options.scrape_interval_ns) + ".\n"
      "groups:\n"
      "  - name: " + Quoted(options.group) + "\n"
      "    rules:\n";
  for (const Alert& alert : alerts) {
    yaml += "      - alert: " + Quoted(alert.name) + "\n";
    yaml += "        expr: " + Quoted(alert.expr) + "\n";
    yaml += "        labels:\n";
    yaml += "          severity: " + Quoted(alert.severity) + "\n";
    yaml += "          stepscope_rule: " + Quoted(alert.rule) + "\n";
    yaml += "        annotations:\n";
    yaml += "          summary: " + Quoted(alert.summary) + "\n";
    yaml += "          description: " + Quoted(alert.description) + "\n";
  }
  return yaml;
}

}  // namespace stepscope::prometheus
