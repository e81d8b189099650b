// stepscope._core.run_rules: the ProfilerReport driver (src/rules/profiler_report.h) with the
// built-in rules and user rules written in Python (stepscope.analysis.Rule), so a custom rule runs
// in the same driver, on the same windows, and lands in the same outputs as a built-in one.
#pragma once

#include <pybind11/pybind11.h>

namespace stepscope::python {

void BindRules(pybind11::module_& module);

}  // namespace stepscope::python
