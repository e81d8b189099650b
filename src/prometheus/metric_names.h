// The Prometheus names of stepscope's metrics: the one place that spells them, read by the
// exposition (`stepscope run --metrics-port`), the generated alerting rules (`stepscope alerts`)
// and the Grafana dashboard (docs/prometheus.md lists them).
//
// System metrics keep the sampler's names (docs/formats.md "System metric names"), '/' turned
// into '_' under the prefix `stepscope_`, the unit spelled out (`_pct` -> `_percent`, `_per_s`
// -> `_per_second`, `_w` -> `_watts`, `_c` -> `_celsius`), and a per-device segment turned into a
// label: `cpu/cpu3/util_pct` is `stepscope_cpu_util_percent{cpu="cpu3"}`, `gpu/gpu1/util_pct`
// `stepscope_gpu_util_percent{gpu="1"}`, `cpu/total/...` `{cpu="total"}`; a process's share
// `gpu/gpu0/pid42/memory_used_bytes` is `stepscope_gpu_process_memory_used_bytes{gpu="0",pid="42"}`.
// So a metric a sampler source adds is exposed without a change here.
//
// Every series carries `stepscope_job` and `node` (not `job`: Prometheus sets `job` to the scrape
// job's name and would rename ours to `exported_job`); per-rank series carry `rank`, per-phase
// ones `phase` (TRAIN, EVAL, PREDICT, GLOBAL).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepscope::prometheus {

inline constexpr std::string_view kJobLabel = "stepscope_job";
inline constexpr std::string_view kNodeLabel = "node";

// Framework and recording metrics (fed from the online rules' pass over the run).
inline constexpr std::string_view kInfo = "stepscope_info";                         // 1, with version
inline constexpr std::string_view kStartTime = "stepscope_start_time_seconds";      // the job's start
inline constexpr std::string_view kSteps = "stepscope_steps_total";                 // counter
inline constexpr std::string_view kStepDuration = "stepscope_step_duration_seconds";  // summary
inline constexpr std::string_view kStepDurationMean = "stepscope_step_duration_mean_seconds";
inline constexpr std::string_view kStepDurationStddev = "stepscope_step_duration_stddev_seconds";
inline constexpr std::string_view kStepsPerSecond = "stepscope_steps_per_second";
// Steps longer than mean + stddev·σ of the steps before them (StepOutlier's test, once a phase
// has more than 100 steps), one counter per `stddev` label value in kOutlierStddevs.
inline constexpr std::string_view kStepOutliers = "stepscope_step_outliers_total";
inline constexpr std::string_view kDataWaitRatio = "stepscope_data_wait_ratio";  // 0..1 of step time
inline constexpr std::string_view kDroppedEvents = "stepscope_dropped_events_total";  // by cause
inline constexpr std::string_view kRuleTriggers = "stepscope_rule_triggers_total";    // by rule
inline constexpr std::string_view kLastUpdate = "stepscope_framework_update_time_seconds";

// The `stddev` values the outlier counters are kept for: a StepOutlier.stddev alert parameter
// must be one of them.
inline constexpr double kOutlierStddevs[] = {1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6};
std::string StddevLabel(double stddev);  // "3", "2.5"

// System metrics used by the alerting rules (what SystemMetric gives for these sampler names).
inline constexpr std::string_view kCpuUtil = "stepscope_cpu_util_percent";          // {cpu}
inline constexpr std::string_view kCpuIowait = "stepscope_cpu_iowait_percent";      // {cpu}
inline constexpr std::string_view kGpuUtil = "stepscope_gpu_util_percent";          // {gpu}
inline constexpr std::string_view kGpuMemoryUsed = "stepscope_gpu_memory_used_percent";  // {gpu}
inline constexpr std::string_view kMemoryUsed = "stepscope_memory_used_percent";

struct ExposedName {
  std::string name;                                         // "stepscope_cpu_util_percent"
  std::vector<std::pair<std::string, std::string>> labels;  // {{"cpu", "cpu3"}}
};

// The Prometheus name and labels of a sampler metric ("cpu/cpu3/util_pct").
ExposedName SystemMetric(std::string_view sampler_name);

// Escapes a label value for the text format (backslash, double quote, newline).
std::string EscapeLabelValue(std::string_view value);

}  // namespace stepscope::prometheus
