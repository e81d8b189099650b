// The server-sent events of the dashboard (GET /api/events, docs/dashboard.md): the follower
// publishes "run" when a loaded live run grew and "runs" when the listing changed; each open
// event stream waits here for what came after the last event it sent. A bounded backlog: a
// stream that falls more than kBacklog events behind skips to the newest (the page refetches
// on any event, so nothing is lost but redundant redraws).
//
// Threading: Publish from any thread; any number of streams wait concurrently; Close() wakes
// them all for shutdown.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stepscope::server {

struct ServerEvent {
  uint64_t sequence = 0;  // 1, 2, ...: the SSE id
  std::string name;       // "run", "runs"
  nlohmann::json data;
};

// "id: N\nevent: NAME\ndata: JSON\n\n" (the JSON has no newlines).
std::string FormatServerEvent(const ServerEvent& event);

class EventHub {
 public:
  static constexpr size_t kBacklog = 256;

  void Publish(std::string name, nlohmann::json data);
  // The sequence of the newest event: a new stream sends only what comes after it.
  uint64_t Newest() const;
  // The events after `after`, waiting up to `timeout` for one; empty on timeout or once closed.
  std::vector<ServerEvent> WaitAfter(uint64_t after, std::chrono::milliseconds timeout);
  void Close();
  bool closed() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<ServerEvent> backlog_;
  uint64_t newest_ = 0;
  bool closed_ = false;
};

}  // namespace stepscope::server
