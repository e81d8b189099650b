#include "annotation_type.h"

#include <structmember.h>

#include <cstddef>
#include <cstdint>

#include "name_cache.h"
#include "recorder/recorder.h"

// How `with` reaches enter and exit cheaply
//
// Python 3.11's BEFORE_WITH binds __enter__ and __exit__ through their descriptors; for
// ordinary C methods that allocates two GC-tracked bound-method objects per `with`, which
// costs as much as everything else together. Here __enter__ and __exit__ are AnnotationMethod
// descriptors whose __get__ on an instance returns the annotation itself, and the
// annotation's own vectorcall tells the calls apart by their argument count:
//
//   with annotate("x"):    BEFORE_WITH: enter = annotation, exit = annotation
//       ...                annotation()            -> Enter     (0 arguments)
//                          annotation(t, v, tb)    -> Exit      (3 arguments)
//   @annotate("x")         annotation(func)        -> decorator (1 argument)
//
// Looked up on the class (contextlib.ExitStack calls type(cm).__enter__(cm)) they behave as
// ordinary unbound methods. The price: `annotation()` written by hand also begins a span.

namespace stepscope::python {
namespace {

using recorder::Record;
using store::RecordKind;

struct AnnotationObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;  // AnnotationVectorcall (tp_vectorcall_offset points here)
  PyObject* name;             // str, owned
  uint32_t name_id;           // resolved at the first enter that finds recording on
  uint32_t open_spans;        // begins recorded by this object and not yet ended
};

enum class MethodRole { kEnter, kExit };

struct AnnotationMethodObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;  // AnnotationMethodVectorcall
  MethodRole role;
};

PyObject* g_decorator = nullptr;  // helper(name_or_None, func) -> wrapper; owned

extern PyTypeObject g_annotation_type;
extern PyTypeObject g_annotation_method_type;

AnnotationObject* AsAnnotation(PyObject* object) { return reinterpret_cast<AnnotationObject*>(object); }

PyObject* Enter(PyObject* self_object) {
  AnnotationObject* self = AsAnnotation(self_object);
  if (stepscope_enabled_fast()) {
    if (self->name_id == 0) self->name_id = ResolveName(self->name);
    if (self->name_id != 0) {
      Record(RecordKind::kBegin, self->name_id, 0, 0);
      self->open_spans++;
    }
  }
  Py_INCREF(self_object);
  return self_object;
}

// Ends only spans this object began, so a block entered before recording started never leaves
// an unmatched end in the run.
PyObject* Exit(PyObject* self_object) {
  AnnotationObject* self = AsAnnotation(self_object);
  if (self->open_spans != 0) {
    self->open_spans--;
    Record(RecordKind::kEnd, self->name_id, 0, 0);
  }
  Py_RETURN_FALSE;  // never swallow the exception that left the block
}

PyObject* Decorate(PyObject* name, PyObject* func) {
  if (g_decorator == nullptr) {
    PyErr_SetString(PyExc_TypeError, "stepscope._core.Annotation cannot decorate; use stepscope.annotate");
    return nullptr;
  }
  PyObject* args[2] = {name, func};
  return PyObject_Vectorcall(g_decorator, args, 2, nullptr);
}

PyObject* AnnotationVectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (kwnames == nullptr) {
    if (nargs == 0) return Enter(self);
    if (nargs == 3) return Exit(self);
    if (nargs == 1 && PyCallable_Check(args[0])) return Decorate(AsAnnotation(self)->name, args[0]);
  }
  PyErr_SetString(PyExc_TypeError, "stepscope.annotate(name) decorates one function: @stepscope.annotate(\"name\")");
  return nullptr;
}

PyObject* NewAnnotation(PyObject* name) {
  AnnotationObject* self = PyObject_New(AnnotationObject, &g_annotation_type);
  if (self == nullptr) return nullptr;
  Py_INCREF(name);
  self->vectorcall = AnnotationVectorcall;
  self->name = name;
  self->name_id = 0;
  self->open_spans = 0;
  return reinterpret_cast<PyObject*>(self);
}

// annotate("name") -> Annotation; annotate(func) (bare decorator) -> wrapped func.
PyObject* FromArgument(PyObject* argument) {
  if (PyUnicode_Check(argument)) return NewAnnotation(argument);
  if (PyCallable_Check(argument)) return Decorate(Py_None, argument);
  return NameTypeError("annotate", argument);
}

// Calling the type: the common case (one positional str) goes straight to NewAnnotation.
PyObject* AnnotationTypeVectorcall(PyObject* /*type*/, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (kwnames == nullptr && nargs == 1) {
    if (PyUnicode_Check(args[0])) return NewAnnotation(args[0]);
    return FromArgument(args[0]);
  }
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (nargs == 0 && nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "name") == 0) {
    return FromArgument(args[0]);
  }
  PyErr_Format(PyExc_TypeError, "stepscope.annotate() takes one argument, a name or a function (%zd given)",
               nargs + nkw);
  return nullptr;
}

PyObject* AnnotationNew(PyTypeObject* /*type*/, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"name", nullptr};
  PyObject* argument = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:annotate", const_cast<char**>(keywords), &argument)) {
    return nullptr;
  }
  return FromArgument(argument);
}

void AnnotationDealloc(PyObject* self) {
  Py_DECREF(AsAnnotation(self)->name);
  Py_TYPE(self)->tp_free(self);
}

PyObject* AnnotationRepr(PyObject* self) {
  return PyUnicode_FromFormat("stepscope.annotate(%R)", AsAnnotation(self)->name);
}

MethodRole RoleOf(PyObject* method) { return reinterpret_cast<AnnotationMethodObject*>(method)->role; }
const char* NameOf(MethodRole role) { return role == MethodRole::kEnter ? "__enter__" : "__exit__"; }

// An AnnotationMethod looked up on an instance is the instance (see the top of the file).
PyObject* AnnotationMethodGet(PyObject* method, PyObject* instance, PyObject* /*type*/) {
  PyObject* result = instance == nullptr || instance == Py_None ? method : instance;
  Py_INCREF(result);
  return result;
}

// The unbound call: Annotation.__enter__(annotation), Annotation.__exit__(annotation, t, v, tb).
PyObject* AnnotationMethodVectorcall(PyObject* method, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const MethodRole role = RoleOf(method);
  const Py_ssize_t expected = role == MethodRole::kEnter ? 1 : 4;
  if (kwnames != nullptr || nargs != expected || !Py_IS_TYPE(args[0], &g_annotation_type)) {
    PyErr_Format(PyExc_TypeError, "Annotation.%s takes an Annotation%s", NameOf(role),
                 role == MethodRole::kEnter ? "" : " and (exc_type, exc_value, traceback)");
    return nullptr;
  }
  return role == MethodRole::kEnter ? Enter(args[0]) : Exit(args[0]);
}

PyObject* AnnotationMethodName(PyObject* method, void* /*closure*/) {
  return PyUnicode_FromString(NameOf(RoleOf(method)));
}

PyObject* AnnotationMethodDoc(PyObject* method, void* /*closure*/) {
  return PyUnicode_FromString(RoleOf(method) == MethodRole::kEnter
                                  ? "Begins the span (when recording) and returns the annotation."
                                  : "Ends the span begun by __enter__; returns False, so exceptions propagate.");
}

PyObject* AnnotationMethodRepr(PyObject* method) {
  return PyUnicode_FromFormat("<method '%s' of 'stepscope._core.Annotation' objects>", NameOf(RoleOf(method)));
}

PyMemberDef g_annotation_members[] = {
    {"name", T_OBJECT_EX, offsetof(AnnotationObject, name), READONLY, "The span's name."},
    {nullptr, 0, 0, 0, nullptr},
};

PyGetSetDef g_annotation_method_getset[] = {
    {"__name__", AnnotationMethodName, nullptr, nullptr, nullptr},
    {"__doc__", AnnotationMethodDoc, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// CPython's static type objects are meant to be partly initialised; every slot not named is
// null, which PyType_Ready fills in or inherits.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
PyTypeObject g_annotation_type = {
    .ob_base = PyVarObject_HEAD_INIT(nullptr, 0)
    .tp_name = "stepscope._core.Annotation",
    .tp_basicsize = sizeof(AnnotationObject),
    .tp_dealloc = AnnotationDealloc,
    .tp_vectorcall_offset = offsetof(AnnotationObject, vectorcall),
    .tp_repr = AnnotationRepr,
    .tp_call = PyVectorcall_Call,
    // Final: a subclass would lose the vectorcall fast paths.
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = PyDoc_STR(
        "annotate(name) -> a span named `name` (str) around a with-block, or a decorator.\n\n"
        "    with stepscope.annotate(\"augment\"): ...\n"
        "    @stepscope.annotate(\"load\")   # one span per call\n"
        "    @stepscope.annotate           # named after the function's __qualname__\n\n"
        "Costs one flag read when not recording. Raises TypeError for a name that is not a str."),
    .tp_members = g_annotation_members,
    .tp_new = AnnotationNew,
    .tp_vectorcall = AnnotationTypeVectorcall,
};

PyTypeObject g_annotation_method_type = {
    .ob_base = PyVarObject_HEAD_INIT(nullptr, 0)
    .tp_name = "stepscope._core.AnnotationMethod",
    .tp_basicsize = sizeof(AnnotationMethodObject),
    .tp_vectorcall_offset = offsetof(AnnotationMethodObject, vectorcall),
    .tp_repr = AnnotationMethodRepr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_getset = g_annotation_method_getset,
    .tp_descr_get = AnnotationMethodGet,
};
#pragma GCC diagnostic pop

// Puts an AnnotationMethod for `role` into the Annotation type's dict as `name`.
bool AddMethod(const char* name, MethodRole role) {
  AnnotationMethodObject* method = PyObject_New(AnnotationMethodObject, &g_annotation_method_type);
  if (method == nullptr) return false;
  method->vectorcall = AnnotationMethodVectorcall;
  method->role = role;
  const int status = PyDict_SetItemString(g_annotation_type.tp_dict, name, reinterpret_cast<PyObject*>(method));
  Py_DECREF(method);
  return status == 0;
}

}  // namespace

bool AddAnnotationType(PyObject* module) {
  if (PyType_Ready(&g_annotation_method_type) < 0 || PyType_Ready(&g_annotation_type) < 0) return false;
  if (!AddMethod("__enter__", MethodRole::kEnter) || !AddMethod("__exit__", MethodRole::kExit)) return false;
  PyType_Modified(&g_annotation_type);
  Py_INCREF(&g_annotation_type);
  if (PyModule_AddObject(module, "Annotation", reinterpret_cast<PyObject*>(&g_annotation_type)) < 0) {
    Py_DECREF(&g_annotation_type);
    return false;
  }
  return true;
}

void SetAnnotationDecorator(PyObject* helper) {
  PyObject* new_helper = helper == Py_None ? nullptr : helper;
  Py_XINCREF(new_helper);
  Py_XSETREF(g_decorator, new_helper);
}

}  // namespace stepscope::python
