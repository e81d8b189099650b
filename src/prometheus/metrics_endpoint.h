// The HTTP endpoint Prometheus scrapes (`stepscope run --metrics-port PORT`): GET /metrics
// answers the exposition's latest text; anything else is 404. It binds 127.0.0.1 unless told
// another address (--metrics-host): the metrics are read-only, but what a job runs is its
// owner's business.
//
// Callers: the run command, for the job's life. Threading: its own listening thread and a small
// pool for requests; Start/Stop from one thread.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "prometheus/exposition.h"

namespace httplib {
class Server;
}

namespace stepscope::prometheus {

class MetricsEndpoint {
 public:
  explicit MetricsEndpoint(const Exposition* exposition);  // not owned; outlives this
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Binds host:port (port 0: any free one) and serves in the background; errors say what to do.
  Status Start(const std::string& host, int port);
  void Stop();
  int port() const { return port_; }

 private:
  const Exposition* exposition_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace stepscope::prometheus
