#include "child_measure.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace stepscope::benchmarks {
namespace {

double WallNow() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Waits for `pid` and fills the outcome's time and peak RSS; returns the wait status.
int Reap(pid_t pid, double start, ChildOutcome& outcome) {
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  outcome.wall_s = WallNow() - start;
  outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return status;
}

}  // namespace

ChildOutcome ForkAndMeasure(const std::function<void(void* out)>& work, void* out, size_t bytes) {
  ChildOutcome outcome;
  int fds[2];
  if (pipe(fds) != 0) {
    outcome.error = "pipe failed";
    return outcome;
  }
  const double start = WallNow();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    work(out);
    const char* data = static_cast<const char*>(out);
    for (size_t sent = 0; sent < bytes;) {
      const ssize_t n = write(fds[1], data + sent, bytes - sent);
      if (n <= 0) _exit(1);
      sent += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    outcome.error = "fork failed";
    return outcome;
  }
  size_t received = 0;
  for (ssize_t n; received < bytes && (n = read(fds[0], static_cast<char*>(out) + received, bytes - received)) > 0;) {
    received += static_cast<size_t>(n);
  }
  close(fds[0]);
  Reap(pid, start, outcome);
  outcome.ok = received == bytes;
  if (!outcome.ok) outcome.error = "the measuring child died (out of memory?)";
  return outcome;
}

ChildOutcome ExecAndMeasure(const std::vector<std::string>& argv) {
  ChildOutcome outcome;
  if (argv.empty()) {
    outcome.error = "nothing to execute";
    return outcome;
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const double start = WallNow();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  if (pid < 0) {
    outcome.error = "fork failed";
    return outcome;
  }
  const int status = Reap(pid, start, outcome);
  outcome.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!outcome.ok) {
    outcome.error = argv[0] + (WIFEXITED(status) ? " exited with status " + std::to_string(WEXITSTATUS(status))
                                                 : " was killed by signal " + std::to_string(WTERMSIG(status)));
  }
  return outcome;
}

std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file(error)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace stepscope::benchmarks
