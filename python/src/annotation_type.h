// stepscope._core.Annotation: the object behind `with stepscope.annotate("name"):`.
//
// Written against the raw CPython API, not pybind11, because its whole cost is the bar
// (SPEC §6: <= 0.5 us per enter+exit, >= 5x cheaper than torch's record_function): creating
// it is a type vectorcall, and `with` reaches __enter__/__exit__ without building bound-method
// objects or argument tuples (how: see the top of annotation_type.cc). While recording is off,
// enter and exit only read one flag.
//
// The same type is the decorator: `annotate("name")(func)` and the bare `annotate(func)` hand
// the function to a Python helper (registered by the package with SetAnnotationDecorator)
// that wraps it with functools.wraps.
//
// Threading: every entry point runs with the GIL held.
#pragma once

#include <Python.h>

namespace stepscope::python {

// Readies the type and adds it to `module` as "Annotation". False with a Python error set on
// failure.
bool AddAnnotationType(PyObject* module);

// Sets the helper called as helper(name_or_None, func) -> wrapper for decorator use. Borrows
// `helper` (keeps its own reference); None unsets it.
void SetAnnotationDecorator(PyObject* helper);

}  // namespace stepscope::python
