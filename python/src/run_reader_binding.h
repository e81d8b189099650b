// Read-back helpers of stepscope._core for tests and notebooks: read_run(path) turns a run (or
// node) directory into plain dicts and lists via analysis::ReadRecordedRun
// (analysis/recorded_run.h); compact(path) folds the rings of finished processes into their logs
// (store::CompactStream).
//
// Both release the GIL while touching files. Errors become Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

namespace stepscope::python {

void BindRunReader(pybind11::module_& module);

}  // namespace stepscope::python
