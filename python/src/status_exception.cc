#include "status_exception.h"

namespace stepscope::python {

PyObject* ExceptionTypeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kNotFound: return PyExc_FileNotFoundError;
    case StatusCode::kInvalidArgument:
    case StatusCode::kDataLoss: return PyExc_ValueError;
    case StatusCode::kIoError: return PyExc_OSError;
    case StatusCode::kUnimplemented: return PyExc_NotImplementedError;
    case StatusCode::kOk:
    case StatusCode::kUnavailable:
    case StatusCode::kInternal: break;
  }
  return PyExc_RuntimeError;
}

void ThrowStatus(const Status& status) {
  PyErr_SetString(ExceptionTypeFor(status.code()), status.message().c_str());
  throw pybind11::error_already_set();
}

}  // namespace stepscope::python
