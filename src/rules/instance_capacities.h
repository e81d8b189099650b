// The capacities of the common AWS training instance families (p3, p3dn, p4d, p4de, p5, p5e,
// g4dn, g5, g6, g6e, trn1, c5, c6i, m5, m6i, r5; every size AWS lists): vCPUs, host memory,
// accelerator count, model and memory. Public facts, never prices: a price comes only from a
// user catalogue or the dated built-in example (instance_catalog.h). Sources are in
// docs/rules.md ("RightSizing's catalogue").
//
// Trainium (trn1) chips count as accelerators in `gpus` with gpu_model "Trainium", so RightSizing
// keeps a Trainium job on Trainium; stepscope records no Trainium utilization today (no NVML),
// so such a run has no accelerator need and is sized by its CPU and memory alone.
//
// Callers: instance_catalog.cc (fills a user entry's capacities), RightSizing (the run's own
// type when it has no price). Pure functions over a constant table; thread-safe.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "rules/instance_catalog.h"

namespace stepscope::rules {

// The known type `name` ("ml.g5.2xlarge" or "g5.2xlarge"), unpriced; nullopt when not listed.
std::optional<InstanceType> FindKnownInstanceType(std::string_view name);

// Every known type, unpriced, in the table's order (family by family, small to large).
std::vector<InstanceType> KnownInstanceTypes();

}  // namespace stepscope::rules
