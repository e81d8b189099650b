// `stepscope pyprof`: the tables of a run's Python profiles (report/python_profile_tables.h) as
// text or JSON, and the one line that names a captured profile that cannot be read (shared with
// `stepscope report`). Detail files are listed and read by analysis/detail_window_files.h.
//
// Callers: main.cc (pyprof), report_command.cc. Plain functions, no threads.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/detail_window_files.h"
#include "report/python_profile_tables.h"

namespace stepscope::cli {

inline constexpr int kPyprofSchemaVersion = 1;

using analysis::DetailWindowFile;
using PyprofSort = report::PythonProfileOrder;

// top and sort (report::PythonProfileOptions), and what the command adds.
struct PyprofOptions : report::PythonProfileOptions {
  std::string run;  // a job or node directory
  bool json = false;
};

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
