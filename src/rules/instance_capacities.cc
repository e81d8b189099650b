#include "rules/instance_capacities.h"

#include <array>
#include <cstdint>
#include <string>

namespace stepscope::rules {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// Host memory in GiB as the EC2 user guide lists it; accelerator memory per device in MiB as
// EC2's DescribeInstanceTypes reports it (so an A10G is 22888 MiB, not the "24 GB" of its
// marketing name). docs/rules.md names the sources of each family.
struct KnownCapacity {
  std::string_view name;
  std::string_view gpu_model;  // "" for CPU-only types
  int32_t gpus;
  int64_t gpu_memory_mib;      // per accelerator
  int32_t vcpus;
  int64_t memory_gib;
};

constexpr std::array kKnownCapacities = std::to_array<KnownCapacity>({
    {"p3.2xlarge", "V100", 1, 16384, 8, 61},
    {"p3.8xlarge", "V100", 4, 16384, 32, 244},
    {"p3.16xlarge", "V100", 8, 16384, 64, 488},
    {"p3dn.24xlarge", "V100", 8, 32768, 96, 768},
    {"p4d.24xlarge", "A100", 8, 40960, 96, 1152},
    {"p4de.24xlarge", "A100", 8, 81920, 96, 1152},
    {"p5.4xlarge", "H100", 1, 81920, 16, 256},
    {"p5.48xlarge", "H100", 8, 81920, 192, 2048},
    {"p5e.48xlarge", "H200", 8, 144384, 192, 2048},
    {"g4dn.xlarge", "T4", 1, 16384, 4, 16},
    {"g4dn.2xlarge", "T4", 1, 16384, 8, 32},
    {"g4dn.4xlarge", "T4", 1, 16384, 16, 64},
    {"g4dn.8xlarge", "T4", 1, 16384, 32, 128},
    {"g4dn.12xlarge", "T4", 4, 16384, 48, 192},
    {"g4dn.16xlarge", "T4", 1, 16384, 64, 256},
    {"g4dn.metal", "T4", 8, 16384, 96, 384},
    {"g5.xlarge", "A10G", 1, 22888, 4, 16},
    {"g5.2xlarge", "A10G", 1, 22888, 8, 32},
    {"g5.4xlarge", "A10G", 1, 22888, 16, 64},
    {"g5.8xlarge", "A10G", 1, 22888, 32, 128},
    {"g5.12xlarge", "A10G", 4, 22888, 48, 192},
    {"g5.16xlarge", "A10G", 1, 22888, 64, 256},
    {"g5.24xlarge", "A10G", 4, 22888, 96, 384},
    {"g5.48xlarge", "A10G", 8, 22888, 192, 768},
    {"g6.xlarge", "L4", 1, 22888, 4, 16},
    {"g6.2xlarge", "L4", 1, 22888, 8, 32},
    {"g6.4xlarge", "L4", 1, 22888, 16, 64},
    {"g6.8xlarge", "L4", 1, 22888, 32, 128},
    {"g6.12xlarge", "L4", 4, 22888, 48, 192},
    {"g6.16xlarge", "L4", 1, 22888, 64, 256},
    {"g6.24xlarge", "L4", 4, 22888, 96, 384},
    {"g6.48xlarge", "L4", 8, 22888, 192, 768},
    {"g6e.xlarge", "L40S", 1, 45776, 4, 32},
    {"g6e.2xlarge", "L40S", 1, 45776, 8, 64},
    {"g6e.4xlarge", "L40S", 1, 45776, 16, 128},
    {"g6e.8xlarge", "L40S", 1, 45776, 32, 256},
    {"g6e.12xlarge", "L40S", 4, 45776, 48, 384},
    {"g6e.16xlarge", "L40S", 1, 45776, 64, 512},
    {"g6e.24xlarge", "L40S", 4, 45776, 96, 768},
    {"g6e.48xlarge", "L40S", 8, 45776, 192, 1536},
    {"trn1.2xlarge", "Trainium", 1, 32768, 8, 32},
    {"trn1.32xlarge", "Trainium", 16, 32768, 128, 512},
    {"c5.large", "", 0, 0, 2, 4},
    {"c5.xlarge", "", 0, 0, 4, 8},
    {"c5.2xlarge", "", 0, 0, 8, 16},
    {"c5.4xlarge", "", 0, 0, 16, 32},
    {"c5.9xlarge", "", 0, 0, 36, 72},
    {"c5.12xlarge", "", 0, 0, 48, 96},
    {"c5.18xlarge", "", 0, 0, 72, 144},
    {"c5.24xlarge", "", 0, 0, 96, 192},
    {"c5.metal", "", 0, 0, 96, 192},
    {"c6i.large", "", 0, 0, 2, 4},
    {"c6i.xlarge", "", 0, 0, 4, 8},
    {"c6i.2xlarge", "", 0, 0, 8, 16},
    {"c6i.4xlarge", "", 0, 0, 16, 32},
    {"c6i.8xlarge", "", 0, 0, 32, 64},
    {"c6i.12xlarge", "", 0, 0, 48, 96},
    {"c6i.16xlarge", "", 0, 0, 64, 128},
    {"c6i.24xlarge", "", 0, 0, 96, 192},
    {"c6i.32xlarge", "", 0, 0, 128, 256},
    {"c6i.metal", "", 0, 0, 128, 256},
    {"m5.large", "", 0, 0, 2, 8},
    {"m5.xlarge", "", 0, 0, 4, 16},
    {"m5.2xlarge", "", 0, 0, 8, 32},
    {"m5.4xlarge", "", 0, 0, 16, 64},
    {"m5.8xlarge", "", 0, 0, 32, 128},
    {"m5.12xlarge", "", 0, 0, 48, 192},
    {"m5.16xlarge", "", 0, 0, 64, 256},
    {"m5.24xlarge", "", 0, 0, 96, 384},
    {"m5.metal", "", 0, 0, 96, 384},
    {"m6i.large", "", 0, 0, 2, 8},
    {"m6i.xlarge", "", 0, 0, 4, 16},
    {"m6i.2xlarge", "", 0, 0, 8, 32},
    {"m6i.4xlarge", "", 0, 0, 16, 64},
    {"m6i.8xlarge", "", 0, 0, 32, 128},
    {"m6i.12xlarge", "", 0, 0, 48, 192},
    {"m6i.16xlarge", "", 0, 0, 64, 256},
    {"m6i.24xlarge", "", 0, 0, 96, 384},
    {"m6i.32xlarge", "", 0, 0, 128, 512},
    {"m6i.metal", "", 0, 0, 128, 512},
    {"r5.large", "", 0, 0, 2, 16},
    {"r5.xlarge", "", 0, 0, 4, 32},
    {"r5.2xlarge", "", 0, 0, 8, 64},
    {"r5.4xlarge", "", 0, 0, 16, 128},
    {"r5.8xlarge", "", 0, 0, 32, 256},
    {"r5.12xlarge", "", 0, 0, 48, 384},
    {"r5.16xlarge", "", 0, 0, 64, 512},
    {"r5.24xlarge", "", 0, 0, 96, 768},
    {"r5.metal", "", 0, 0, 96, 768},
});

InstanceType Unpriced(const KnownCapacity& known) {
  InstanceType type;
  type.name = std::string(known.name);
  type.gpu_model = std::string(known.gpu_model);
  type.gpus = known.gpus;
  type.gpu_memory_bytes = known.gpu_memory_mib * kMiB;
  type.vcpus = known.vcpus;
  type.memory_bytes = known.memory_gib * kGiB;
  return type;
}

}  // namespace

std::optional<InstanceType> FindKnownInstanceType(std::string_view name) {
  const std::string_view wanted = InstanceTypeBaseName(name);
  for (const KnownCapacity& known : kKnownCapacities) {
    if (known.name == wanted) return Unpriced(known);
  }
  return std::nullopt;
}

std::vector<InstanceType> KnownInstanceTypes() {
  std::vector<InstanceType> types;
  types.reserve(kKnownCapacities.size());
  for (const KnownCapacity& known : kKnownCapacities) types.push_back(Unpriced(known));
  return types;
}

}  // namespace stepscope::rules
