// Turns on stepscope's automatic PyTorch instrumentation in every Python process of a job
// with no change to the script: `stepscope run` writes a sitecustomize module into the node
// directory and puts its folder first on the child's PYTHONPATH. The module imports
// stepscope._autostart and then hands over to the sitecustomize it shadows (Debian has one).
// Python started with -I or -E ignores PYTHONPATH and is not instrumented automatically.
#pragma once

#include <string>

#include "base/status.h"

namespace stepscope::cli {

// Writes <node_dir>/.python-startup/sitecustomize.py; returns that folder.
StatusOr<std::string> WritePythonStartup(const std::string& node_dir);

// PYTHONPATH for the child: `startup_dir` followed by the current PYTHONPATH, if any.
std::string ChildPythonPath(const std::string& startup_dir, const char* current_python_path);

}  // namespace stepscope::cli
