// stepscope._core's view of the analysis core for notebooks and custom rules: load_run(path)
// gives a Model (src/analysis/model.h) whose series come back as numpy arrays without copying
// and whose framework events come back as dicts. stepscope/analysis/ builds the reader API on it.
#pragma once

#include <pybind11/pybind11.h>

namespace stepscope::python {

void BindAnalysis(pybind11::module_& module);

}  // namespace stepscope::python
