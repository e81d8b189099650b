#include "cli/serve_command.h"

#include <malloc.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "cli/ctl_command.h"
#include "server/dashboard_server.h"
#include "server/request_guard.h"

namespace stepscope::cli {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "stepscope serve: %s\n", message.c_str());
  return code;
}

// The Control page's POST /api/runs/{id}/ctl: exactly `stepscope ctl RUN_DIR --node ...`.
StatusOr<nlohmann::json> ControlRun(const std::string& run_directory, const server::ControlChange& change) {
  CtlInvocation invocation{run_directory,        change.node,          change.interval, change.detailed_steps,
                           change.python_steps,  change.dataloader_steps, change.gpu_steps};
  STEPSCOPE_ASSIGN_OR_RETURN(launcher::ControlRequest request, BuildControlRequest(invocation));
  STEPSCOPE_ASSIGN_OR_RETURN(ControlOutcome outcome, ApplyControl(invocation, request));
  nlohmann::json written = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const ControlOutcome::Written& node : outcome.written) {
    written.push_back({{"node", node.node}, {"sequence", node.sequence},
                       {"file", "control/" + std::to_string(node.sequence) + ".json"}});
  }
  for (const auto& [node, why] : outcome.skipped) skipped.push_back({{"node", node}, {"why", why}});
  return nlohmann::json{{"written", written}, {"skipped", skipped}};
}

}  // namespace

int ServeCommand(const ServeInvocation& invocation) {
#ifdef __GLIBC__
  // Request threads would each get a malloc arena of their own: a run loaded on one thread and
  // its report built on another keep their freed memory apart, and the server's peak grows past
  // what one `stepscope report` of the run needs (839 against 780 MiB on the 24 h synthetic run).
  // Two arenas keep requests from serialising on one lock.
  mallopt(M_ARENA_MAX, 2);
#endif
  if (invocation.port < 0 || invocation.port > 65535) {
    return Fail("--port must be 0 to 65535 (0: any free port), not " + std::to_string(invocation.port), kExitUsage);
  }
  server::ServerOptions options;
  options.host = invocation.host;
  options.port = invocation.port;
  options.generated_by = std::string("stepscope ") + STEPSCOPE_VERSION;
  options.control = ControlRun;
  options.token = invocation.token;
  if (!options.token.empty()) {
    if (Status valid = server::ValidateToken(options.token); !valid.ok()) return Fail(valid.message(), kExitUsage);
  } else if (!server::IsLoopbackHost(options.host)) {
    auto token = server::GenerateToken();
    if (!token.ok()) return Fail(token.status().message(), kExitFailed);
    options.token = *token;
  }
  auto root = server::ResolveServeRoot(invocation.root);
  if (!root.ok()) return Fail(root.status().message(), kExitFailed);
  options.root = *root;

  // SIGINT and SIGTERM are blocked in every thread (the server's threads inherit the mask) and
  // taken by one thread with sigwait, which stops the server: no work in a signal handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  server::DashboardServer dashboard(options);
  if (Status bound = dashboard.Bind(); !bound.ok()) return Fail(bound.message(), kExitFailed);
  std::printf("stepscope serve: %s %s\n", root->single_run ? "serving the run" : "serving the runs under",
              root->root.c_str());
  std::printf("open %s\n", dashboard.Url().c_str());
  if (!options.token.empty()) std::printf("token: %s (required on every request)\n", options.token.c_str());
  std::printf("press Ctrl-C to stop\n");
  std::fflush(stdout);

  std::atomic<bool> serving{true};
  std::thread waiter([&] {
    // Wakes now and then to end with the server when serving stopped without a signal.
    const timespec tick{0, 200'000'000};
    while (serving) {
      if (sigtimedwait(&signals, nullptr, &tick) > 0) {
        dashboard.Stop();
        return;
      }
    }
  });
  const Status served = dashboard.Serve();
  serving = false;
  waiter.join();
  if (!served.ok()) return Fail(served.message(), kExitFailed);
  std::printf("stepscope serve: stopped\n");
  return 0;
}

}  // namespace stepscope::cli
