// Which instances fit a job's need: RightSizing's choice among catalogue types, by price when the
// catalogue prices them and by capacity when it does not (a known type with no price, which can
// still be recommended, with a word on where its saving would come from).
//
// Callers: right_sizing_rule.cc. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rules/instance_catalog.h"

namespace stepscope::rules {

// What the whole job needs, at RightSizing's utilization target.
struct InstanceNeed {
  int64_t gpus = 0;               // accelerators in all; 0 when the job has no GPU data
  double gpu_memory_bytes = 0;    // per accelerator: the most any one used
  int64_t vcpus = 1;              // in all
  double host_memory_bytes = 0;   // in all
};

struct InstanceFit {
  const InstanceType* type = nullptr;  // into the candidates given; nullptr when none fits
  int64_t count = 0;
};

// The fewest instances of `type` that meet `need`; 0 when no number does (GPUs needed and it has
// none, or its GPUs hold less than the job used).
int64_t InstancesToFit(const InstanceType& type, const InstanceNeed& need);

// The cheapest per hour among the priced `candidates` with `gpu_model`; fewer instances on a tie.
InstanceFit CheapestFit(const std::vector<InstanceType>& candidates, const std::string& gpu_model,
                        const InstanceNeed& need);

// The smallest among `candidates` with `gpu_model`, priced or not: fewest accelerators in all,
// then fewest instances, then fewest vCPUs, then least host memory.
InstanceFit SmallestFit(const std::vector<InstanceType>& candidates, const std::string& gpu_model,
                        const InstanceNeed& need);

// Whether `a` is smaller than `b` in SmallestFit's order.
bool IsSmallerFleet(const InstanceFit& a, const InstanceFit& b);

}  // namespace stepscope::rules
