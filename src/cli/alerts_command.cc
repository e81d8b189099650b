#include "cli/alerts_command.h"

#include <cstdio>

#include "base/duration.h"
#include "base/file_system.h"
#include "launcher/run_config.h"
#include "prometheus/alert_rules.h"
#include "rules/configured_profiler_report.h"

namespace stepscope::cli {
namespace {

constexpr int kExitWriteFailed = 1;
constexpr int kExitUsage = 2;

int UsageError(const std::string& message) {
  std::fprintf(stderr, "stepscope alerts: %s\n", message.c_str());
  return kExitUsage;
}

}  // namespace

int AlertsCommand(const AlertsInvocation& invocation) {
  launcher::RunConfig config;
  if (!invocation.config.empty()) {
    if (Status applied = launcher::ApplyRunConfigFile(config, invocation.config); !applied.ok()) {
      return UsageError(applied.message());
    }
  }
  prometheus::AlertOptions options;
  options.sample_interval_ns = config.interval_ns;
  if (!invocation.interval.empty()) {
    StatusOr<int64_t> interval = ParseDurationNs(invocation.interval);
    if (!interval.ok() || *interval <= 0) {
      return UsageError("--interval '" + invocation.interval + "' is not a duration like 500ms or 1s");
    }
    options.sample_interval_ns = *interval;
  }
  StatusOr<int64_t> scrape = ParseDurationNs(invocation.scrape_interval);
  if (!scrape.ok() || *scrape <= 0) {
    return UsageError("--scrape-interval '" + invocation.scrape_interval + "' is not a duration like 15s");
  }
  options.scrape_interval_ns = *scrape;

  auto rules = rules::MakeConfiguredProfilerReport(/*only=*/"", config.rules, invocation.overrides);
  if (!rules.ok()) return UsageError(rules.status().message());
  StatusOr<std::string> yaml = prometheus::AlertRulesYaml(**rules, options);
  if (!yaml.ok()) return UsageError(yaml.status().message());

  if (invocation.out.empty()) {
    std::fwrite(yaml->data(), 1, yaml->size(), stdout);
    return 0;
  }
  if (Status written = WriteFileAtomically(invocation.out, *yaml); !written.ok()) {
    std::fprintf(stderr, "stepscope alerts: cannot write '%s': %s (choose a writable path with -o)\n",
                 invocation.out.c_str(), written.message().c_str());
    return kExitWriteFailed;
  }
  std::fprintf(stderr, "stepscope alerts: wrote %s (check it with: promtool check rules %s)\n", invocation.out.c_str(),
               invocation.out.c_str());
  return 0;
}

}  // namespace stepscope::cli
