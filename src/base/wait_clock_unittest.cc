#include "base/wait_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "base/clock.h"
#include "base/test/manual_wait_clock.h"

namespace stepscope {
namespace {

constexpr int64_t kHourNs = 3600ll * 1'000'000'000;
// Only a bound for a broken clock to fail instead of hanging; nothing asserts timings.
constexpr auto kPatience = std::chrono::seconds(30);

TEST(SystemWaitClock, ReadsCLOCK_MONOTONIC) {
  WaitClock& clock = SystemWaitClock();
  const uint64_t before = MonotonicNowNs();
  const int64_t now = clock.MonotonicNs();
  const uint64_t after = MonotonicNowNs();
  EXPECT_LE(before, static_cast<uint64_t>(now));
  EXPECT_LE(static_cast<uint64_t>(now), after);
}

TEST(SystemWaitClock, APassedDeadlineReturnsAtOnceWithThePredicate) {
  WaitClock& clock = SystemWaitClock();
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mutex);
  const int64_t passed = clock.MonotonicNs() - 1;
  EXPECT_FALSE(clock.WaitUntil(lock, cv, passed, [] { return false; }));
  EXPECT_TRUE(clock.WaitUntil(lock, cv, passed, [] { return true; }));
  EXPECT_TRUE(lock.owns_lock());
}

TEST(SystemWaitClock, ANotifiedPredicateEndsAWaitLongBeforeItsDeadline) {
  WaitClock& clock = SystemWaitClock();
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::future<bool> waited = std::async(std::launch::async, [&] {
    std::unique_lock<std::mutex> lock(mutex);
    return clock.WaitUntil(lock, cv, clock.MonotonicNs() + kHourNs, [&] { return done; });
  });
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  cv.notify_all();
  ASSERT_EQ(waited.wait_for(kPatience), std::future_status::ready);
  EXPECT_TRUE(waited.get());
}

TEST(ManualWaitClock, ASleeperWakesWhenTimeReachesItsDeadlineAndNotBefore) {
  ManualWaitClock clock(1000);
  std::mutex mutex;
  std::condition_variable cv;
  std::future<bool> waited = std::async(std::launch::async, [&] {
    std::unique_lock<std::mutex> lock(mutex);
    return clock.WaitUntil(lock, cv, 1100, [] { return false; });
  });
  ASSERT_TRUE(clock.AwaitSleeperUntil(1100));
  clock.AdvanceNs(99);
  // Woken by the advance, it went back to sleep: still registered with its deadline.
  ASSERT_TRUE(clock.AwaitSleeperUntil(1100));
  EXPECT_NE(waited.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  clock.AdvanceNs(1);
  ASSERT_EQ(waited.wait_for(kPatience), std::future_status::ready);
  EXPECT_FALSE(waited.get());
  EXPECT_EQ(clock.MonotonicNs(), 1100);
}

TEST(ManualWaitClock, RealtimeMovesWithMonotonicTime) {
  ManualWaitClock clock(5);
  EXPECT_EQ(clock.RealtimeNs(), ManualWaitClock::kDefaultRealtimeNs + 5);
  clock.SetRealtimeNs(2'000'000'000);
  clock.AdvanceNs(10);
  EXPECT_EQ(clock.RealtimeNs(), 2'000'000'010);
  EXPECT_EQ(clock.MonotonicNs(), 15);
}

}  // namespace
}  // namespace stepscope
