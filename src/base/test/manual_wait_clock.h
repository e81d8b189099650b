// A WaitClock for tests (base/wait_clock.h): time stands still until the test calls AdvanceNs(),
// and the test can wait until the thread under test sleeps until a given deadline. A periodic
// thread is then driven one explicit step at a time:
//
//   ManualWaitClock clock;
//   SystemSampler sampler(&sink, kIntervalNs, {}, &clock);
//   sampler.Start();                                   // polls at 0, then sleeps until kIntervalNs
//   ASSERT_TRUE(clock.AwaitSleeperUntil(kIntervalNs));
//   clock.AdvanceNs(kIntervalNs);                      // the second poll, then a sleep until 2 x
//
// Nothing in it measures real time except kPatience, the bound after which a broken class under
// test fails AwaitSleeperUntil() instead of hanging the test.
//
// Threading: every function may be called from any thread. A sleeper is woken under its own
// mutex, so an AdvanceNs() racing with a thread about to sleep is never lost.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <vector>

#include "base/wait_clock.h"

namespace stepscope {

class ManualWaitClock final : public WaitClock {
 public:
  static constexpr std::chrono::seconds kPatience{30};
  // 2023-11-14T22:13:20Z: any fixed Unix time does; tests may move it with SetRealtimeNs().
  static constexpr int64_t kDefaultRealtimeNs = 1'700'000'000'000'000'000;

  explicit ManualWaitClock(int64_t monotonic_ns = 0) : monotonic_ns_(monotonic_ns) {}

  int64_t MonotonicNs() override { return monotonic_ns_.load(); }
  // Moves with MonotonicNs(): AdvanceNs() moves both.
  int64_t RealtimeNs() override { return monotonic_ns_.load() + realtime_offset_ns_.load(); }

  // Sets the Unix time (for now; it keeps advancing with AdvanceNs()).
  void SetRealtimeNs(int64_t realtime_ns) { realtime_offset_ns_.store(realtime_ns - monotonic_ns_.load()); }

  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, int64_t deadline_ns,
                 const std::function<bool()>& done) override {
    std::list<Sleeper>::iterator me;
    {
      std::lock_guard<std::mutex> state(state_mutex_);
      me = sleepers_.insert(sleepers_.end(), Sleeper{lock.mutex(), &cv, deadline_ns});
    }
    sleepers_changed_.notify_all();
    // The caller's mutex is held while MonotonicNs() is compared, and AdvanceNs() notifies
    // under that mutex: an advance either is seen here or finds this thread waiting.
    while (!done() && MonotonicNs() < deadline_ns) cv.wait(lock);
    {
      std::lock_guard<std::mutex> state(state_mutex_);
      sleepers_.erase(me);
    }
    sleepers_changed_.notify_all();
    return done();
  }

  // Moves both clocks forward by `ns` and wakes every sleeper (each checks its own deadline).
  void AdvanceNs(int64_t ns) {
    std::vector<Sleeper> to_wake;
    {
      std::lock_guard<std::mutex> state(state_mutex_);
      monotonic_ns_.fetch_add(ns);
      to_wake.assign(sleepers_.begin(), sleepers_.end());
    }
    // Not under state_mutex_: a sleeper takes its own mutex first and state_mutex_ second.
    for (const Sleeper& sleeper : to_wake) {
      std::lock_guard<std::mutex> guard(*sleeper.mutex);
      sleeper.cv->notify_all();
    }
  }

  // True once a thread sleeps in WaitUntil() with exactly this deadline; false after kPatience.
  bool AwaitSleeperUntil(int64_t deadline_ns) {
    std::unique_lock<std::mutex> state(state_mutex_);
    return sleepers_changed_.wait_for(state, kPatience, [&] {
      return std::any_of(sleepers_.begin(), sleepers_.end(),
                         [&](const Sleeper& sleeper) { return sleeper.deadline_ns == deadline_ns; });
    });
  }

 private:
  struct Sleeper {
    std::mutex* mutex;
    std::condition_variable* cv;
    int64_t deadline_ns;
  };

  std::atomic<int64_t> monotonic_ns_;
  std::atomic<int64_t> realtime_offset_ns_{kDefaultRealtimeNs};
  std::mutex state_mutex_;
  std::condition_variable sleepers_changed_;
  std::list<Sleeper> sleepers_;  // guarded by state_mutex_
};

}  // namespace stepscope
