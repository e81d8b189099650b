// Instance types with their capacity and hourly price: what RightSizing chooses from and what
// `stepscope compare` prices runs with. A user catalogue (JSON or TOML, run_cost.h) replaces the
// built-in example, whose prices are SageMaker on-demand list prices in us-east-1 at the time of
// writing (docs/rules.md): check your own before acting on a saving. Capacities come from
// instance_capacities.h for the types it knows, so a user entry for one needs only its name and
// price.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace stepscope::rules {

struct InstanceType {
  std::string name;            // "ml.p3.2xlarge" and "p3.2xlarge" both match it
  std::string gpu_model;       // "V100"; "" for CPU-only instances
  int32_t gpus = 0;
  int64_t gpu_memory_bytes = 0;  // per GPU
  int32_t vcpus = 0;
  int64_t memory_bytes = 0;
  double price_per_hour = 0;   // USD; 0 when no catalogue prices it (a known type's capacity alone)
};

// `name` without SageMaker's "ml." prefix: "ml.g5.2xlarge" -> "g5.2xlarge".
std::string_view InstanceTypeBaseName(std::string_view name);

// The dated example: ten types with SageMaker us-east-1 on-demand prices.
std::vector<InstanceType> BuiltinInstanceCatalog();

// {"instances": [{"name", "price_per_hour", "gpu_model", "gpus", "gpu_memory_gib", "vcpus",
// "memory_gib"}]} (docs/rules.md). Every entry needs a name and a price; the capacities of a known
// type (instance_capacities.h) are filled in, and any given override them; an unknown type must
// give "vcpus" and "memory_gib" (and "gpu_model", "gpu_memory_gib" when "gpus" > 0). Errors
// name the file and the entry and say what to add.
StatusOr<std::vector<InstanceType>> LoadInstanceCatalog(const std::string& path);
// The same from an already parsed document (`stepscope compare --prices` reads TOML into JSON);
// `origin` names it in errors ("instance catalogue prices.toml").
StatusOr<std::vector<InstanceType>> InstanceCatalogFromJson(const nlohmann::json& json, const std::string& origin);

// The entry for `name`, ignoring a leading "ml."; nullptr when absent.
const InstanceType* FindInstanceType(const std::vector<InstanceType>& catalog, const std::string& name);

}  // namespace stepscope::rules
