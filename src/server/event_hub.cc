#include "server/event_hub.h"

namespace stepscope::server {

std::string FormatServerEvent(const ServerEvent& event) {
  return "id: " + std::to_string(event.sequence) + "\nevent: " + event.name + "\ndata: " +
         event.data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

void EventHub::Publish(std::string name, nlohmann::json data) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    backlog_.push_back(ServerEvent{++newest_, std::move(name), std::move(data)});
    if (backlog_.size() > kBacklog) backlog_.pop_front();
  }
  changed_.notify_all();
}

uint64_t EventHub::Newest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return newest_;
}

std::vector<ServerEvent> EventHub::WaitAfter(uint64_t after, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return closed_ || newest_ > after; });
  std::vector<ServerEvent> events;
  if (closed_) return events;
  for (const ServerEvent& event : backlog_) {
    if (event.sequence > after) events.push_back(event);
  }
  return events;
}

void EventHub::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

bool EventHub::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

}  // namespace stepscope::server
