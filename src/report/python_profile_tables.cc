#include "report/python_profile_tables.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "base/json_fields.h"

namespace stepscope::report {
namespace {

struct PyprofRow {
  std::string file;
  int64_t line = 0;
  std::string name;
  int64_t calls = 0;    // cprofile
  int64_t samples = 0;  // sampling: samples with the function on the stack
  double self_s = 0;
  double cumulative_s = 0;
};

using RowKey = std::tuple<std::string, int64_t, std::string>;

// One window's functions for one timer; steps and profiled time summed over its profiles.
struct PyprofTable {
  nlohmann::json header = nlohmann::json::object();
  std::map<RowKey, PyprofRow> rows;
  int64_t first_step = INT64_MAX;
  int64_t last_step = INT64_MIN;
  double profiled_s = 0;
};

void AddRow(PyprofTable& table, const nlohmann::json& function) {
  PyprofRow row;
  row.file = JsonString(function, "file");
  row.line = JsonInt(function, "line", 0);
  row.name = JsonString(function, "name");
  PyprofRow& merged = table.rows.try_emplace(RowKey{row.file, row.line, row.name}, row).first->second;
  merged.calls += JsonInt(function, "calls", 0);
  merged.samples += JsonInt(function, "cumulative_samples", 0);
  merged.self_s += JsonDouble(function, "self_s", 0);
  merged.cumulative_s += JsonDouble(function, "cumulative_s", 0);
}

nlohmann::json FinishTable(PyprofTable& table, const PythonProfileOptions& options) {
  std::vector<PyprofRow> rows;
  rows.reserve(table.rows.size());
  for (auto& [key, row] : table.rows) rows.push_back(std::move(row));
  auto value = [&](const PyprofRow& r) { return options.sort == PythonProfileOrder::kSelf ? r.self_s : r.cumulative_s; };
  std::sort(rows.begin(), rows.end(), [&](const PyprofRow& a, const PyprofRow& b) {
    if (value(a) != value(b)) return value(a) > value(b);
    return std::tie(a.name, a.file, a.line) < std::tie(b.name, b.file, b.line);
  });
  nlohmann::json out = table.header;
  out["steps"] = table.first_step <= table.last_step ? nlohmann::json::array({table.first_step, table.last_step})
                                                     : nlohmann::json();
  out["profiled_s"] = table.profiled_s;
  out["functions_total"] = rows.size();
  const bool sampling = out["profiler"] == "sampling";
  nlohmann::json functions = nlohmann::json::array();
  for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(options.top); ++i) {
    nlohmann::json f = {{"name", rows[i].name}, {"file", rows[i].file}, {"line", rows[i].line},
                        {"self_s", rows[i].self_s}, {"cumulative_s", rows[i].cumulative_s}};
    f[sampling ? "samples" : "calls"] = sampling ? rows[i].samples : rows[i].calls;
    functions.push_back(std::move(f));
  }
  out["functions"] = std::move(functions);
  return out;
}

}  // namespace

nlohmann::json BuildPythonProfileTables(const std::vector<analysis::DetailWindowFile>& windows, const PythonProfileOptions& options) {
  nlohmann::json tables = nlohmann::json::array();
  for (const analysis::DetailWindowFile& window : windows) {
    if (window.kind != "python" || !window.error.empty()) continue;
    auto doc = analysis::ReadDetailDocument(window.path);
    if (!doc.ok()) continue;
    nlohmann::json header = {{"node", window.node}, {"pid", window.pid}, {"window", window.window},
                             {"file", window.file}, {"step_phase", window.step_phase}};
    if (JsonString(*doc, "profiler") == "sampling") {
      PyprofTable table;
      table.header = header;
      table.header["profiler"] = "sampling";
      table.header["timer"] = nullptr;
      table.header["samples"] = JsonInt(*doc, "samples", 0);
      table.header["interval_s"] = JsonDouble(*doc, "interval_s", 0);
      if (window.has_steps) {
        table.first_step = window.first_step;
        table.last_step = window.last_step;
      }
      table.profiled_s = (window.end_ns - window.start_ns) / 1e9;
      for (const auto& function : JsonArray(*doc, "functions")) AddRow(table, function);
      tables.push_back(FinishTable(table, options));
      continue;
    }
    // cProfile: one table per timer, merging the window's steps that used it (times of
    // different timers do not add up).
    std::vector<std::pair<std::string, PyprofTable>> by_timer;
    for (const auto& profile : JsonArray(*doc, "profiles")) {
      const std::string timer = JsonString(profile, "timer", "total_time");
      auto it = std::find_if(by_timer.begin(), by_timer.end(), [&](const auto& entry) { return entry.first == timer; });
      if (it == by_timer.end()) {
        PyprofTable table;
        table.header = header;
        table.header["profiler"] = "cprofile";
        table.header["timer"] = timer;
        by_timer.emplace_back(timer, std::move(table));
        it = std::prev(by_timer.end());
      }
      PyprofTable& table = it->second;
      if (int64_t step = JsonInt(profile, "step", -1); step >= 0) {
        table.first_step = std::min(table.first_step, step);
        table.last_step = std::max(table.last_step, step);
      }
      table.profiled_s += (JsonInt(profile, "end_ns", 0) - JsonInt(profile, "start_ns", 0)) / 1e9;
      for (const auto& function : JsonArray(profile, "functions")) AddRow(table, function);
    }
    for (auto& [timer, table] : by_timer) tables.push_back(FinishTable(table, options));
  }
  return tables;
}

}  // namespace stepscope::report
