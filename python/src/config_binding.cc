#include "config_binding.h"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "launcher/detail_window.h"
#include "launcher/job_run_config.h"
#include "status_exception.h"

extern char** environ;

namespace py = pybind11;

namespace stepscope::python {
namespace {

// Reads os.environ as the process's environment: os.environ writes go through putenv, so the
// launcher's reader sees the same STEPSCOPE_* variables Python does.
std::string ResolveRunConfig(const std::string& config_path,
                             const std::vector<std::pair<std::string, std::string>>& overrides) {
  auto config = launcher::ResolveJobRunConfig({config_path, environ, overrides});
  if (!config.ok()) ThrowStatus(config.status());
  return config->dump();
}

std::string NormalizeDetailWindow(const std::string& window_json, const std::string& origin) {
  auto json = nlohmann::json::parse(window_json, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) ThrowStatus(InvalidArgumentError(origin + ": a detail window must be a JSON object"));
  auto window = launcher::DetailWindowFromJson(json, origin);
  if (!window.ok()) ThrowStatus(window.status());
  return launcher::DetailWindowToJson(launcher::NormalizeDetailWindow(*window)).dump();
}

std::string DefaultDetailWindows() {
  std::vector<launcher::DetailWindow> windows = launcher::DefaultDetailWindows();
  for (launcher::DetailWindow& window : windows) window = launcher::NormalizeDetailWindow(window);
  return launcher::DetailWindowsToJson(windows).dump();
}

}  // namespace

void BindConfig(py::module_& m) {
  m.def("resolve_run_config", &ResolveRunConfig, py::arg("config_path"), py::arg("overrides"),
        "The run configuration as JSON text (the shape of <node>/config.json): the launcher's file when "
        "config_path (STEPSCOPE_CONFIG) names it, else defaults < that config file < STEPSCOPE_* environment; "
        "then overrides, [(key, text)] keyword arguments. ValueError naming the bad value.");
  m.def("job_override_keys", &launcher::JobOverrideKeys,
        "The settings a job's keyword arguments may change, in the order they apply.");
  m.def("normalize_detail_window", &NormalizeDetailWindow, py::arg("window_json"), py::arg("origin"),
        "One detail window (JSON text) validated and normalised (all eight keys, defaults filled); "
        "ValueError starting with origin when invalid.");
  m.def("default_detail_windows", &DefaultDetailWindows,
        "The default detail windows (SageMaker's), normalised, as JSON text.");
}

}  // namespace stepscope::python
