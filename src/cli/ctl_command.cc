#include "cli/ctl_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>

#include "base/clock.h"
#include "base/duration.h"
#include "base/file_system.h"
#include "launcher/run_config.h"
#include "store/run_directory.h"
#include "store/run_manifest.h"

namespace stepscope::cli {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailed = 1;
constexpr const char* kRunHint = "pass the directory that `stepscope run` printed";

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string BaseName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

StatusOr<launcher::ControlRequest> BuildControlRequest(const CtlInvocation& invocation) {
  launcher::ControlRequest request;
  if (!invocation.interval.empty()) {
    launcher::RunConfig scratch;  // reuses the run's range check and message
    STEPSCOPE_RETURN_IF_ERROR(launcher::SetRunConfigValue(scratch, "interval", invocation.interval,
                                                          launcher::ConfigSource::kFlag, "--interval"));
    request.interval_ns = scratch.interval_ns;
  }
  struct StepsFlag {
    const std::string* text;
    launcher::DetailKind kind;
    const char* key;  // the run config's key, which names the flag
  };
  const StepsFlag steps[] = {
      {&invocation.detailed_steps, launcher::DetailKind::kOperators, "detailed_steps"},
      {&invocation.python_steps, launcher::DetailKind::kPython, "python_steps"},
      {&invocation.dataloader_steps, launcher::DetailKind::kDataloader, "dataloader_steps"},
      {&invocation.gpu_steps, launcher::DetailKind::kGpu, "gpu_steps"},
  };
  for (const auto& [text, kind, key] : steps) {
    if (text->empty()) continue;
    const std::string flag = launcher::FlagForKey(key);
    STEPSCOPE_ASSIGN_OR_RETURN(launcher::DetailWindow window, launcher::ParseStepWindow(kind, *text, flag));
    request.detail.push_back(launcher::NormalizeDetailWindow(window));
  }
  if (!request.interval_ns && request.detail.empty()) {
    return InvalidArgumentError("nothing to change; pass --interval, --detailed-steps, --python-steps, "
                                "--dataloader-steps or --gpu-steps (see `stepscope ctl --help`)");
  }
  return request;
}

StatusOr<std::vector<std::string>> FindControlTargets(const std::string& run, const std::string& node) {
  if (!IsDirectory(run)) return NotFoundError("run directory '" + run + "' does not exist; " + kRunHint);
  if (IsFile(run + "/manifest.json")) {  // a node directory
    if (!node.empty() && node != BaseName(run)) {
      return NotFoundError("'" + run + "' is the directory of node '" + BaseName(run) + "', not of node '" + node +
                           "'; pass the job directory with --node, or the node's directory alone");
    }
    return std::vector<std::string>{run};
  }
  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDirectory(run));
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> nodes;
  std::string names;
  for (const std::string& entry : entries) {
    if (!IsFile(run + "/" + entry + "/manifest.json")) continue;
    names += (names.empty() ? "" : ", ") + entry;
    if (node.empty() || node == entry) nodes.push_back(run + "/" + entry);
  }
  if (names.empty()) {
    return NotFoundError("'" + run + "' is not a run directory: no manifest.json in it or in its node directories; " +
                         kRunHint);
  }
  if (nodes.empty()) return NotFoundError("run '" + run + "' has no node '" + node + "'; its nodes: " + names);
  return nodes;
}

std::string WhyNotRunning(const std::string& node_dir) {
  auto manifest = store::ReadRunManifest(node_dir);
  if (!manifest.ok()) return "its manifest cannot be read (" + manifest.status().message() + ")";
  const store::ManifestStatus status = manifest->status;
  // "starting": the launcher is about to start the job and its watcher will read the file.
  if (status != store::ManifestStatus::kRunning && status != store::ManifestStatus::kStarting) {
    return "the job already ended (" +
           (manifest->ended.empty() ? std::string(store::ManifestStatusName(status)) : manifest->ended) + ")";
  }
  // A launcher killed with SIGKILL leaves "running" behind; when it ran on this host, ask the
  // kernel. On another host (a shared run directory) its pid means nothing here.
  const int launcher = manifest->launcher_pid;
  if (launcher > 0 && !manifest->hosts.empty() && manifest->hosts[0] == HostName() &&
      kill(static_cast<pid_t>(launcher), 0) != 0 && errno == ESRCH) {
    return "its launcher (pid " + std::to_string(launcher) + ") is gone, so the run ended without finishing";
  }
  return "";
}

StatusOr<ControlOutcome> ApplyControl(const CtlInvocation& invocation, const launcher::ControlRequest& request) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> targets, FindControlTargets(invocation.run, invocation.node));
  ControlOutcome outcome;
  std::vector<std::string> running;
  for (const std::string& node_dir : targets) {
    const std::string why = WhyNotRunning(node_dir);
    if (why.empty()) {
      running.push_back(node_dir);
    } else if (targets.size() > 1) {
      outcome.skipped.emplace_back(BaseName(node_dir), why);
    } else {
      return UnavailableError("node '" + BaseName(node_dir) + "' of run '" + invocation.run + "': " + why +
                              "; live changes apply to running jobs only");
    }
  }
  if (running.empty()) {
    return UnavailableError("every node of run '" + invocation.run + "' has ended; live changes apply to running jobs only");
  }
  const int64_t now_ns = static_cast<int64_t>(RealtimeNowNs());
  for (const std::string& node_dir : running) {
    auto sequence = launcher::WriteControlFile(node_dir, request, now_ns);
    if (!sequence.ok()) return IoError(sequence.status().message() + "; check that the run directory is writable");
    outcome.written.push_back({BaseName(node_dir), node_dir, *sequence});
  }
  return outcome;
}

int CtlCommand(const CtlInvocation& invocation) {
  auto fail = [](const std::string& message, int code) {
    std::fprintf(stderr, "stepscope ctl: %s\n", message.c_str());
    return code;
  };
  auto request = BuildControlRequest(invocation);
  if (!request.ok()) return fail(request.status().message(), kExitUsage);
  auto outcome = ApplyControl(invocation, *request);
  if (!outcome.ok()) return fail(outcome.status().message(), kExitFailed);
  for (const auto& [node, why] : outcome->skipped) {
    std::fprintf(stderr, "stepscope ctl: skipping node '%s': %s\n", node.c_str(), why.c_str());
  }
  for (const ControlOutcome::Written& written : outcome->written) {
    std::printf("node %s: scheduled control %lld (%s/control/%lld.json)\n", written.node.c_str(),
                static_cast<long long>(written.sequence), written.node_dir.c_str(),
                static_cast<long long>(written.sequence));
    if (request->interval_ns) {
      std::printf("  system sampling interval %s: the launcher applies it within about a second\n",
                  FormatDurationNs(*request->interval_ns).c_str());
    }
    for (const launcher::DetailWindow& window : request->detail) {
      std::printf("  %s: replaces the pending %s window; the job's processes apply it at their next step\n",
                  launcher::DescribeDetailWindow(window).c_str(), launcher::DetailKindName(window.kind));
    }
  }
  return 0;
}

}  // namespace stepscope::cli
