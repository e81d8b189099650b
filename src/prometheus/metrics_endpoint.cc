#include "prometheus/metrics_endpoint.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace stepscope::prometheus {
namespace {

// Scrapes only copy a published string: a few threads serve many scrapers.
constexpr int kRequestThreads = 4;

}  // namespace

MetricsEndpoint::MetricsEndpoint(const Exposition* exposition) : exposition_(exposition) {}

MetricsEndpoint::~MetricsEndpoint() { Stop(); }

Status MetricsEndpoint::Start(const std::string& host, int port) {
  server_ = std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(kRequestThreads); };
  // One request per connection: Prometheus opens one per scrape, and a kept-alive connection
  // would hold one of the few threads idle while other scrapers wait.
  server_->set_keep_alive_max_count(1);
  server_->set_read_timeout(5, 0);
  server_->set_write_timeout(5, 0);
  // cpp-httplib's default also sets SO_REUSEPORT, with which a second launcher on the same port
  // would bind too and the kernel would split the scrapes between two jobs: address reuse only.
  int listening = -1;
  server_->set_socket_options([&listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
    listening = sock;
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(exposition_->Text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("stepscope metrics: GET /metrics\n", "text/plain; charset=utf-8");
  });
  errno = 0;
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else if (server_->bind_to_port(host, port)) {
    port_ = port;
  }
  if (port_ <= 0) {
    const std::string why = errno != 0 ? std::strerror(errno) : "refused";
    server_.reset();
    return IoError("cannot serve metrics on " + host + ":" + std::to_string(port) + " (" + why +
                   "); pass another --metrics-port, or 0 for any free one");
  }
  // cpp-httplib listens with a backlog of 5: many scrapers at once would see their connections
  // dropped and retried seconds later. Listening again only raises the backlog.
  if (listening >= 0) ::listen(listening, SOMAXCONN);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the thread is listening would be lost and leave it listening for ever: Stop()
  // may come right after Start() (a job that ends at once), so wait until it listens.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return OkStatus();
}

void MetricsEndpoint::Stop() {
  if (server_ == nullptr) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace stepscope::prometheus
