#include "launcher/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace stepscope::launcher {
namespace {

volatile sig_atomic_t g_forward_to_pid = 0;
volatile sig_atomic_t g_pending_signal = 0;  // arrived before the child's pid was known

void ForwardSignal(int signal, siginfo_t* info, void*) {
  // Terminal-generated signals (si_code SI_KERNEL) already went to the whole foreground
  // process group, the child included.
  if ((signal == SIGINT || signal == SIGQUIT) && info != nullptr && info->si_code == SI_KERNEL) return;
  pid_t pid = g_forward_to_pid;
  if (pid > 0) {
    kill(pid, signal);
  } else {
    g_pending_signal = signal;
  }
}

}  // namespace

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev != nullptr) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signal);
}

std::string ChildExit::Describe() const {
  if (signaled) return "killed by " + SignalName(signal) + (core_dumped ? " (core dumped)" : "");
  return "exited with code " + std::to_string(exit_code);
}

StatusOr<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                           const std::vector<std::string>& extra_environment) {
  if (argv.empty()) return InvalidArgumentError("no command given; use `stepscope run [options] -- CMD ARGS...`");
  // The child reports an exec failure's errno through this close-on-exec pipe; a successful
  // exec closes it and the parent reads EOF.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return ErrnoError("create a pipe", errno);

  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text(*entry);
    bool overridden = false;
    for (const std::string& extra : extra_environment) {
      size_t eq = extra.find('=');
      if (text.compare(0, eq + 1, extra, 0, eq + 1) == 0) overridden = true;
    }
    if (!overridden) environment.push_back(std::move(text));
  }
  environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
  std::vector<char*> c_argv, c_env;
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  for (const std::string& var : environment) c_env.push_back(const_cast<char*>(var.c_str()));
  c_env.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(report[0]);
    close(report[1]);
    return ErrnoError("fork", err);
  }
  if (pid == 0) {
    close(report[0]);
    // Restore default dispositions the launcher may have changed.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_DFL);
    execvpe(c_argv[0], c_argv.data(), c_env.data());
    int err = errno;
    ssize_t ignored = write(report[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == sizeof child_errno) {
    waitpid(pid, nullptr, 0);
    return InvalidArgumentError("cannot run '" + argv[0] + "': " + std::strerror(child_errno) +
                                "; check the command after `--` (is it on PATH?)");
  }
  return ChildProcess(pid);
}

void InstallSignalForwarding() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = ForwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &action, nullptr);
}

void ChildProcess::ForwardTerminationSignals() {
  g_forward_to_pid = pid_;
  int pending = g_pending_signal;
  if (pending != 0) {
    g_pending_signal = 0;
    kill(pid_, pending);
  }
}

ChildExit ChildProcess::Wait() {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) break;
  }
  g_forward_to_pid = 0;
  ChildExit result;
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.signal = WTERMSIG(status);
    result.core_dumped = WCOREDUMP(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace stepscope::launcher
