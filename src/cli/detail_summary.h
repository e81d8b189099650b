// What the command line shows of a run's detail windows (docs/detail-windows.md "Reading
// windows"): `stepscope info`'s window list, the tables of `stepscope pyprof` and of the report's
// Python section. The files are listed and read by analysis/detail_window_files.h, the one reader
// of detail files; this turns its typed descriptions into JSON and text.
//
// Callers: run_info.cc (info), report_command.cc (report), main.cc (pyprof). A file that cannot
// be read is listed or named with its error instead of failing the command. Plain functions, no
// threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/detail_window_files.h"
#include "analysis/model.h"

namespace stepscope::cli {

inline constexpr int kPyprofSchemaVersion = 1;

using analysis::DetailWindowFile;

// The detail windows of a loaded run's node directories (none for an imported run), read and
// described by analysis::ReadDetailWindows.
std::vector<DetailWindowFile> ListDetailWindows(const analysis::Model& model);

// For `stepscope info --json`: [{"node", "kind", "pid", "window", "steps": [first, last] | null,
// "step_phase", "start_ns", "end_ns", "complete", "file", "bytes", "summary", "error"?}]; a
// refused detail directory is an entry with kind "" and its error.
nlohmann::json DetailWindowsToJson(const std::vector<DetailWindowFile>& windows);

enum class PyprofSort { kSelf, kCumulative };

struct PyprofOptions {
  std::string run;  // a job or node directory
  int top = 20;     // rows per table, >= 1
  PyprofSort sort = PyprofSort::kSelf;
  bool json = false;
};

// One table of `stepscope pyprof`: a python window's profiles with one timer merged (or a
// sampling window's call counts), functions sorted and cut to `top`.
nlohmann::json BuildPyprofTables(const std::vector<DetailWindowFile>& windows, const PyprofOptions& options);
// Prints one stderr line per python window that was captured but cannot be read, prefixed by
// `command` ("stepscope pyprof"), so a skipped profile is never silent; returns how many. A
// refused detail directory is not among them: the analysis loader reports it as a problem of
// the run (detail_directory_unreadable), which the commands print with the others.
size_t PrintCorruptPythonWindows(const std::vector<DetailWindowFile>& windows, const char* command);
std::string FormatPyprofTables(const nlohmann::json& tables);

// `stepscope pyprof RUN [--top N] [--sort self|cumulative] [--json]`; returns the exit code
// (1 when the run cannot be read or holds no readable Python profile). The run is loaded once
// (analysis::LoadRun) for its problems: its data-loss lines go to stderr as every command's do
// (run_problems.h), then every python window file that cannot be read is named as corrupt.
int PyprofCommand(const PyprofOptions& options);

}  // namespace stepscope::cli
