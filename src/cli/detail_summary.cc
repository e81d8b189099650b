#include "cli/detail_summary.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <tuple>

#include "analysis/run_loader.h"
#include "base/json_fields.h"
#include "cli/run_problems.h"

namespace stepscope::cli {

std::vector<DetailWindowFile> ListDetailWindows(const analysis::Model& model) {
  std::vector<store::RunNode> nodes;
  for (const analysis::NodeFacts& node : model.nodes()) {
    if (!node.directory.empty()) nodes.push_back({node.name, node.directory});  // none for an imported run
  }
  return analysis::ReadDetailWindows(nodes);
}

nlohmann::json DetailWindowsToJson(const std::vector<DetailWindowFile>& windows) {
  nlohmann::json out = nlohmann::json::array();
  for (const DetailWindowFile& w : windows) {
    nlohmann::json steps = w.has_steps ? nlohmann::json::array({w.first_step, w.last_step}) : nlohmann::json();
    nlohmann::json entry = {{"node", w.node},
                            {"kind", w.kind},
                            {"pid", w.pid},
                            {"window", w.window},
                            {"steps", steps},
                            {"step_phase", w.step_phase},
                            {"start_ns", w.start_ns},
                            {"end_ns", w.end_ns},
                            {"complete", w.complete},
                            {"file", w.file},
                            {"bytes", w.bytes},
                            {"summary", w.summary}};
    if (!w.error.empty()) entry["error"] = w.error;
    out.push_back(std::move(entry));
  }
  return out;
}

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

nlohmann::json FinishTable(PyprofTable& table, const PyprofOptions& options) {
  std::vector<PyprofRow> rows;
  rows.reserve(table.rows.size());
  for (auto& [key, row] : table.rows) rows.push_back(std::move(row));
  auto value = [&](const PyprofRow& r) { return options.sort == PyprofSort::kSelf ? r.self_s : r.cumulative_s; };
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

nlohmann::json BuildPyprofTables(const std::vector<DetailWindowFile>& windows, const PyprofOptions& options) {
  nlohmann::json tables = nlohmann::json::array();
  for (const DetailWindowFile& window : windows) {
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

std::string FormatPyprofTables(const nlohmann::json& tables) {
  std::string out;
  char line[512];
  for (const auto& table : tables) {
    const bool sampling = JsonString(table, "profiler") == "sampling";
    const std::string phase = JsonString(table, "step_phase");
    std::string steps = "no steps";
    if (const auto range = JsonArray(table, "steps"); range.size() == 2) {
      steps = range[1] == range[0] ? phase + " step " + range[0].dump()
                                   : phase + " steps " + range[0].dump() + "-" + range[1].dump();
    }
    std::string how = sampling ? "sampling, " + std::to_string(JsonInt(table, "samples", 0)) + " samples"
                               : "cprofile, timer " + JsonString(table, "timer");
    std::snprintf(line, sizeof line, "python profile: node %s, pid %lld, window %lld, %s, %s, %.3f s, %lld functions\n",
                  JsonString(table, "node").c_str(), static_cast<long long>(JsonInt(table, "pid", 0)),
                  static_cast<long long>(JsonInt(table, "window", 0)), steps.c_str(), how.c_str(),
                  JsonDouble(table, "profiled_s", 0),
                  static_cast<long long>(JsonInt(table, "functions_total", 0)));
    out += line;
    std::snprintf(line, sizeof line, "  %12s %12s %9s  %s\n", "self s", "cum s", sampling ? "samples" : "calls",
                  "function");
    out += line;
    for (const auto& f : JsonArray(table, "functions")) {
      std::string where;
      const std::string file = JsonString(f, "file");
      if (!file.empty() && file != "~") where = "  " + file + ":" + std::to_string(JsonInt(f, "line", 0));
      std::snprintf(line, sizeof line, "  %12.6f %12.6f %9lld  ", JsonDouble(f, "self_s", 0),
                    JsonDouble(f, "cumulative_s", 0),
                    static_cast<long long>(JsonInt(f, sampling ? "samples" : "calls", 0)));
      out += line + JsonString(f, "name") + where + "\n";
    }
    out += "\n";
  }
  return out;
}

size_t PrintCorruptPythonWindows(const std::vector<DetailWindowFile>& windows, const char* command) {
  size_t corrupt = 0;
  for (const DetailWindowFile& window : windows) {
    if (window.kind != "python" || window.error.empty()) continue;
    std::fprintf(stderr, "%s: Python profile '%s' is corrupt and was skipped: %s\n", command, window.file.c_str(),
                 window.error.c_str());
    ++corrupt;
  }
  return corrupt;
}

int PyprofCommand(const PyprofOptions& options) {
  // Loaded for its problems, as every command that reads a run: the node directories come from
  // the same read, so pyprof names nodes as info and the report do.
  auto model = analysis::LoadRun(options.run);
  if (!model.ok()) {
    std::fprintf(stderr, "stepscope pyprof: %s\n", model.status().message().c_str());
    return 1;
  }
  PrintRunProblems(model->problems(), "stepscope pyprof: ", options.run);
  const std::vector<DetailWindowFile> windows = ListDetailWindows(*model);
  nlohmann::json tables = BuildPyprofTables(windows, options);
  // A profile that was captured but cannot be read is named as such: "holds no Python profile"
  // would send the user looking for a capture that happened.
  const size_t corrupt = PrintCorruptPythonWindows(windows, "stepscope pyprof");
  if (tables.empty() && corrupt > 0) {
    std::fprintf(stderr,
                 "stepscope pyprof: '%s' holds no readable Python profile; the %zu above could not be read "
                 "(copy the run again, or capture new python windows)\n",
                 options.run.c_str(), corrupt);
    return 1;
  }
  if (tables.empty()) {
    std::fprintf(stderr,
                 "stepscope pyprof: '%s' holds no Python profile; python detail windows write "
                 "<node>/detail/python-<pid>-<window>.json.zst "
                 "(default: TRAIN steps 9-11, see docs/detail-windows.md)\n",
                 options.run.c_str());
    return 1;
  }
  const char* sort = options.sort == PyprofSort::kSelf ? "self" : "cumulative";
  const nlohmann::json document = {{"schema_version", kPyprofSchemaVersion}, {"sort", sort}, {"tables", tables}};
  std::string text = options.json ? document.dump(2) + "\n" : FormatPyprofTables(tables);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace stepscope::cli
