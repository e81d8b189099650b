#include "rules/instance_catalog.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "rules/instance_capacities.h"

namespace stepscope::rules {
namespace {

constexpr double kGiB = double(int64_t{1} << 30);

// The capacities a catalogue entry may give, each a number >= 0 (gpu_model a string).
constexpr std::string_view kCapacityKeys[] = {"gpus", "gpu_memory_gib", "vcpus", "memory_gib"};

// Reads `entry`'s capacities over `type` (a known type's, or empty). Errors name `where`.
Status ApplyCapacities(const nlohmann::json& entry, bool known, const std::string& where, InstanceType& type) {
  for (std::string_view key : kCapacityKeys) {
    auto it = entry.find(key);
    if (it == entry.end()) continue;
    if (!it->is_number() || it->get<double>() < 0) {
      return InvalidArgumentError(where + ": \"" + std::string(key) + "\" must be a number >= 0");
    }
    const double value = it->get<double>();
    if (key == "gpus") type.gpus = static_cast<int32_t>(value);
    if (key == "gpu_memory_gib") type.gpu_memory_bytes = static_cast<int64_t>(value * kGiB);
    if (key == "vcpus") type.vcpus = static_cast<int32_t>(value);
    if (key == "memory_gib") type.memory_bytes = static_cast<int64_t>(value * kGiB);
  }
  if (auto it = entry.find("gpu_model"); it != entry.end()) {
    if (!it->is_string()) return InvalidArgumentError(where + ": \"gpu_model\" must be a string like \"A10G\"");
    type.gpu_model = it->get<std::string>();
  }
  if (known) return OkStatus();
  // Without capacities RightSizing would size an unknown type as infinitely large.
  const bool has_host = entry.contains("vcpus") && entry.contains("memory_gib");
  const bool has_gpus = type.gpus == 0 || (entry.contains("gpu_model") && entry.contains("gpu_memory_gib"));
  if (!has_host || !has_gpus) {
    return InvalidArgumentError(where + " \"" + type.name +
                                "\" is not a known instance type: add its \"vcpus\" and \"memory_gib\" (and "
                                "\"gpus\", \"gpu_model\", \"gpu_memory_gib\" if it has accelerators), or correct "
                                "the name (docs/rules.md lists the known families)");
  }
  return OkStatus();
}

}  // namespace

std::string_view InstanceTypeBaseName(std::string_view name) {
  return name.substr(0, 3) == "ml." ? name.substr(3) : name;
}

std::vector<InstanceType> BuiltinInstanceCatalog() {
  // SageMaker on-demand list prices, us-east-1, USD per hour, as written when this example was
  // made; capacities from instance_capacities.h.
  constexpr std::pair<std::string_view, double> kExamplePrices[] = {
      {"p3.2xlarge", 3.825},  {"p3.8xlarge", 14.688}, {"p3.16xlarge", 28.152}, {"g4dn.xlarge", 0.736},
      {"g4dn.12xlarge", 4.89}, {"g5.xlarge", 1.408},   {"g5.12xlarge", 7.09},   {"p4d.24xlarge", 37.688},
      {"c5.2xlarge", 0.408},  {"c5.9xlarge", 1.836},
  };
  std::vector<InstanceType> catalog;
  for (const auto& [name, price] : kExamplePrices) {
    std::optional<InstanceType> type = FindKnownInstanceType(name);
    if (!type) continue;  // instance_catalog_unittest checks every example name is known
    type->price_per_hour = price;
    catalog.push_back(std::move(*type));
  }
  return catalog;
}

StatusOr<std::vector<InstanceType>> LoadInstanceCatalog(const std::string& path) {
  std::ifstream file(path);
  if (!file) return NotFoundError("price catalogue " + path + ": cannot be read; check the path");
  std::stringstream text;
  text << file.rdbuf();
  const nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  return InstanceCatalogFromJson(json, "price catalogue " + path);
}

StatusOr<std::vector<InstanceType>> InstanceCatalogFromJson(const nlohmann::json& json, const std::string& origin) {
  if (json.is_discarded() || !json.is_object() || !json.contains("instances") || !json["instances"].is_array()) {
    return InvalidArgumentError(origin + ": expected a JSON object {\"instances\": [...]} (docs/rules.md)");
  }
  std::vector<InstanceType> catalog;
  size_t index = 0;
  for (const nlohmann::json& entry : json["instances"]) {
    const std::string where = origin + ": instances[" + std::to_string(index++) + "]";
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
        !entry.contains("price_per_hour") || !entry["price_per_hour"].is_number() ||
        entry["price_per_hour"].get<double>() <= 0) {
      return InvalidArgumentError(where + ": needs a \"name\" and a \"price_per_hour\" > 0");
    }
    const std::string name(InstanceTypeBaseName(entry["name"].get<std::string>()));
    std::optional<InstanceType> known = FindKnownInstanceType(name);
    InstanceType type = known ? std::move(*known) : InstanceType{.name = name};
    STEPSCOPE_RETURN_IF_ERROR(ApplyCapacities(entry, known.has_value(), where, type));
    type.price_per_hour = entry["price_per_hour"].get<double>();
    catalog.push_back(std::move(type));
  }
  if (catalog.empty()) return InvalidArgumentError(origin + ": no instances");
  return catalog;
}

const InstanceType* FindInstanceType(const std::vector<InstanceType>& catalog, const std::string& name) {
  const std::string_view wanted = InstanceTypeBaseName(name);
  for (const InstanceType& type : catalog) {
    if (type.name == wanted) return &type;
  }
  return nullptr;
}

}  // namespace stepscope::rules
