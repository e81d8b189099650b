#include "rules/run_cost.h"

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/file_system.h"
#include "base/toml_json.h"

namespace stepscope::rules {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

StatusOr<std::vector<InstanceType>> LoadPriceCatalog(const std::string& path) {
  if (!EndsWith(path, ".toml")) return LoadInstanceCatalog(path);
  LocalFileSystem fs;
  auto text = fs.ReadFile(path);
  if (!text.ok()) return NotFoundError("price catalogue " + path + ": cannot be read; check the path");
  toml::parse_result parsed = toml::parse(*text, path);
  if (!parsed) {
    std::ostringstream message;
    message << "price catalogue " << path << " line " << parsed.error().source().begin.line << ": "
            << parsed.error().description() << "; expected [[instances]] tables (docs/compare.md)";
    return InvalidArgumentError(message.str());
  }
  return InstanceCatalogFromJson(TomlToJson(parsed.table()), "price catalogue " + path);
}

RunCost PriceRun(const std::vector<InstanceType>& catalog, const std::string& instance_type,
                 int32_t instance_count, double duration_s, const std::string& label) {
  RunCost cost;
  cost.instance_type = instance_type;
  cost.instance_count = instance_count;
  cost.duration_s = duration_s;
  std::string flag = label == "A" ? "a" : "b";
  if (instance_type.empty()) {
    cost.why = "run " + label + " has no instance type: record it with `stepscope run --instance TYPE --count N` "
               "or pass --instance-" + flag + " TYPE";
    return cost;
  }
  const InstanceType* type = FindInstanceType(catalog, instance_type);
  if (type == nullptr) {
    cost.why = "instance type " + instance_type + " of run " + label +
               " is not in the price catalogue; pass --prices FILE with it (docs/compare.md)";
    return cost;
  }
  if (instance_count <= 0) {
    cost.why = "run " + label + " has no instance count; pass --count-" + flag + " N";
    return cost;
  }
  cost.price_per_hour = type->price_per_hour;
  cost.cost_cents = std::llround(static_cast<double>(instance_count) * duration_s / 3600.0 * type->price_per_hour * 100.0);
  cost.priced = true;
  return cost;
}

CostComparison CompareCosts(const RunCost& a, const RunCost& b) {
  CostComparison comparison;
  if (!a.priced || !b.priced) {
    comparison.why = !a.priced ? a.why : b.why;
    return comparison;
  }
  comparison.available = true;
  const int64_t dearer = std::max(a.cost_cents, b.cost_cents);
  comparison.saving_cents = std::llabs(a.cost_cents - b.cost_cents);
  comparison.cheaper = a.cost_cents == b.cost_cents ? "" : (a.cost_cents < b.cost_cents ? "A" : "B");
  // From the rounded costs, so the printed share matches the printed dollars.
  comparison.saving_share =
      dearer > 0 ? std::round(static_cast<double>(comparison.saving_cents) / static_cast<double>(dearer) * 1000.0) / 1000.0
                 : 0.0;
  return comparison;
}

std::string FormatDollars(int64_t cents) {
  char text[48];
  const int64_t magnitude = std::llabs(cents);
  std::snprintf(text, sizeof text, "%s$%lld.%02lld", cents < 0 ? "-" : "", static_cast<long long>(magnitude / 100),
                static_cast<long long>(magnitude % 100));
  return text;
}

}  // namespace stepscope::rules
