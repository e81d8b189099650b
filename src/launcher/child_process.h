// Starts the profiled command as a child, forwards termination signals to it, and reports how
// it ended. Callers: the run command. Threading: main thread only (installs signal handlers).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace stepscope::launcher {

struct ChildExit {
  bool signaled = false;
  int exit_code = 0;     // when !signaled
  int signal = 0;        // when signaled
  bool core_dumped = false;
  // The launcher's exit code for this ending: the child's code, or 128 + signal.
  int LauncherExitCode() const { return signaled ? 128 + signal : exit_code; }
  std::string Describe() const;  // "exited with code 0", "killed by SIGKILL"
};

class ChildProcess {
 public:
  // fork + execvp of `argv` with `extra_environment` ("NAME=value") added to ours. A command
  // that cannot be executed (not found, not executable) is reported here, not as exit 127.
  static StatusOr<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                      const std::vector<std::string>& extra_environment);

  pid_t pid() const { return pid_; }

  // Points the handlers installed by InstallSignalForwarding() at this child and delivers a
  // signal that arrived while it was being started.
  void ForwardTerminationSignals();

  // Waits for the child to end.
  ChildExit Wait();

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
};

// Call before Spawn: from then until Wait() returns, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
// the launcher are passed on to the child (or held until it exists), and the launcher keeps
// running to finish the run. A SIGINT or SIGQUIT typed at the terminal already reached the
// child (same process group) and is not sent twice.
void InstallSignalForwarding();

// "SIGKILL" for 9, "signal 42" when unnamed.
std::string SignalName(int signal);

}  // namespace stepscope::launcher
