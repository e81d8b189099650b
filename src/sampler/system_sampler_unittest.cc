#include "sampler/system_sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/test/manual_wait_clock.h"

namespace stepscope {
namespace {

constexpr int64_t kFastNs = SystemSampler::kMinIntervalNs;
constexpr int64_t kHourNs = 3600ll * 1'000'000'000;
// Only a bound for a broken sampler to fail instead of hanging; nothing asserts timings: the
// sampler's grid runs on a ManualWaitClock, which moves only when a test advances it.
constexpr auto kPatience = ManualWaitClock::kPatience;

// Records what the sampler delivers and lets the test wait for a number of polls.
class RecordingSink : public SampleSink {
 public:
  struct Write {
    uint64_t ticks;
    std::vector<MetricSample> samples;
  };

  void WriteSamples(uint64_t ticks, const std::vector<MetricSample>& samples) override {
    std::lock_guard<std::mutex> lock(mutex_);
    writes_.push_back({ticks, samples});
    changed_.notify_all();
  }

  // True once at least `count` writes arrived.
  bool AwaitWrites(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kPatience, [&] { return writes_.size() >= count; });
  }

  std::vector<Write> writes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return writes_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Write> writes_;
};

// Emits "<name>/poll" = its poll number (0, 1, ...) and "<name>/monotonic_ns"; fails on the
// polls where `fail` says so, after appending its samples.
class CountingSource : public MetricSource {
 public:
  explicit CountingSource(std::string name, std::function<bool(int)> fail = {})
      : name_(std::move(name)), fail_(std::move(fail)) {}

  std::string_view name() const override { return name_; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override {
    int poll = polls_++;
    out.push_back({name_ + "/poll", static_cast<double>(poll)});
    out.push_back({name_ + "/monotonic_ns", static_cast<double>(monotonic_ns)});
    if (fail_ && fail_(poll)) {
      return DataLossError(name_ + " failed at poll " + std::to_string(poll));
    }
    return OkStatus();
  }

 private:
  std::string name_;
  std::function<bool(int)> fail_;
  int polls_ = 0;
};

// Lets the sampler make `polls` more polls, one interval apart: each time it sleeps until its
// next deadline, time is moved there. Returns that next deadline.
int64_t StepThroughPolls(ManualWaitClock& clock, int64_t interval_ns, int polls) {
  int64_t deadline_ns = clock.MonotonicNs() + interval_ns;
  for (int i = 0; i < polls; ++i) {
    EXPECT_TRUE(clock.AwaitSleeperUntil(deadline_ns)) << "poll " << i;
    clock.AdvanceNs(deadline_ns - clock.MonotonicNs());
    deadline_ns += interval_ns;
  }
  return deadline_ns;
}

TEST(SystemSampler, DeliversPollsInOrderWithOneTimestampPerPoll) {
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kFastNs, {}, &clock);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  sampler.AddSource(std::make_unique<CountingSource>("b"));
  ASSERT_TRUE(sampler.Start().ok());
  // The first poll at once, then four more on the grid.
  const int64_t next_ns = StepThroughPolls(clock, kFastNs, 4);
  ASSERT_TRUE(clock.AwaitSleeperUntil(next_ns));
  sampler.Stop();

  std::vector<RecordingSink::Write> writes = sink.writes();
  ASSERT_EQ(writes.size(), 5u);
  for (size_t i = 0; i < writes.size(); ++i) {
    const std::vector<MetricSample>& samples = writes[i].samples;
    ASSERT_EQ(samples.size(), 4u);
    EXPECT_EQ(samples[0].name, "a/poll");
    EXPECT_EQ(samples[0].value, static_cast<double>(i));
    EXPECT_EQ(samples[2].name, "b/poll");
    EXPECT_EQ(samples[2].value, static_cast<double>(i));
    // Both sources saw the same poll time.
    EXPECT_EQ(samples[1].value, samples[3].value);
    if (i > 0) {
      // Stamped with the recorder's clocks (base/clock.h), which go on between polls.
      EXPECT_GT(writes[i].ticks, writes[i - 1].ticks);
      EXPECT_GT(samples[1].value, writes[i - 1].samples[1].value);
    }
  }
  SamplerStats stats = sampler.Stats();
  EXPECT_EQ(stats.polls, 5u);
  EXPECT_EQ(stats.missed_polls, 0u);
  EXPECT_EQ(stats.samples_written, 20u);
  EXPECT_EQ(stats.source_errors, 0u);
  EXPECT_GT(stats.thread_cpu_ns, 0u);
}

TEST(SystemSampler, WaitsForEachDeadlineOfTheGrid) {
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kFastNs, {}, &clock);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(sink.AwaitWrites(1));
  ASSERT_TRUE(clock.AwaitSleeperUntil(kFastNs));
  // Short of the deadline: the sampler wakes, sees time has not come, and sleeps on.
  clock.AdvanceNs(kFastNs - 1);
  ASSERT_TRUE(clock.AwaitSleeperUntil(kFastNs));
  EXPECT_EQ(sink.writes().size(), 1u);
  clock.AdvanceNs(1);
  ASSERT_TRUE(clock.AwaitSleeperUntil(2 * kFastNs));
  sampler.Stop();
  EXPECT_EQ(sink.writes().size(), 2u);
  EXPECT_EQ(sampler.Stats().polls, 2u);
}

TEST(SystemSampler, APollThatOverrunsDeadlinesSkipsAndCountsThem) {
  // Its second poll takes 2.5 intervals (time moves while it polls), as a stalled disk would.
  class SlowSource : public MetricSource {
   public:
    explicit SlowSource(ManualWaitClock* clock) : clock_(clock) {}
    std::string_view name() const override { return "slow"; }
    Status Poll(uint64_t, std::vector<MetricSample>& out) override {
      if (polls_++ == 1) clock_->AdvanceNs(kFastNs * 5 / 2);
      out.push_back({"slow/poll", static_cast<double>(polls_)});
      return OkStatus();
    }

   private:
    ManualWaitClock* clock_;
    int polls_ = 0;
  };
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kFastNs, {}, &clock);
  sampler.AddSource(std::make_unique<SlowSource>(&clock));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(clock.AwaitSleeperUntil(kFastNs));
  clock.AdvanceNs(kFastNs);
  // The poll due at 1 ran until 3.5 intervals: the deadlines 2 and 3 passed meanwhile and are
  // skipped, not made up in a burst; the grid goes on at 4.
  ASSERT_TRUE(clock.AwaitSleeperUntil(4 * kFastNs));
  EXPECT_EQ(sampler.Stats().missed_polls, 2u);
  EXPECT_EQ(sampler.Stats().polls, 2u);
  clock.AdvanceNs(4 * kFastNs - clock.MonotonicNs());
  ASSERT_TRUE(clock.AwaitSleeperUntil(5 * kFastNs));
  sampler.Stop();
  EXPECT_EQ(sampler.Stats().polls, 3u);
  EXPECT_EQ(sampler.Stats().missed_polls, 2u);
}

TEST(SystemSampler, SetIntervalTakesEffectAtTheNextPoll) {
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kHourNs, {}, &clock);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  // The first poll runs at once; the next is an hour away.
  ASSERT_TRUE(clock.AwaitSleeperUntil(kHourNs));
  ASSERT_TRUE(sampler.SetInterval(kFastNs).ok());
  EXPECT_EQ(sampler.interval_ns(), kFastNs);
  // Woken by the change, the sampler now sleeps until the first poll's deadline + kFastNs.
  const int64_t next_ns = StepThroughPolls(clock, kFastNs, 5);
  ASSERT_TRUE(clock.AwaitSleeperUntil(next_ns));
  // Back to an hour: the next deadline is the last one + an hour.
  ASSERT_TRUE(sampler.SetInterval(kHourNs).ok());
  ASSERT_TRUE(clock.AwaitSleeperUntil(next_ns - kFastNs + kHourNs));
  sampler.Stop();

  std::vector<RecordingSink::Write> writes = sink.writes();
  ASSERT_EQ(writes.size(), 6u);
  for (size_t i = 0; i < writes.size(); ++i) {
    EXPECT_EQ(writes[i].samples[0].value, static_cast<double>(i));
  }
  EXPECT_EQ(sampler.Stats().polls, 6u);
  EXPECT_EQ(sampler.Stats().missed_polls, 0u);
}

TEST(SystemSampler, ANewIntervalWhoseFirstDeadlinePassedPollsAtOnce) {
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kHourNs, {}, &clock);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(clock.AwaitSleeperUntil(kHourNs));
  clock.AdvanceNs(10 * kFastNs);
  ASSERT_TRUE(clock.AwaitSleeperUntil(kHourNs));
  // The first poll + kFastNs passed long ago: poll now and put the new grid here, without
  // counting the deadlines the old interval never had as missed.
  ASSERT_TRUE(sampler.SetInterval(kFastNs).ok());
  ASSERT_TRUE(clock.AwaitSleeperUntil(11 * kFastNs));
  sampler.Stop();
  EXPECT_EQ(sink.writes().size(), 2u);
  EXPECT_EQ(sampler.Stats().missed_polls, 0u);
}

TEST(SystemSampler, StopReturnsWithoutWaitingForTheNextDeadline) {
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kHourNs, {}, &clock);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(clock.AwaitSleeperUntil(kHourNs));
  // Time never moves here: a loop that only woke at its deadline would never return.
  std::future<void> stopped = std::async(std::launch::async, [&] { sampler.Stop(); });
  ASSERT_EQ(stopped.wait_for(kPatience), std::future_status::ready);
  EXPECT_EQ(sink.writes().size(), 1u);
  EXPECT_EQ(sampler.Stats().polls, 1u);
}

TEST(SystemSampler, ReportsASourceErrorOnceAndKeepsPollingIt) {
  RecordingSink sink;
  ManualWaitClock clock;
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> reported;
  SystemSampler sampler(
      &sink, kFastNs,
      [&](std::string_view source, const Status& status) {
        std::lock_guard<std::mutex> lock(mutex);
        reported.emplace_back(std::string(source), status.message());
      },
      &clock);
  sampler.AddSource(std::make_unique<CountingSource>("flaky", [](int poll) { return poll >= 1; }));
  sampler.AddSource(std::make_unique<CountingSource>("steady"));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(clock.AwaitSleeperUntil(StepThroughPolls(clock, kFastNs, 4)));
  sampler.Stop();

  std::vector<RecordingSink::Write> writes = sink.writes();
  ASSERT_EQ(writes.size(), 5u);
  {
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(reported.size(), 1u);
    EXPECT_EQ(reported[0].first, "flaky");
    EXPECT_EQ(reported[0].second, "flaky failed at poll 1");
  }
  // The failing source is still polled, its samples kept, and the other source unaffected.
  for (size_t i = 0; i < writes.size(); ++i) {
    ASSERT_EQ(writes[i].samples.size(), 4u);
    EXPECT_EQ(writes[i].samples[0].value, static_cast<double>(i));
    EXPECT_EQ(writes[i].samples[2].name, "steady/poll");
  }
  EXPECT_EQ(sampler.Stats().source_errors, 4u);
}

TEST(SystemSampler, RejectsIntervalsBelowTheMinimum) {
  RecordingSink sink;
  SystemSampler too_fast(&sink, 5'000'000);
  Status status = too_fast.Start();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "sampling interval 5ms is below the minimum 10ms; pass an interval of at least 10ms");

  SystemSampler sampler(&sink, kHourNs);
  EXPECT_EQ(sampler.SetInterval(0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sampler.SetInterval(-kFastNs).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sampler.interval_ns(), kHourNs);
}

TEST(SystemSampler, RejectsASecondStartAndCanRestartAfterStop) {
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kHourNs, {}, &clock);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  EXPECT_EQ(sampler.Start().code(), StatusCode::kInternal);
  ASSERT_TRUE(clock.AwaitSleeperUntil(kHourNs));
  sampler.Stop();
  sampler.Stop();  // idempotent
  // A new run starts a new grid: its first poll runs at once, without time moving.
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(sink.AwaitWrites(2));
  sampler.Stop();
  std::vector<RecordingSink::Write> writes = sink.writes();
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[1].samples[0].value, 1.0);  // the source keeps its state across runs
  EXPECT_EQ(sampler.Stats().polls, 2u);
}

TEST(SystemSampler, DoesNotCallTheSinkForAPollWithoutSamples) {
  class SilentSource : public MetricSource {
   public:
    std::string_view name() const override { return "silent"; }
    Status Poll(uint64_t, std::vector<MetricSample>&) override {
      ++polls;  // read by the test after Stop() joined the sampler thread
      return OkStatus();
    }
    int polls = 0;
  };
  RecordingSink sink;
  ManualWaitClock clock;
  SystemSampler sampler(&sink, kFastNs, {}, &clock);
  auto owned = std::make_unique<SilentSource>();
  SilentSource* source = owned.get();
  sampler.AddSource(std::move(owned));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(clock.AwaitSleeperUntil(StepThroughPolls(clock, kFastNs, 2)));
  sampler.Stop();
  EXPECT_EQ(source->polls, 3);
  EXPECT_TRUE(sink.writes().empty());
  EXPECT_EQ(sampler.Stats().polls, 3u);
  EXPECT_EQ(sampler.Stats().samples_written, 0u);
}

}  // namespace
}  // namespace stepscope
