// The built-in rules as one ProfilerReport configured by a user: which rules, then a parameter
// table, then RULE.PARAM=VALUE overrides. The one place where a configuration becomes rule
// objects, so `stepscope rules`, the online rules of `stepscope run` and the run config's
// validation of its `rules` settings accept and refuse exactly the same settings.
//
// Callers: the rules, summary and export commands, the launcher (online rules, run config).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "rules/instance_catalog.h"
#include "rules/profiler_report.h"

namespace stepscope::rules {

// The built-in rules (all, or the comma-separated `only`), with the parameter `section` (a
// config file's `rules` table; may be null or empty) applied first and then `overrides`.
// `catalog` (a `--prices` catalogue; not kept) replaces RightSizing's built-in one when not null.
StatusOr<std::unique_ptr<ProfilerReport>> MakeConfiguredProfilerReport(const std::string& only,
                                                                       const nlohmann::json& section,
                                                                       const std::vector<std::string>& overrides,
                                                                       const std::vector<InstanceType>* catalog = nullptr);

}  // namespace stepscope::rules
