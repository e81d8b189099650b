#include "cli/detail_summary.h"

#include <cinttypes>
#include <cstdio>

#include "analysis/run_loader.h"
#include "base/json_fields.h"
#include "cli/run_problems.h"

namespace stepscope::cli {

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
  const std::vector<DetailWindowFile> windows = analysis::ReadDetailWindows(*model);
  nlohmann::json tables = report::BuildPythonProfileTables(windows, options);
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
  const char* sort = options.sort == report::PythonProfileOrder::kSelf ? "self" : "cumulative";
  const nlohmann::json document = {{"schema_version", kPyprofSchemaVersion}, {"sort", sort}, {"tables", tables}};
  std::string text = options.json ? document.dump(2) + "\n" : FormatPyprofTables(tables);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace stepscope::cli
