#include "launcher/python_startup.h"

#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <climits>

#include "base/file_system.h"

#ifndef STEPSCOPE_PYTHON_PACKAGE_FROM_CLI
#define STEPSCOPE_PYTHON_PACKAGE_FROM_CLI ""
#endif
#ifndef STEPSCOPE_PYTHON_PACKAGE_FROM_BUILD_CLI
#define STEPSCOPE_PYTHON_PACKAGE_FROM_BUILD_CLI ""
#endif

namespace stepscope::launcher {
namespace {

constexpr const char kSiteCustomize[] = R"PY(# Written by `stepscope run` for this job; see src/launcher/python_startup.h.
import os
import sys


def _stepscope_off(reason):
    sys.stderr.write(f"stepscope: automatic instrumentation is off in {sys.executable} "
                     f"(Python {sys.version_info[0]}.{sys.version_info[1]}): {reason}\n")


def _stepscope_forget_partial_import():
    for name in [name for name in sys.modules if name == "stepscope" or name.startswith("stepscope.")]:
        del sys.modules[name]


def _stepscope_import_autostart():
    try:
        import stepscope._autostart as autostart
        return autostart
    except ImportError as error:
        own_error = error
    # Not installed here (or not importable): the package `stepscope run` came with, alone.
    fallback = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fallback")
    if not os.path.isdir(os.path.join(fallback, "stepscope")):
        _stepscope_off(f"cannot import stepscope ({own_error}); install stepscope into this environment "
                       "(pip install, see stepscope's README)")
        return None
    _stepscope_forget_partial_import()
    sys.path.append(fallback)
    try:
        import stepscope._autostart as autostart
        return autostart
    except ImportError as error:
        sys.path.remove(fallback)
        _stepscope_forget_partial_import()
        _stepscope_off(f"stepscope is not installed in this environment and the launcher's copy does not "
                       f"load here ({error}); install stepscope into this environment "
                       "(pip install, see stepscope's README)")
        return None


def _stepscope_autostart():
    try:
        autostart = _stepscope_import_autostart()
    except Exception as error:
        _stepscope_off(f"cannot import stepscope ({type(error).__name__}: {error})")
        return
    if autostart is not None:
        autostart.main()


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

bool HasPackage(const std::string& parent) {
  struct stat info;
  return stat((parent + "/stepscope/__init__.py").c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

std::string FindOwnPythonPackageParent() {
  char executable[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
  if (length <= 0) return "";
  const std::string cli_dir = ParentOf(std::string(executable, static_cast<size_t>(length)));
  for (const char* relative : {STEPSCOPE_PYTHON_PACKAGE_FROM_CLI, STEPSCOPE_PYTHON_PACKAGE_FROM_BUILD_CLI}) {
    if (relative[0] == '\0') continue;
    std::string candidate = cli_dir + "/" + relative;
    char resolved[PATH_MAX];
    if (realpath(candidate.c_str(), resolved) != nullptr && HasPackage(resolved)) return resolved;
  }
  return "";
}

StatusOr<std::string> WritePythonStartup(const std::string& node_dir, const std::string& own_package_parent) {
  std::string directory = node_dir + "/.python-startup";
  STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(directory));
  STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(directory + "/sitecustomize.py", kSiteCustomize));
  if (!own_package_parent.empty()) {
    STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(directory + "/fallback"));
    const std::string link = directory + "/fallback/stepscope";
    const std::string target = own_package_parent + "/stepscope";
    if (symlink(target.c_str(), link.c_str()) != 0 && errno != EEXIST) {
      return ErrnoError("link '" + link + "' to '" + target + "'", errno);
    }
  }
  return directory;
}

std::string ChildPythonPath(const std::string& startup_dir, const char* current_python_path) {
  if (current_python_path == nullptr || current_python_path[0] == '\0') return startup_dir;
  return startup_dir + ":" + current_python_path;
}

}  // namespace stepscope::launcher
