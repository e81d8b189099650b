// `stepscope alerts`: writes Prometheus alerting rules equivalent to the built-in system rules,
// for the series `stepscope run --metrics-port` exposes (docs/prometheus.md).
//
//   stepscope alerts [--rule RULE.PARAM=VALUE]... [--config FILE] [--interval 500ms]
//                    [--scrape-interval 15s] [-o FILE]
//
// The parameters are configured as for `stepscope rules` and the online rules of `stepscope run`
// (a config file's [rules] table, then --rule), so the same settings are accepted and refused.
// Exit codes: 0 written, 1 the file could not be written, 2 a usage error (unknown rule, bad
// parameter, a parameter Prometheus cannot express).
//
// Callers: main.cc.
#pragma once

#include <string>
#include <vector>

namespace stepscope::cli {

struct AlertsInvocation {
  std::vector<std::string> overrides;  // "LowGPUUtilization.threshold_p95=60"
  std::string config;                  // a run config file whose [rules] table applies first
  std::string interval;                // the jobs' sampling interval; empty: the config's, else 500 ms
  std::string scrape_interval = "15s";
  std::string out;                     // empty: stdout
};

int AlertsCommand(const AlertsInvocation& invocation);

}  // namespace stepscope::cli
