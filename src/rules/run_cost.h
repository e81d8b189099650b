// What a run cost: instance_count × duration × hourly price, priced from an instance catalogue
// (rules/instance_catalog.h: the built-in one, or `--prices FILE` in JSON or TOML), and what
// one run saves over the other.
//
// Rounding (docs/compare.md): each cost is rounded to cents first; the saving is the difference
// of the rounded costs and its share is relative to the dearer run's rounded cost, rounded to
// 0.1 %. So the printed numbers agree with each other: $6.16 - $1.07 = $5.09 = 82.6 % of $6.16.
//
// Callers: compare (run_comparison.cc), the report's verdict, the commands taking --prices.
// Pure functions except LoadPriceCatalog
// (reads one file); thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "rules/instance_catalog.h"

namespace stepscope::rules {

// A catalogue from `path`: .toml ([[instances]] tables) or JSON (anything else), both in the
// shape of docs/rules.md ("RightSizing's catalogue"). Errors name the file (and the TOML line).
StatusOr<std::vector<InstanceType>> LoadPriceCatalog(const std::string& path);

struct RunCost {
  std::string instance_type;   // "" when unknown
  int32_t instance_count = 0;  // 0 when unknown
  double duration_s = 0;
  double price_per_hour = 0;   // USD per instance; 0 when not priced
  int64_t cost_cents = 0;      // instance_count × duration × price, rounded to cents
  bool priced = false;
  std::string why;             // when !priced: one sentence saying what to pass
};

// Prices one run. Unknown instance types and counts are not errors: the cost is then
// unavailable and `why` says which flag gives it.
RunCost PriceRun(const std::vector<InstanceType>& catalog, const std::string& instance_type,
                 int32_t instance_count, double duration_s, const std::string& label);

struct CostComparison {
  bool available = false;
  std::string why;              // when !available
  int64_t saving_cents = 0;     // dearer - cheaper, >= 0
  double saving_share = 0;      // saving / dearer, rounded to 0.001
  std::string cheaper;          // "A", "B", or "" when both cost the same
};

CostComparison CompareCosts(const RunCost& a, const RunCost& b);

// 616 -> "$6.16"; negative amounts get a leading "-".
std::string FormatDollars(int64_t cents);

}  // namespace stepscope::rules
