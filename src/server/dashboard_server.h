// `stepscope serve`'s HTTP server: the dashboard page and its JSON API over the runs under a
// root (docs/dashboard.md lists every route and the security model). cpp-httplib stays inside
// dashboard_server.cc; this header shows none of it.
//
// What it reads: the listing (run_catalog.h, manifests only), loaded models (loaded_runs.h,
// followed by a thread that refreshes them about every 500 ms and publishes events,
// event_hub.h), the report model (report/run_report.h, the code `stepscope report --json` runs)
// and the views of run_views.h. What it changes: loaded runs, and a running job's plan through
// the RunControl the caller passes (the CLI's ctl code), never anything else on disk.
//
// Threading: Bind and Serve on one thread; Serve blocks until Stop(), which any thread (a
// signal-waiting one) may call. Requests run on the library's thread pool.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "server/run_catalog.h"

namespace stepscope::server {

// The body of POST /api/runs/{id}/ctl: `stepscope ctl`'s flags; "" leaves a setting unchanged.
struct ControlChange {
  std::string node;
  std::string interval;
  std::string detailed_steps;
  std::string python_steps;
  std::string dataloader_steps;
  std::string gpu_steps;
};

// Applies `change` to the run in `run_directory` as `stepscope ctl` does and answers what it
// wrote. Errors map to HTTP statuses: InvalidArgument 400, NotFound 404, Unavailable 409 (the
// job is not running).
using RunControl = std::function<StatusOr<nlohmann::json>(const std::string& run_directory, const ControlChange& change)>;

struct ServerOptions {
  ServeRoot root;
  std::string host = "127.0.0.1";
  int port = 8421;                 // 0: any free port (port() says which)
  std::string token;               // "": none required (only allowed on a loopback host)
  std::string generated_by;        // the report's "generated_by", "stepscope 0.1.0"
  RunControl control;              // null: ctl answers 501
  std::chrono::milliseconds follow_period{500};
};

class DashboardServer {
 public:
  explicit DashboardServer(ServerOptions options);
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  // Listens on host:port. Errors are one line naming the address and the next step: a host that
  // is not an address of this machine, a port in use or not allowed, a non-loopback host without
  // a token.
  Status Bind();
  int port() const;
  // http://host:port/ (with ?token=... when one is required): what to open.
  std::string Url() const;
  // Serves until Stop(); starts and ends the follower thread.
  Status Serve();
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The HTTP status for an error Status of the API (docs/dashboard.md "Errors").
int HttpStatusFor(const Status& status);

}  // namespace stepscope::server
