#include "analysis_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "analysis/model.h"
#include "analysis/run_loader.h"
#include "status_exception.h"

namespace py = pybind11;

namespace stepscope::python {
namespace {

using analysis::Model;


std::shared_ptr<Model> LoadRun(const std::string& path) {
  StatusOr<Model> model = [&] {
    py::gil_scoped_release release;
    return analysis::LoadRun(path);
  }();
  if (!model.ok()) ThrowStatus(model.status());
  return std::make_shared<Model>(std::move(model).value());
}

py::object ArgValue(const Model& model, const analysis::EventArg& arg) {
  switch (arg.type) {
    case analysis::EventArg::Type::kInt: return py::int_(arg.int_value);
    case analysis::EventArg::Type::kDouble: return py::float_(arg.double_value);
    case analysis::EventArg::Type::kString: return py::str(std::string(model.String(arg.string_value)));
    case analysis::EventArg::Type::kBool: return py::bool_(arg.int_value != 0);
  }
  return py::none();
}

py::dict EventDict(const Model& model, const analysis::FrameworkEvent& event) {
  static const char* const kKinds[] = {"span", "instant", "counter"};
  py::dict out;
  out["phase"] = std::string(model.String(event.phase));
  out["name"] = std::string(model.String(event.name));
  out["category"] = std::string(model.String(event.category));
  out["kind"] = kKinds[static_cast<int>(event.kind)];
  out["node"] = event.node < model.nodes().size() ? model.nodes()[event.node].name : std::string();
  out["pid"] = event.pid;
  out["tid"] = event.tid;
  out["device"] = event.device;
  out["start_ns"] = event.start_ns;
  out["end_ns"] = event.end_ns;
  out["step"] = event.step;
  out["unfinished"] = event.unfinished;
  py::dict args;
  for (const analysis::EventArg& arg : model.Args(event)) {
    args[py::str(std::string(model.String(arg.key)))] = ArgValue(model, arg);
  }
  out["args"] = std::move(args);
  return out;
}

// A read-only numpy copy of `values`: a copy, since Model.refresh() may move the vectors.
template <typename Values>
auto ReadOnlyCopy(const Values& values) {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(values.data())>>;
  py::array_t<T> array(static_cast<py::ssize_t>(values.size()), values.data());
  py::detail::array_proxy(array.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return array;
}

}  // namespace

void BindAnalysis(py::module_& module) {
  py::class_<Model, std::shared_ptr<Model>>(module, "Model",
                                                  "A run loaded into the analysis model (src/analysis/model.h).")
      .def_property_readonly("source", [](const Model& m) { return analysis::ModelSourceName(m.source()); })
      .def_property_readonly("first_ns", &Model::first_ns)
      .def_property_readonly("last_ns", &Model::last_ns)
      .def_property_readonly("complete_until_ns", &Model::complete_until_ns)
      .def_property_readonly("problems",
                             [](const Model& m) {
                               py::list problems;
                               for (const analysis::Problem& problem : m.problems()) {
                                 py::dict entry;
                                 entry["name"] = problem.name;
                                 entry["severity"] = analysis::ProblemSeverityName(problem.severity);
                                 entry["count"] = problem.count;
                                 entry["sentence"] = problem.sentence;
                                 problems.append(std::move(entry));
                               }
                               return problems;
                             })
      .def_property_readonly("nodes",
                             [](const Model& m) {
                               py::list nodes;
                               for (const analysis::NodeFacts& facts : m.nodes()) {
                                 py::dict node;
                                 node["name"] = facts.name;
                                 node["instance_type"] = facts.instance_type;
                                 node["instance_count"] = facts.instance_count;
                                 node["cpu_cores"] = facts.cpu_cores;
                                 node["gpu_count"] = facts.gpu_count;
                                 node["gpu_memory_bytes"] = facts.gpu_memory_bytes;
                                 nodes.append(std::move(node));
                               }
                               return nodes;
                             })
      .def_property_readonly("processes",
                             [](const Model& m) {
                               py::list processes;
                               for (const analysis::ProcessFacts& facts : m.processes()) {
                                 py::dict process;
                                 process["node"] = facts.node < m.nodes().size() ? m.nodes()[facts.node].name
                                                                                 : std::string();
                                 process["pid"] = facts.pid;
                                 process["parent_pid"] = facts.parent_pid;
                                 process["rank"] = facts.rank;
                                 process["local_rank"] = facts.local_rank;
                                 process["world_size"] = facts.world_size;
                                 process["group_rank"] = facts.group_rank;
                                 processes.append(std::move(process));
                               }
                               return processes;
                             },
                             "[{node, pid, parent_pid, rank, local_rank, world_size, group_rank}]: -1 where "
                             "unknown (torchrun's RANK, LOCAL_RANK, WORLD_SIZE, GROUP_RANK).")
      .def("series",
           [](const Model& m) {
             py::list series;
             for (size_t i = 0; i < m.series().size(); ++i) {
               const analysis::SystemSeries& s = m.series()[i];
               py::dict entry;
               entry["index"] = i;
               entry["node"] = s.node < m.nodes().size() ? m.nodes()[s.node].name : std::string();
               entry["type"] = std::string(m.String(s.type));
               entry["name"] = std::string(m.String(s.name));
               entry["dimension"] = std::string(m.String(s.dimension));
               entry["samples"] = s.time_ns.size();
               series.append(std::move(entry));
             }
             return series;
           },
           "The system series: [{index, node, type, name, dimension, samples}] (SageMaker's keys).")
      .def("series_values",
           [](const std::shared_ptr<Model>& m, size_t index) {
             if (index >= m->series().size()) throw py::index_error("no series " + std::to_string(index));
             const analysis::SystemSeries& s = m->series()[index];
             return py::make_tuple(ReadOnlyCopy(s.time_ns), ReadOnlyCopy(s.value));
           },
           py::arg("index"), "(times in Unix ns, values) of one series as read-only numpy arrays.")
      .def("events",
           [](const Model& m, int64_t start_ns, int64_t end_ns, py::object phase) {
             // Events overlapping [start_ns, end_ns], as SageMaker's readers return them.
             py::list events;
             const bool any_phase = phase.is_none();
             const std::string wanted = any_phase ? std::string() : phase.cast<std::string>();
             for (uint32_t index : m.EventsOverlapping(start_ns, end_ns)) {
               const analysis::FrameworkEvent& event = m.events()[index];
               if (!any_phase && m.String(event.phase) != wanted) continue;
               events.append(EventDict(m, event));
             }
             return events;
           },
           py::arg("start_ns"), py::arg("end_ns"), py::arg("phase") = py::none(),
           "Framework events overlapping [start_ns, end_ns] as dicts, in start order.")
      .def("steps",
           [](const Model& m, py::object phase) {
             py::list steps;
             for (uint32_t index : m.steps()) {
               const analysis::FrameworkEvent& event = m.events()[index];
               const std::string_view name = m.String(event.phase);
               if (!phase.is_none() && name.substr(name.find('.') + 1) != phase.cast<std::string>()) continue;
               steps.append(EventDict(m, event));
             }
             return steps;
           },
           py::arg("phase") = py::none(), "Step events (of one phase: 'TRAIN', ...), in start order.")
      .def_property_readonly("event_count", [](const Model& m) { return m.events().size(); })
      .def_property_readonly("can_grow", &Model::CanGrow,
                             "Whether refresh() can still find anything (a run still being written).")
      .def(
          "refresh",
          [](Model& m) {
            // With the GIL held: no other Python thread reads the model while it changes.
            StatusOr<analysis::RefreshResult> result = m.Refresh();
            if (!result.ok()) ThrowStatus(result.status());
            py::dict out;
            out["new_events"] = result->new_events;
            out["new_samples"] = result->new_samples;
            return out;
          },
          "Reads what a run still being written gained since it was loaded or last refreshed (only "
          "that), and adds it: {new_events, new_samples}. Events and series read before stay valid as "
          "Python objects; indices do not.");

  module.def("load_run", &LoadRun, py::arg("path"),
             "load_run(path) -> Model: a stepscope run (job or node directory) or an imported run.");
}

}  // namespace stepscope::python
