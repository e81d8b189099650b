// The clock a background thread reads and sleeps on: the system sampler's poll grid, the control
// watcher's and the online rules' periods. Production code uses SystemWaitClock()
// (CLOCK_MONOTONIC and CLOCK_REALTIME, sleeping in std::condition_variable::wait_until); tests
// pass a base/test/manual_wait_clock.h instead, whose time only moves when the test says so, so
// that a schedule is checked step by step instead of by how fast a loaded machine runs it.
//
// This clock only decides *when* a thread wakes. Timestamps that are recorded (samples, events)
// still come from base/clock.h, so they stay on the recorder's tick clock.
//
// Threading: every function may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace stepscope {

class WaitClock {
 public:
  virtual ~WaitClock() = default;

  // CLOCK_MONOTONIC nanoseconds: the time line of WaitUntil()'s deadlines.
  virtual int64_t MonotonicNs() = 0;
  // Unix-epoch nanoseconds (CLOCK_REALTIME), for times compared with file times or shown.
  virtual int64_t RealtimeNs() = 0;

  // Blocks on `cv` until `done()` holds or MonotonicNs() reaches `deadline_ns`, and returns
  // done(), like std::condition_variable::wait_until with a predicate. `lock` must hold the
  // mutex that guards what `done` reads and that the notifier of `cv` takes; it is held again
  // on return. A deadline already passed returns at once.
  virtual bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, int64_t deadline_ns,
                         const std::function<bool()>& done) = 0;
};

// The real clocks; one object for the whole process, never destroyed.
WaitClock& SystemWaitClock();

}  // namespace stepscope
