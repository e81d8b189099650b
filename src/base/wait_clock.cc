#include "base/wait_clock.h"

#include <chrono>

#include "base/clock.h"

namespace stepscope {
namespace {

// steady_clock is CLOCK_MONOTONIC in libstdc++ on Linux, so its time since epoch is the same
// number MonotonicNowNs() reads, and wait_until() on it sleeps against that clock.
class SystemClock final : public WaitClock {
 public:
  int64_t MonotonicNs() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t RealtimeNs() override { return static_cast<int64_t>(RealtimeNowNs()); }
  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, int64_t deadline_ns,
                 const std::function<bool()>& done) override {
    const std::chrono::steady_clock::time_point deadline{std::chrono::nanoseconds(deadline_ns)};
    return cv.wait_until(lock, deadline, done);
  }
};

}  // namespace

WaitClock& SystemWaitClock() {
  // Leaked on purpose: a thread still sleeping on it at exit must not find it destroyed.
  static SystemClock* clock = new SystemClock;
  return *clock;
}

}  // namespace stepscope
