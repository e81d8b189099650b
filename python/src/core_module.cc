// stepscope._core: the native part of the Python package.
//
// Hot record calls (Annotation, begin/end/mark/counter/step_*) are raw CPython for speed
// (annotation_type.h, record_functions.h); the lifecycle calls and the read-back helpers are
// ordinary pybind11, where a Status becomes a Python exception.
#include <pybind11/pybind11.h>

#include <string>

#include "analysis_binding.h"
#include "annotation_type.h"
#include "config_binding.h"
#include "detail_binding.h"
#include "name_cache.h"
#include "record_functions.h"
#include "recorder/recorder.h"
#include "rules_binding.h"
#include "run_reader_binding.h"
#include "stepscope/stepscope.h"

namespace py = pybind11;

namespace stepscope::python {
namespace {

void Start(const std::string& node_dir) {
  recorder::StartOptions options;
  options.node_dir = node_dir;
  Status status;
  {
    py::gil_scoped_release release;
    status = recorder::Start(options);
  }
  if (!status.ok()) throw std::runtime_error(status.message());
}

py::dict Stats() {
  stepscope_stats stats;
  stepscope_get_stats(&stats);
  py::dict out;
  out["events_recorded"] = stats.events_recorded;
  out["events_dropped"] = stats.events_dropped;
  out["bytes_written"] = stats.bytes_written;
  out["blocks_flushed"] = stats.blocks_flushed;
  return out;
}

uint32_t NameId(const py::str& name) { return ResolveName(name.ptr()); }

// Attaches {key: value} arguments to the event this thread recorded last. Values: bool, int,
// float or str (anything else is stored as its str()).
void RecordArgs(const py::dict& args) {
  if (!stepscope_enabled_fast()) return;
  for (auto item : args) {
    uint32_t key = ResolveName(py::str(item.first).ptr());
    if (key == 0) continue;
    py::handle value = item.second;
    if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
      stepscope_arg_int(key, value.cast<int64_t>());
    } else if (py::isinstance<py::float_>(value)) {
      stepscope_arg_double(key, value.cast<double>());
    } else {
      stepscope_arg_string(key, ResolveName(py::str(value).ptr()));
    }
  }
}

}  // namespace
}  // namespace stepscope::python

PYBIND11_MODULE(_core, m) {
  using namespace stepscope::python;
  m.doc() = "Native part of stepscope: the recorder's Python binding. Use the stepscope package instead.";
  if (!InitNameCache() || !AddAnnotationType(m.ptr()) || !AddRecordFunctions(m.ptr())) {
    throw py::error_already_set();
  }
  m.attr("AUTO_STEP") = STEPSCOPE_AUTO_STEP;
  m.attr("DEFERRED_STEP") = STEPSCOPE_DEFERRED_STEP;
  m.def("next_step_number", [](int phase) { return stepscope_next_step_number(static_cast<stepscope_phase>(phase)); },
        py::arg("phase"), "The next automatic step number of phase 0..3 in this process.");

  // Explicit-time calls for instrumentation that learns afterwards that something began.
  m.def("now", &stepscope_now, "The recorder's current timestamp (ticks), for the *_at calls.");
  m.def("step_begin_at", [](int phase, int64_t number, uint64_t ticks) {
    stepscope_step_begin_at(static_cast<stepscope_phase>(phase), number, ticks);
  }, py::arg("phase"), py::arg("number"), py::arg("ticks"));
  m.def("step_end_at", [](int phase, int64_t number, uint64_t ticks) {
    stepscope_step_end_at(static_cast<stepscope_phase>(phase), number, ticks);
  }, py::arg("phase"), py::arg("number"), py::arg("ticks"));
  m.def("mark_at", [](const py::str& name, uint64_t ticks) { stepscope_instant_at(NameId(name), ticks); },
        py::arg("name"), py::arg("ticks"));
  m.def("args", &RecordArgs, py::arg("args"),
        "Attaches {key: bool|int|float|str} arguments to the event this thread recorded last.");

  m.def("start", &Start, py::arg("node_dir"),
        "Starts recording into node_dir (<root>/<job>/<node>, created if needed). A no-op when already "
        "recording. Raises RuntimeError saying why when it cannot.");
  m.def("stop", &stepscope_stop, py::call_guard<py::gil_scoped_release>(),
        "Flushes and stops recording in this process for good.");
  m.def("flush", &stepscope_flush, py::call_guard<py::gil_scoped_release>(),
        "Compresses what was recorded so far into the stream's log.");
  m.def("is_enabled", [] { return stepscope_enabled_fast() != 0; }, "True while this process records.");
  m.def("stats", &Stats, "This process's recorder statistics as a dict.");
  m.def("_set_decorator", [](py::object helper) { SetAnnotationDecorator(helper.ptr()); }, py::arg("helper"),
        "Registers helper(name_or_None, func) -> wrapper, used by Annotation as a decorator.");
  BindRunReader(m);
  BindAnalysis(m);
  BindRules(m);
  BindDetail(m);
  BindConfig(m);
}
