// stepscope._core's side of the run configuration (stepscope._config): the launcher's one
// configuration model (src/launcher/run_config.h, job_run_config.h) and its detail-window
// normalisation, so a job's Python process resolves and validates settings exactly as
// `stepscope run` does. Documents cross as JSON text; errors are ValueError with the launcher's
// one-line message (status_exception.h).
#pragma once

#include <pybind11/pybind11.h>

namespace stepscope::python {

void BindConfig(pybind11::module_& module);

}  // namespace stepscope::python
