#include "cli/python_startup.h"

#include "base/file_system.h"

namespace stepscope::cli {
namespace {

constexpr const char kSiteCustomize[] = R"PY(# Written by `stepscope run` for this job; see src/cli/python_startup.h.
import os
import sys


def _stepscope_autostart():
    try:
        import stepscope._autostart
    except Exception as error:
        sys.stderr.write(f"stepscope: automatic instrumentation is off: cannot import stepscope ({error})\n")
        return
    stepscope._autostart.main()


def _stepscope_chain():
    # Hand over to the sitecustomize this module shadows, with our folder out of the way.
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path = sys.path[:]
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    shadowing = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401
    except ImportError as error:
        if error.name != "sitecustomize":
            raise
        if shadowing is not None:
            sys.modules["sitecustomize"] = shadowing
    finally:
        sys.path[:] = saved_path


_stepscope_autostart()
_stepscope_chain()
)PY";

}  // namespace

StatusOr<std::string> WritePythonStartup(const std::string& node_dir) {
  std::string directory = node_dir + "/.python-startup";
  STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(directory));
  STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(directory + "/sitecustomize.py", kSiteCustomize));
  return directory;
}

std::string ChildPythonPath(const std::string& startup_dir, const char* current_python_path) {
  if (current_python_path == nullptr || current_python_path[0] == '\0') return startup_dir;
  return startup_dir + ":" + current_python_path;
}

}  // namespace stepscope::cli
