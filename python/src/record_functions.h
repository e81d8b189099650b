// The module-level record calls of stepscope._core: begin, end, mark, counter, step_begin,
// step_end. Raw CPython (METH_O / METH_FASTCALL) for the same reason as annotation_type.h:
// pybind11's argument conversion would cost more than the recording itself.
//
// Contract: a wrong argument type is the caller's bug and raises TypeError/ValueError (checked
// whether or not recording is on, except counter's value, which is converted only while
// recording so that e.g. a GPU tensor is not synchronised for nothing); a recording failure
// never raises (the recorder counts drops instead). Threading: called with the GIL held.
#pragma once

#include <Python.h>

namespace stepscope::python {

// Adds the functions to `module`. False with a Python error set on failure.
bool AddRecordFunctions(PyObject* module);

}  // namespace stepscope::python
