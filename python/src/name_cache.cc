#include "name_cache.h"

#include "stepscope/stepscope.h"

namespace stepscope::python {
namespace {

// Names built on the fly (f"batch{i}") would grow the cache without bound; past this size new
// names are interned on every call instead (the recorder still deduplicates them).
constexpr Py_ssize_t kMaxCachedNames = 65536;

PyObject* g_name_ids = nullptr;  // dict: str -> int id; lives as long as the process

uint32_t InternSlow(PyObject* name) {
  Py_ssize_t length = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &length);
  if (utf8 != nullptr) return stepscope_intern(utf8, static_cast<size_t>(length));
  // Lone surrogates cannot be UTF-8; record an escaped spelling rather than raise into the job.
  PyErr_Clear();
  PyObject* bytes = PyUnicode_AsEncodedString(name, "utf-8", "backslashreplace");
  if (bytes == nullptr) {
    PyErr_Clear();
    return 0;
  }
  uint32_t id = stepscope_intern(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
  Py_DECREF(bytes);
  return id;
}

}  // namespace

bool InitNameCache() {
  if (g_name_ids == nullptr) g_name_ids = PyDict_New();
  return g_name_ids != nullptr;
}

uint32_t ResolveName(PyObject* name) {
  if (!stepscope_enabled_fast()) return 0;
  PyObject* cached = PyDict_GetItemWithError(g_name_ids, name);  // borrowed
  if (cached != nullptr) return static_cast<uint32_t>(PyLong_AsUnsignedLong(cached));
  if (PyErr_Occurred()) {  // a str subclass with a failing __hash__ or __eq__
    PyErr_Clear();
    return 0;
  }
  uint32_t id = InternSlow(name);
  if (id == 0 || PyDict_GET_SIZE(g_name_ids) >= kMaxCachedNames) return id;
  PyObject* value = PyLong_FromUnsignedLong(id);
  if (value == nullptr || PyDict_SetItem(g_name_ids, name, value) != 0) PyErr_Clear();
  Py_XDECREF(value);
  return id;
}

PyObject* NameTypeError(const char* function, PyObject* got) {
  PyErr_Format(PyExc_TypeError, "stepscope.%s() needs a str name, got %.100s", function, Py_TYPE(got)->tp_name);
  return nullptr;
}

}  // namespace stepscope::python
