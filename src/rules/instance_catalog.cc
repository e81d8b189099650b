#include "rules/instance_catalog.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace stepscope::rules {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

std::string WithoutMlPrefix(const std::string& name) { return name.rfind("ml.", 0) == 0 ? name.substr(3) : name; }

}  // namespace

std::vector<InstanceType> BuiltinInstanceCatalog() {
  return {
      {"p3.2xlarge", "V100", 1, 16 * kGiB, 8, 61 * kGiB, 3.825},
      {"p3.8xlarge", "V100", 4, 16 * kGiB, 32, 244 * kGiB, 14.688},
      {"p3.16xlarge", "V100", 8, 16 * kGiB, 64, 488 * kGiB, 28.152},
      {"g4dn.xlarge", "T4", 1, 16 * kGiB, 4, 16 * kGiB, 0.736},
      {"g4dn.12xlarge", "T4", 4, 16 * kGiB, 48, 192 * kGiB, 4.89},
      {"g5.xlarge", "A10G", 1, 24 * kGiB, 4, 16 * kGiB, 1.408},
      {"g5.12xlarge", "A10G", 4, 24 * kGiB, 48, 192 * kGiB, 7.09},
      {"p4d.24xlarge", "A100", 8, 40 * kGiB, 96, 1152 * kGiB, 37.688},
      {"c5.2xlarge", "", 0, 0, 8, 16 * kGiB, 0.408},
      {"c5.9xlarge", "", 0, 0, 36, 72 * kGiB, 1.836},
  };
}

StatusOr<std::vector<InstanceType>> LoadInstanceCatalog(const std::string& path) {
  std::ifstream file(path);
  if (!file) return NotFoundError("instance catalogue " + path + ": cannot be read; check the path");
  std::stringstream text;
  text << file.rdbuf();
  const nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  return InstanceCatalogFromJson(json, "instance catalogue " + path);
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
    auto number = [&](const char* key) {
      auto it = entry.find(key);
      return it != entry.end() && it->is_number() ? it->get<double>() : 0.0;
    };
    InstanceType type;
    type.name = WithoutMlPrefix(entry["name"].get<std::string>());
    if (auto it = entry.find("gpu_model"); it != entry.end() && it->is_string()) type.gpu_model = it->get<std::string>();
    type.gpus = static_cast<int32_t>(number("gpus"));
    type.gpu_memory_bytes = static_cast<int64_t>(number("gpu_memory_gib") * kGiB);
    type.vcpus = static_cast<int32_t>(number("vcpus"));
    type.memory_bytes = static_cast<int64_t>(number("memory_gib") * kGiB);
    type.price_per_hour = entry["price_per_hour"].get<double>();
    if (type.gpus < 0 || type.vcpus < 0) return InvalidArgumentError(where + ": gpus and vcpus must be >= 0");
    catalog.push_back(std::move(type));
  }
  if (catalog.empty()) return InvalidArgumentError(origin + ": no instances");
  return catalog;
}

const InstanceType* FindInstanceType(const std::vector<InstanceType>& catalog, const std::string& name) {
  const std::string wanted = WithoutMlPrefix(name);
  for (const InstanceType& type : catalog) {
    if (type.name == wanted) return &type;
  }
  return nullptr;
}

}  // namespace stepscope::rules
