#include "record_functions.h"

#include <cstdint>
#include <cstring>

#include "name_cache.h"
#include "recorder/recorder.h"
#include "stepscope/stepscope.h"

namespace stepscope::python {
namespace {

using recorder::Record;
using store::RecordKind;

// Records `kind` for `name` when recording is on; checks the argument either way.
inline PyObject* RecordNamed(const char* function, PyObject* name, RecordKind kind) {
  if (!PyUnicode_Check(name)) return NameTypeError(function, name);
  if (stepscope_enabled_fast()) {
    uint32_t id = ResolveName(name);
    if (id != 0) Record(kind, id, 0, 0);
  }
  Py_RETURN_NONE;
}

PyObject* Begin(PyObject* /*module*/, PyObject* name) {
  return RecordNamed("annotation_begin", name, RecordKind::kBegin);
}
PyObject* End(PyObject* /*module*/, PyObject* name) { return RecordNamed("annotation_end", name, RecordKind::kEnd); }
PyObject* Mark(PyObject* /*module*/, PyObject* name) { return RecordNamed("mark", name, RecordKind::kInstant); }

bool CheckArgCount(const char* function, Py_ssize_t nargs, Py_ssize_t expected) {
  if (nargs == expected) return true;
  PyErr_Format(PyExc_TypeError, "stepscope.%s() takes %zd arguments (%zd given)", function, expected, nargs);
  return false;
}

PyObject* Counter(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgCount("counter", nargs, 2)) return nullptr;
  if (!PyUnicode_Check(args[0])) return NameTypeError("counter", args[0]);
  if (!stepscope_enabled_fast()) Py_RETURN_NONE;
  const double value = PyFloat_AsDouble(args[1]);
  if (value == -1.0 && PyErr_Occurred()) return nullptr;
  uint32_t id = ResolveName(args[0]);
  if (id != 0) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    Record(RecordKind::kCounter, id, 0, bits);
  }
  Py_RETURN_NONE;
}

// Parses (phase: int 0..3, number: int >= -1). False with a Python error set.
bool ParseStepArgs(const char* function, PyObject* const* args, Py_ssize_t nargs, int* phase, int64_t* number) {
  if (!CheckArgCount(function, nargs, 2)) return false;
  const long phase_value = PyLong_AsLong(args[0]);
  if (phase_value == -1 && PyErr_Occurred()) return false;
  if (phase_value < STEPSCOPE_PHASE_TRAIN || phase_value > STEPSCOPE_PHASE_GLOBAL) {
    PyErr_Format(PyExc_ValueError, "stepscope.%s(): phase %ld is not 0 (TRAIN), 1 (EVAL), 2 (PREDICT) or 3 (GLOBAL)",
                 function, phase_value);
    return false;
  }
  const long long number_value = PyLong_AsLongLong(args[1]);
  if (number_value == -1 && PyErr_Occurred()) return false;
  if (number_value < STEPSCOPE_DEFERRED_STEP) {
    PyErr_Format(PyExc_ValueError,
                 "stepscope.%s(): step number %lld is negative; pass -1 for automatic numbering "
                 "(-2 defers phase and number to the step's end)",
                 function, number_value);
    return false;
  }
  *phase = static_cast<int>(phase_value);
  *number = number_value;
  return true;
}

// Returns True when the step began in the recording (so the caller knows to end it).
PyObject* StepBegin(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  int phase;
  int64_t number;
  if (!ParseStepArgs("step_begin", args, nargs, &phase, &number)) return nullptr;
  if (!stepscope_enabled_fast()) Py_RETURN_FALSE;
  stepscope_step_begin(static_cast<stepscope_phase>(phase), number);
  Py_RETURN_TRUE;
}

PyObject* StepEnd(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  int phase;
  int64_t number;
  if (!ParseStepArgs("step_end", args, nargs, &phase, &number)) return nullptr;
  stepscope_step_end(static_cast<stepscope_phase>(phase), number);
  Py_RETURN_NONE;
}

template <typename Function>
PyCFunction AsPyCFunction(Function function) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function));
}

PyMethodDef g_record_functions[] = {
    {"begin", Begin, METH_O,
     "annotation_begin(name): begins a span named `name` (str) on this thread; end it with\n"
     "annotation_end(name) on the same thread. A no-op when not recording."},
    {"end", End, METH_O,
     "annotation_end(name): ends this thread's innermost open span named `name`. A no-op when not recording."},
    {"mark", Mark, METH_O, "mark(name): records an instant event named `name`. A no-op when not recording."},
    {"counter", AsPyCFunction(Counter), METH_FASTCALL,
     "counter(name, value): records the value (anything float() accepts) of the counter `name`.\n"
     "The value is converted only while recording."},
    {"step_begin", AsPyCFunction(StepBegin), METH_FASTCALL,
     "step_begin(phase, number) -> bool: phase 0..3 (TRAIN, EVAL, PREDICT, GLOBAL), number -1 for automatic.\n"
     "True when the step was recorded."},
    {"step_end", AsPyCFunction(StepEnd), METH_FASTCALL, "step_end(phase, number): ends the phase's open step."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool AddRecordFunctions(PyObject* module) { return PyModule_AddFunctions(module, g_record_functions) == 0; }

}  // namespace stepscope::python
