// Maps Python str names to recorder name ids for the hot record calls.
//
// stepscope_intern hashes and locks; a dict lookup keyed by the str object is cheaper (the
// str caches its hash, and a literal is usually the very same object each call). Ids are
// only cached while recording is on, because stepscope_intern returns 0 when it is off. Ids
// stay valid for the life of the process and in fork children (the recorder re-emits its name
// table into a child's stream), and the recorder never restarts, so entries never go stale.
//
// Threading: callers hold the GIL, which serialises the dict.
#pragma once

#include <Python.h>

#include <cstdint>

namespace stepscope::python {

// Creates the cache. Returns false with a Python error set on failure (module init only).
bool InitNameCache();

// The id for `name` (a str), interning it on first use. 0 when recording is off or the name
// could not be interned; never leaves a Python error set.
uint32_t ResolveName(PyObject* name);

// Sets a TypeError saying that `function` needs a str name, and returns nullptr.
PyObject* NameTypeError(const char* function, PyObject* got);

}  // namespace stepscope::python
