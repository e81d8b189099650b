// The one entry point that loads any run into the analysis model: an imported run (a directory
// holding model.stepscope, written by `stepscope import`; or that file itself) or one of
// stepscope's own runs (a job directory <out>/<job>, or one node directory in it).
//
// Callers: every front end (`stepscope rules`/report/info, the live driver, the Python readers).
// Reads files only; each call builds its own Model, so calls may run on any thread.
#pragma once

#include <string>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::analysis {

// File name of an imported run's model inside its run directory (model_file.h).
inline constexpr const char* kModelFileName = "model.stepscope";

// Errors are one line naming `path` and what to pass instead.
StatusOr<Model> LoadRun(const std::string& path);

// The directory that holds the run at `path` (trailing slashes dropped): the path itself when it
// is a directory, else the folder of the file (an imported run's model.stepscope), "." for a bare
// file name. Where report.html goes and where an import's files lie.
std::string RunDirectoryOf(std::string path);

}  // namespace stepscope::analysis
