// The one mapping from a C++ Status to a Python exception (STYLE.md §3: the pybind11 layer maps
// Status to Python exceptions), so every binding raises the same type for the same failure.
#pragma once

#include <pybind11/pybind11.h>

#include "base/status.h"

namespace stepscope::python {

// kNotFound -> FileNotFoundError; kInvalidArgument and kDataLoss (bad or corrupt bytes) ->
// ValueError; kIoError -> OSError; kUnimplemented -> NotImplementedError; kUnavailable and
// kInternal -> RuntimeError. The message is the Status's one line.
PyObject* ExceptionTypeFor(StatusCode code);

// Sets the Python error for `status` (not ok) and throws py::error_already_set.
[[noreturn]] void ThrowStatus(const Status& status);

}  // namespace stepscope::python
