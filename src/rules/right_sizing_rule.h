// RightSizing (RULES.md §native): from the job's utilization percentiles and an instance
// catalogue, the cheapest instance type and count that would still fit the work, with the cost
// saving. Declared here (not only through its factory) so the CLI can hand it a user catalogue.
#pragma once

#include <memory>
#include <vector>

#include "rules/instance_catalog.h"
#include "rules/rule.h"

namespace stepscope::rules {

// Replaces the catalogue of a rule made by MakeRightSizingRule(); does nothing to other rules.
void SetRightSizingCatalog(Rule& rule, std::vector<InstanceType> catalog);

}  // namespace stepscope::rules
