// Instance types with their capacity and hourly price: what RightSizing chooses from and what
// `stepscope compare` prices runs with. A user catalogue (JSON) replaces the built-in example,
// whose prices are SageMaker on-demand list prices in us-east-1 at the time of writing: check
// your own before acting on a saving.
#pragma once

#include <cstdint>
#include <string>
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
  double price_per_hour = 0;   // USD
};

std::vector<InstanceType> BuiltinInstanceCatalog();

// {"instances": [{"name", "gpu_model", "gpus", "gpu_memory_gib", "vcpus", "memory_gib",
// "price_per_hour"}]} (docs/rules.md). Errors name the file and the entry.
StatusOr<std::vector<InstanceType>> LoadInstanceCatalog(const std::string& path);
// The same from an already parsed document (`stepscope compare --prices` reads TOML into JSON);
// `origin` names it in errors ("instance catalogue prices.toml").
StatusOr<std::vector<InstanceType>> InstanceCatalogFromJson(const nlohmann::json& json, const std::string& origin);

// The entry for `name`, ignoring a leading "ml."; nullptr when absent.
const InstanceType* FindInstanceType(const std::vector<InstanceType>& catalog, const std::string& name);

}  // namespace stepscope::rules
