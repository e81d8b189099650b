// Turns on stepscope's automatic PyTorch instrumentation in every Python process of a job
// with no change to the script: `stepscope run` writes a sitecustomize module into the node
// directory and puts its folder first on the child's PYTHONPATH. The module imports
// stepscope._autostart and then hands over to the sitecustomize it shadows (Debian has one).
// Python started with -I or -E ignores PYTHONPATH and is not instrumented automatically.
//
// Which stepscope the job imports: its interpreter's own, when stepscope is installed in that
// environment (`pip install`); otherwise the package this command came with, offered through
// <node>/.python-startup/fallback/stepscope (a link to that package alone, so nothing else of
// the command's environment becomes importable). The fallback works when the interpreters share
// the package's Python ABI; when they do not, the job runs uninstrumented and says what to
// install. Called once by `stepscope run` before the child starts.
#pragma once

#include <string>

#include "base/status.h"

namespace stepscope::launcher {

// The folder holding the `stepscope` package this command came with (installed beside it by
// pip or `cmake --install`, or in the build tree), found from /proc/self/exe; "" when neither
// layout has it.
std::string FindOwnPythonPackageParent();

// Writes <node_dir>/.python-startup/sitecustomize.py and, when `own_package_parent` is not
// empty, the fallback link to <own_package_parent>/stepscope; returns the folder to put on
// PYTHONPATH.
StatusOr<std::string> WritePythonStartup(const std::string& node_dir, const std::string& own_package_parent);

// PYTHONPATH for the child: `startup_dir` followed by the current PYTHONPATH, if any.
std::string ChildPythonPath(const std::string& startup_dir, const char* current_python_path);

}  // namespace stepscope::launcher
