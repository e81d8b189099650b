#include "report/report_sections_detail.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "report/report_model_series.h"
#include "base/json_fields.h"

namespace stepscope::report {
namespace {

// Wall-clock time is what a report reader compares with step time; other timers (cpu_time,
// off_cpu_time) only when no window used it.
constexpr const char* kPreferredTimer = "total_time";

// The tables whose times may be added: one timer of cProfile, or the sampling profiler's.
std::string ChooseTableKind(const nlohmann::json& tables) {
  std::vector<std::string> kinds;
  for (const nlohmann::json& table : tables) {
    const std::string profiler = JsonString(table, "profiler");
    kinds.push_back(profiler == "sampling" ? "sampling" : JsonString(table, "timer"));
  }
  if (std::find(kinds.begin(), kinds.end(), kPreferredTimer) != kinds.end()) return kPreferredTimer;
  return kinds.empty() ? "" : kinds.front();
}

std::string TableKind(const nlohmann::json& table) {
  return JsonString(table, "profiler") == "sampling" ? "sampling" : JsonString(table, "timer");
}

struct FunctionTotal {
  int64_t calls = 0;
  double self_s = 0;
  double cumulative_s = 0;
};

}  // namespace

nlohmann::json BuildPythonProfile(const ReportContext& context) {
  if (context.imported()) {
    return Unavailable("Python profiles come from the python detail windows of a stepscope run; this run was " +
                       SourceDescription(*context.model) + ".");
  }
  const nlohmann::json tables = context.python_tables != nullptr && context.python_tables->is_array()
                                    ? *context.python_tables
                                    : nlohmann::json::array();
  if (tables.empty()) {
    return Unavailable(
        "No python detail window was captured: by default TRAIN steps 9-11 are profiled (docs/detail-windows.md); "
        "the job may have run fewer steps, or without stepscope's torch integration.");
  }
  const std::string kind = ChooseTableKind(tables);
  const bool sampling = kind == "sampling";
  std::map<std::tuple<std::string, int64_t, std::string>, FunctionTotal> merged;
  nlohmann::json windows = nlohmann::json::array();
  std::set<std::tuple<std::string, int64_t, int64_t>> seen_windows;
  double profiled_s = 0;
  for (const nlohmann::json& table : tables) {
    const std::string node = JsonString(table, "node");
    const int64_t pid = JsonInt(table, "pid", 0), window = JsonInt(table, "window", 0);
    if (TableKind(table) != kind) continue;
    profiled_s += JsonDouble(table, "profiled_s", 0);
    if (seen_windows.insert({node, pid, window}).second) {
      windows.push_back({{"node", node}, {"pid", pid}, {"window", window}, {"steps", table.contains("steps") ? table["steps"] : nullptr},
                         {"step_phase", JsonString(table, "step_phase")}});
    }
    for (const nlohmann::json& f : JsonArray(table, "functions")) {
      FunctionTotal& total =
          merged[{JsonString(f, "name"), JsonInt(f, "line", 0), JsonString(f, "file")}];
      total.calls += JsonInt(f, sampling ? "samples" : "calls", 0);
      total.self_s += JsonDouble(f, "self_s", 0);
      total.cumulative_s += JsonDouble(f, "cumulative_s", 0);
    }
  }
  std::vector<std::pair<std::tuple<std::string, int64_t, std::string>, FunctionTotal>> rows(merged.begin(), merged.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.self_s > b.second.self_s; });
  nlohmann::json functions = nlohmann::json::array();
  for (size_t i = 0; i < rows.size() && i < kMaxTableRows; ++i) {
    const auto& [name, line, file] = rows[i].first;
    functions.push_back({{"function", name},
                         {"file", file},
                         {"line", line},
                         {sampling ? "samples" : "calls", rows[i].second.calls},
                         {"self_s", rows[i].second.self_s},
                         {"cumulative_s", rows[i].second.cumulative_s}});
  }
  return {{"available", true},
          {"profiler", sampling ? "sampling" : "cprofile"},
          {"timer", sampling ? nlohmann::json() : nlohmann::json(kind)},
          {"profiled_s", profiled_s},
          {"functions_total", rows.size()},
          {"functions", std::move(functions)},
          {"windows", std::move(windows)}};
}

nlohmann::json BuildOperatorsSection(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  if (context.imported()) {
    return Unavailable("Operator tables come from the operators detail windows of a stepscope run; this run was " +
                       SourceDescription(model) + ".");
  }
  const nlohmann::json listed = context.run_info != nullptr ? JsonArray(*context.run_info, "detail_windows")
                                                            : nlohmann::json::array();
  const analysis::StringId cpu_phase = model.FindString("cpu_functions");
  const analysis::StringId cpu_op = model.FindString("cpu_op");
  const analysis::StringId cpu_key = model.FindString("cpu_ns"), self_key = model.FindString("self_cpu_ns"),
                           device_key = model.FindString("device_ns");
  nlohmann::json windows = nlohmann::json::array();
  std::vector<std::string> unreadable;
  for (const nlohmann::json& window : listed) {
    if (JsonString(window, "kind") != "operators") continue;
    if (window.contains("error")) {
      unreadable.push_back(JsonString(window, "file") + ": " + JsonString(window, "error"));
      continue;
    }
    const std::string node_name = JsonString(window, "node");
    const int64_t pid = JsonInt(window, "pid", 0);
    const int64_t start_ns = JsonInt(window, "start_ns", 0), end_ns = JsonInt(window, "end_ns", 0);
    uint32_t node = UINT32_MAX;
    for (uint32_t i = 0; i < model.nodes().size(); ++i) {
      if (model.nodes()[i].name == node_name) node = i;
    }
    struct OperatorTotal {
      int64_t calls = 0, cpu_ns = 0, self_cpu_ns = 0, device_ns = 0;
    };
    std::unordered_map<analysis::StringId, OperatorTotal> totals;
    if (cpu_phase != analysis::kEmptyString && node != UINT32_MAX && end_ns >= start_ns) {
      const auto [begin, end] = model.EventsStartingIn(start_ns, end_ns + 1);
      for (size_t i = begin; i < end; ++i) {
        const analysis::FrameworkEvent& event = model.events()[i];
        if (event.phase != cpu_phase || event.category != cpu_op || event.node != node || event.pid != pid) continue;
        OperatorTotal& total = totals[event.name];
        ++total.calls;
        int64_t cpu_ns = event.duration_ns(), self_ns = 0, device_ns = 0;
        for (const analysis::EventArg& arg : model.Args(event)) {
          if (arg.type != analysis::EventArg::Type::kInt) continue;
          if (arg.key == cpu_key) cpu_ns = arg.int_value;
          else if (arg.key == self_key) self_ns = arg.int_value;
          else if (arg.key == device_key) device_ns = arg.int_value;
        }
        total.cpu_ns += cpu_ns;
        total.self_cpu_ns += self_ns;
        total.device_ns += device_ns;
      }
    }
    std::vector<std::pair<analysis::StringId, OperatorTotal>> rows(totals.begin(), totals.end());
    std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      if (a.second.cpu_ns != b.second.cpu_ns) return a.second.cpu_ns > b.second.cpu_ns;
      return model.String(a.first) < model.String(b.first);
    });
    nlohmann::json operators = nlohmann::json::array();
    for (size_t i = 0; i < rows.size() && i < kMaxTableRows; ++i) {
      operators.push_back({{"name", model.String(rows[i].first)},
                           {"calls", rows[i].second.calls},
                           {"cpu_total_us", static_cast<double>(rows[i].second.cpu_ns) / 1e3},
                           {"self_cpu_us", static_cast<double>(rows[i].second.self_cpu_ns) / 1e3},
                           {"device_total_us", static_cast<double>(rows[i].second.device_ns) / 1e3}});
    }
    windows.push_back({{"node", node_name},
                       {"pid", pid},
                       {"window", JsonInt(window, "window", 0)},
                       {"steps", window.contains("steps") ? window["steps"] : nullptr},
                       {"step_phase", JsonString(window, "step_phase")},
                       {"start_ns", start_ns},
                       {"end_ns", end_ns},
                       {"operators_total", rows.size()},
                       {"operators", std::move(operators)}});
  }
  if (windows.empty()) {
    std::string why =
        "No operators detail window was captured: by default TRAIN step 5 is profiled with the PyTorch profiler "
        "(docs/detail-windows.md); the job may have run fewer steps, or without stepscope's torch integration.";
    if (!unreadable.empty()) why = "The operators detail window could not be read (" + unreadable.front() + ").";
    return Unavailable(why);
  }
  return {{"available", true}, {"windows", std::move(windows)}};
}

}  // namespace stepscope::report
