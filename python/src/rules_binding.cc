#include "rules_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/problem.h"
#include "analysis/run_loader.h"
#include "rules/profiler_report.h"
#include "status_exception.h"

namespace py = pybind11;

namespace stepscope::python {
namespace {

// What a Python rule sees of one window. Valid only during its evaluate() call: the driver's
// Window and model are gone afterwards, so later use raises instead of reading freed memory.
class WindowView {
 public:
  explicit WindowView(const rules::Window* window) : window_(window) {}
  void Invalidate() { window_ = nullptr; }

  const rules::Window& window() const {
    if (window_ == nullptr) throw std::runtime_error("a Window is only valid inside the evaluate() call it was given to");
    return *window_;
  }
  const analysis::Model& model() const { return *window().model; }

  // [(node, type, name, dimension, times_ns, values)] of the series with samples in the window.
  py::list Samples(py::object dimension) const {
    const analysis::Model& m = model();
    py::list out;
    for (size_t s = 0; s < m.series().size() && s < window().samples.size(); ++s) {
      const analysis::SystemSeries& series = m.series()[s];
      if (!dimension.is_none() && m.String(series.dimension) != dimension.cast<std::string>()) continue;
      const auto [begin, end] = window().samples[s];
      if (begin == end) continue;
      py::array_t<int64_t> times(static_cast<py::ssize_t>(end - begin), series.time_ns.data() + begin);
      py::array_t<double> values(static_cast<py::ssize_t>(end - begin), series.value.data() + begin);
      out.append(py::make_tuple(m.nodes()[series.node].name, std::string(m.String(series.type)),
                                std::string(m.String(series.name)), std::string(m.String(series.dimension)),
                                std::move(times), std::move(values)));
    }
    return out;
  }

  // Framework events starting in the window, as dicts (phase, name, category, node, pid, tid,
  // device, start_ns, end_ns, step, args).
  py::list Events(py::object phase) const {
    const analysis::Model& m = model();
    py::list out;
    for (size_t i = window().events.first; i < window().events.second; ++i) {
      const analysis::FrameworkEvent& event = m.events()[i];
      if (!phase.is_none() && m.String(event.phase) != phase.cast<std::string>()) continue;
      py::dict entry;
      entry["phase"] = std::string(m.String(event.phase));
      entry["name"] = std::string(m.String(event.name));
      entry["category"] = std::string(m.String(event.category));
      entry["node"] = m.nodes()[event.node].name;
      entry["pid"] = event.pid;
      entry["tid"] = event.tid;
      entry["device"] = event.device;
      entry["start_ns"] = event.start_ns;
      entry["end_ns"] = event.end_ns;
      entry["step"] = event.step;
      py::dict args;
      for (const analysis::EventArg& arg : m.Args(event)) {
        py::str key(std::string(m.String(arg.key)));
        if (arg.type == analysis::EventArg::Type::kInt) args[key] = arg.int_value;
        else if (arg.type == analysis::EventArg::Type::kDouble) args[key] = arg.double_value;
        else if (arg.type == analysis::EventArg::Type::kBool) args[key] = py::bool_(arg.int_value != 0);
        else args[key] = std::string(m.String(arg.string_value));
      }
      entry["args"] = std::move(args);
      out.append(std::move(entry));
    }
    return out;
  }

 private:
  const rules::Window* window_;
};

std::string Text(const py::handle& object, const char* key, const std::string& fallback = "") {
  if (!py::isinstance<py::dict>(object)) return fallback;
  py::dict dict = py::reinterpret_borrow<py::dict>(object);
  return dict.contains(key) && !dict[key].is_none() ? py::str(dict[key]).cast<std::string>() : fallback;
}

int64_t Integer(const py::dict& dict, const char* key) {
  return dict.contains(key) && !dict[key].is_none() ? dict[key].cast<int64_t>() : 0;
}

rules::Severity SeverityOf(const std::string& text) {
  if (text == "critical") return rules::Severity::kCritical;
  if (text == "info") return rules::Severity::kInfo;
  return rules::Severity::kWarning;
}

// A rule written in Python (stepscope.analysis.Rule): evaluate(window) -> bool, report() -> dict,
// optional finish(). A Python error is reported once, in the rule's details, and the rule stops:
// a user rule never fails the driver or the other rules.
class PythonRule final : public rules::Rule {
 public:
  explicit PythonRule(py::object rule) : rule_(std::move(rule)) {
    name_ = py::str(rule_.attr("name")).cast<std::string>();
    py::dict defaults = rule_.attr("parameters").cast<py::dict>();
    for (auto item : defaults) {
      const std::string key = py::str(item.first).cast<std::string>();
      const bool numeric = py::isinstance<py::int_>(item.second) || py::isinstance<py::float_>(item.second);
      parameters_.Declare(key, numeric ? rules::RuleParameters::Kind::kNumber : rules::RuleParameters::Kind::kText,
                          py::str(item.second).cast<std::string>());
    }
  }
  std::string_view name() const override { return name_; }

  bool Evaluate(const rules::Window& window) override {
    if (!error_.empty()) return false;
    PushParameters();
    auto view = std::make_shared<WindowView>(&window);
    bool met = false;
    try {
      met = py::bool_(rule_.attr("evaluate")(py::cast(view)));
    } catch (py::error_already_set& error) {
      Fail("evaluate", error);
    }
    view->Invalidate();
    return met;
  }

  void Finish(const analysis::Model&) override {
    if (!error_.empty() || !py::hasattr(rule_, "finish")) return;
    try {
      rule_.attr("finish")();
    } catch (py::error_already_set& error) {
      Fail("finish", error);
    }
  }

  rules::RuleReport Report() const override {
    rules::RuleReport report;
    report.rule = name_;
    report.parameters = parameters_.ReportString();
    report.description = py::hasattr(rule_, "description") ? py::str(rule_.attr("description")).cast<std::string>() : "";
    report.recommendation =
        py::hasattr(rule_, "recommendation") ? py::str(rule_.attr("recommendation")).cast<std::string>() : "";
    if (!error_.empty()) {
      report.details = {{"error", error_}};
      return report;
    }
    try {
      py::dict result = rule_.attr("report")().cast<py::dict>();
      report.triggered = Integer(result, "triggered");
      report.violations = Integer(result, "violations");
      report.datapoints = Integer(result, "datapoints");
      report.reporting = result.contains("reporting") && py::bool_(result["reporting"]);
      if (result.contains("details")) {
        report.details = nlohmann::json::parse(py::module_::import("json").attr("dumps")(result["details"]).cast<std::string>(),
                                               nullptr, false);
      }
      if (result.contains("findings")) {
        for (auto item : result["findings"]) {
          rules::Finding finding;
          finding.rule = name_;
          finding.id = Text(item, "id", name_);
          finding.title = Text(item, "title");
          finding.severity = SeverityOf(Text(item, "severity", "warning"));
          finding.recommendation = Text(item, "recommendation", report.recommendation);
          finding.next_step = Text(item, "next_step");
          py::dict dict = py::reinterpret_borrow<py::dict>(item);
          if (dict.contains("estimated_saving") && !dict["estimated_saving"].is_none()) {
            finding.estimated_saving = dict["estimated_saving"].cast<double>();
          }
          if (dict.contains("evidence")) {
            for (auto piece : dict["evidence"]) {
              py::dict e = py::reinterpret_borrow<py::dict>(piece);
              rules::Evidence evidence;
              evidence.node = Text(e, "node");
              evidence.start_ns = Integer(e, "start_ns");
              evidence.end_ns = Integer(e, "end_ns");
              evidence.step_phase = Text(e, "step_phase");
              evidence.what = Text(e, "what");
              // Optional: evidence about one rank's process (None or absent: not about one).
              if (e.contains("rank") && !e["rank"].is_none()) evidence.rank = static_cast<int32_t>(Integer(e, "rank"));
              if (e.contains("pid") && !e["pid"].is_none()) evidence.pid = Integer(e, "pid");
              if (e.contains("steps")) evidence.steps = e["steps"].cast<std::vector<int64_t>>();
              finding.evidence.push_back(std::move(evidence));
            }
          }
          report.findings.push_back(std::move(finding));
        }
      }
    } catch (py::error_already_set& error) {
      report.details = {{"error", "report() raised " + std::string(error.what())}};
    } catch (const py::cast_error& error) {
      report.details = {{"error", std::string("report() returned something other than the documented dict: ") + error.what()}};
    }
    return report;
  }

 private:
  void PushParameters() {
    if (pushed_) return;
    pushed_ = true;
    py::dict values;
    for (const auto& parameter : parameters_.all()) {
      if (parameter.kind == rules::RuleParameters::Kind::kText) values[py::str(parameter.name)] = parameter.text;
      else values[py::str(parameter.name)] = parameter.number;
    }
    rule_.attr("params") = values;
  }
  void Fail(const char* where, py::error_already_set& error) {
    error_ = std::string(where) + "() raised " + error.what();
    std::fprintf(stderr, "stepscope rules: custom rule %s: %s; the rule is skipped from here on\n", name_.c_str(),
                 error_.c_str());
  }

  py::object rule_;
  std::string name_;
  std::string error_;
  bool pushed_ = false;
};

py::object RunRules(const std::string& path, const py::list& custom, const std::vector<std::string>& parameters,
                    const std::vector<std::string>& only, const std::string& out_dir,
                    const std::string& problems_prefix) {
  StatusOr<analysis::Model> model = [&] {
    py::gil_scoped_release release;
    return analysis::LoadRun(path);
  }();
  if (!model.ok()) ThrowStatus(model.status());
  // The run's data-loss lines, as every C++ command prints them once it has loaded the run.
  if (!problems_prefix.empty()) {
    const std::string lines = analysis::FormatRunProblems(model->problems(), problems_prefix, path);
    if (!lines.empty()) {
      py::object err = py::module_::import("sys").attr("stderr");
      err.attr("write")(lines);
      err.attr("flush")();
    }
  }
  std::vector<std::unique_ptr<rules::Rule>> selected;
  for (const rules::RuleFactory& factory : rules::BuiltinRules()) {
    bool wanted = only.empty();
    for (const std::string& name : only) wanted = wanted || factory.name == name;
    if (wanted) selected.push_back(factory.make());
  }
  for (auto rule : custom) selected.push_back(std::make_unique<PythonRule>(py::reinterpret_borrow<py::object>(rule)));
  rules::ProfilerReport report(std::move(selected), rules::BuiltinRules());
  for (const std::string& assignment : parameters) {
    if (Status status = report.SetParameter(assignment); !status.ok()) ThrowStatus(status);
  }
  report.Finish(*model);
  if (!out_dir.empty()) {
    if (Status status = report.WriteOutputs(out_dir); !status.ok()) ThrowStatus(status);
  }
  return py::module_::import("json").attr("loads")(rules::DumpJson(report.RulesJson()));
}

}  // namespace

void BindRules(py::module_& module) {
  py::class_<WindowView, std::shared_ptr<WindowView>>(module, "RuleWindow",
                                                       "One evaluation window, valid during evaluate() only.")
      .def_property_readonly("index", [](const WindowView& w) { return w.window().index; })
      .def_property_readonly("start_ns", [](const WindowView& w) { return w.window().start_ns; })
      .def_property_readonly("end_ns", [](const WindowView& w) { return w.window().end_ns; })
      .def("samples", &WindowView::Samples, py::arg("dimension") = py::none(),
           "[(node, type, name, dimension, times_ns, values)] of the series with samples in the window "
           "(start <= t <= end), optionally of one dimension ('GPUUtilization', ...).")
      .def("events", &WindowView::Events, py::arg("phase") = py::none(),
           "Framework events starting in the window (dicts), optionally of one phase.");
  module.def("run_rules", &RunRules, py::arg("path"), py::arg("custom") = py::list(),
             py::arg("parameters") = std::vector<std::string>(), py::arg("only") = std::vector<std::string>(),
             py::arg("out_dir") = std::string(), py::arg("problems_prefix") = std::string(),
             "Runs the built-in rules and `custom` Python rules over a run with the ProfilerReport driver; "
             "returns the rules.json document and writes the outputs to out_dir when given. With "
             "problems_prefix, first writes the run's data-loss and error lines to sys.stderr, each "
             "starting with it, as the C++ commands do.");
}

}  // namespace stepscope::python
