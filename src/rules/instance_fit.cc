#include "rules/instance_fit.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace stepscope::rules {
namespace {

// SmallestFit's order: accelerators in all (they dominate the price), then instances (one
// machine rather than three small ones a job would have to be split across), then vCPUs and
// host memory in all.
std::tuple<int64_t, int64_t, int64_t, int64_t> FleetSize(const InstanceFit& fit) {
  return {fit.count * fit.type->gpus, fit.count, fit.count * fit.type->vcpus, fit.count * fit.type->memory_bytes};
}

// The best fit of `gpu_model` among `candidates` (priced ones only, or all) by `better(new, best)`.
template <typename Better>
InstanceFit BestFit(const std::vector<InstanceType>& candidates, const std::string& gpu_model, const InstanceNeed& need,
                    bool priced_only, Better better) {
  InstanceFit best;
  for (const InstanceType& type : candidates) {
    if (priced_only && type.price_per_hour <= 0) continue;
    if (type.gpu_model != gpu_model) continue;  // another GPU changes speed, which utilization cannot predict
    const InstanceFit fit{&type, InstancesToFit(type, need)};
    if (fit.count > 0 && (best.type == nullptr || better(fit, best))) best = fit;
  }
  return best;
}

}  // namespace

int64_t InstancesToFit(const InstanceType& type, const InstanceNeed& need) {
  if (need.gpus > 0 && (type.gpus == 0 || type.gpu_memory_bytes < need.gpu_memory_bytes)) return 0;
  int64_t count = 1;
  if (need.gpus > 0) count = std::max<int64_t>(count, (need.gpus + type.gpus - 1) / type.gpus);
  if (type.vcpus > 0) count = std::max<int64_t>(count, (need.vcpus + type.vcpus - 1) / type.vcpus);
  if (type.memory_bytes > 0) {
    // 1e-9: a need of exactly N instances' memory stays N despite rounding.
    count = std::max<int64_t>(
        count, static_cast<int64_t>(std::ceil(need.host_memory_bytes / static_cast<double>(type.memory_bytes) - 1e-9)));
  }
  return count;
}

InstanceFit CheapestFit(const std::vector<InstanceType>& candidates, const std::string& gpu_model,
                        const InstanceNeed& need) {
  return BestFit(candidates, gpu_model, need, /*priced_only=*/true, [](const InstanceFit& fit, const InstanceFit& best) {
    const double price = static_cast<double>(fit.count) * fit.type->price_per_hour;
    const double best_price = static_cast<double>(best.count) * best.type->price_per_hour;
    return price < best_price - 1e-9 || (std::abs(price - best_price) <= 1e-9 && fit.count < best.count);
  });
}

InstanceFit SmallestFit(const std::vector<InstanceType>& candidates, const std::string& gpu_model,
                        const InstanceNeed& need) {
  return BestFit(candidates, gpu_model, need, /*priced_only=*/false, IsSmallerFleet);
}

bool IsSmallerFleet(const InstanceFit& a, const InstanceFit& b) { return FleetSize(a) < FleetSize(b); }

}  // namespace stepscope::rules
