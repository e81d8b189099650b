// `stepscope export RUN --format chrome|sqlite|csv [-o PATH]`: writes a run's analysis model in a
// format other tools read (docs/exports.md):
//
//   chrome  <RUN>/export/<job>.trace.json   Chrome Trace Event Format, opens in Perfetto UI
//   sqlite  <RUN>/export/<job>.sqlite       the documented schema (export_tables.h)
//   csv     <RUN>/export/csv/               one <table>.csv per table of that schema
//
// `--from/--to` or `--steps A:B` (chrome) write only that part of the run (export_range.h);
// the file name then says which ("<job>.steps-100-120.trace.json").
// Findings (sqlite, csv) come from <RUN>/rules/rules.json when it exists, else from evaluating
// the built-in rules with their default parameters (nothing is written to <RUN>/rules then).
// Exit codes: 0 written, 1 the run could not be loaded or the output not written (one line
// "stepscope export: <what>; <next step>"), 2 usage. Callers: main.cc.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "export/export_range.h"

namespace stepscope::cli {

struct ExportInvocation {
  std::string run;     // anything LoadRun accepts
  std::string format;  // "chrome", "sqlite" or "csv"
  std::string out;     // -o; empty: the default path above
  exporting::ExportRangeRequest range;  // --from/--to/--steps (chrome only)
};

// The run's directory (RUN itself, or the directory of a model file) and its name (the
// manifest's "job", else the directory's name).
std::string ExportRunDirectory(const std::string& run);
std::string ExportJobName(const std::string& run_dir);
// Where `format` goes without -o.
std::string DefaultExportPath(const std::string& run_dir, const std::string& job, const std::string& format);

int ExportCommand(const ExportInvocation& invocation);

}  // namespace stepscope::cli
