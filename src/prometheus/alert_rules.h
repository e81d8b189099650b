// Prometheus alerting rules equivalent to stepscope's built-in system rules (`stepscope alerts`),
// over the series the exposition of `stepscope run --metrics-port` serves (metric_names.h).
//
// Each alert reads its rule's parameters from the rule itself (a ProfilerReport configured like
// every other command's, so `--rule LowGPUUtilization.threshold_p95=60` means what it means to
// `stepscope rules`), and turns counts of samples into time ranges with the sampling interval:
// LowGPUUtilization's `window=500` values at 500 ms are the last 250 s. Prometheus sees one sample
// per scrape, so no range is shorter than two scrape intervals. Where the reference rule is
// cumulative over the whole job (CPU/IO bottleneck ratios), the alert looks at the last
// `patience` sampling intervals instead, so it also resolves once the cause is gone;
// docs/prometheus.md states each correspondence.
//
// Callers: the alerts command. Threading: plain functions.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "rules/profiler_report.h"

namespace stepscope::prometheus {

struct AlertOptions {
  int64_t sample_interval_ns = 500'000'000;  // `stepscope run --interval` of the jobs watched
  int64_t scrape_interval_ns = 15'000'000'000;
  std::string group = "stepscope";
};

// The rules file (YAML; its strings are JSON-quoted, which YAML reads alike). Errors name the
// parameter that has no Prometheus equivalent (a StepOutlier.stddev the exposition does not
// count outliers for).
StatusOr<std::string> AlertRulesYaml(const rules::ProfilerReport& rules, const AlertOptions& options);

}  // namespace stepscope::prometheus
