#include "sampler/system_sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace stepscope {
namespace {

constexpr int64_t kFastNs = SystemSampler::kMinIntervalNs;
constexpr int64_t kHourNs = 3600ll * 1'000'000'000;
// Only a bound for a broken sampler to fail instead of hanging; nothing asserts timings.
constexpr auto kPatience = std::chrono::seconds(30);

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
  bool WaitForWrites(size_t count) {
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

TEST(SystemSampler, DeliversPollsInOrderWithOneTimestampPerPoll) {
  RecordingSink sink;
  SystemSampler sampler(&sink, kFastNs);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  sampler.AddSource(std::make_unique<CountingSource>("b"));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(sink.WaitForWrites(5));
  sampler.Stop();

  std::vector<RecordingSink::Write> writes = sink.writes();
  ASSERT_GE(writes.size(), 5u);
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
      EXPECT_GT(writes[i].ticks, writes[i - 1].ticks);
      EXPECT_GT(samples[1].value, writes[i - 1].samples[1].value);
    }
  }
  SamplerStats stats = sampler.Stats();
  EXPECT_EQ(stats.polls, writes.size());
  EXPECT_EQ(stats.samples_written, 4 * writes.size());
  EXPECT_EQ(stats.source_errors, 0u);
  EXPECT_GT(stats.thread_cpu_ns, 0u);
}

TEST(SystemSampler, SetIntervalTakesEffectAtTheNextPoll) {
  RecordingSink sink;
  SystemSampler sampler(&sink, kHourNs);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  // The first poll runs at once; the next would be an hour away.
  ASSERT_TRUE(sink.WaitForWrites(1));
  ASSERT_TRUE(sampler.SetInterval(kFastNs).ok());
  EXPECT_EQ(sampler.interval_ns(), kFastNs);
  // Without the change these would take hours: the wait would fail.
  ASSERT_TRUE(sink.WaitForWrites(6));
  ASSERT_TRUE(sampler.SetInterval(kHourNs).ok());
  sampler.Stop();

  std::vector<RecordingSink::Write> writes = sink.writes();
  for (size_t i = 0; i < writes.size(); ++i) {
    EXPECT_EQ(writes[i].samples[0].value, static_cast<double>(i));
  }
  EXPECT_EQ(sampler.Stats().polls, writes.size());
  EXPECT_EQ(sampler.Stats().missed_polls, 0u);
}

TEST(SystemSampler, StopReturnsWithoutWaitingForTheNextDeadline) {
  RecordingSink sink;
  SystemSampler sampler(&sink, kHourNs);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(sink.WaitForWrites(1));
  std::future<void> stopped = std::async(std::launch::async, [&] { sampler.Stop(); });
  // A sleep-based loop would only notice the request an hour later.
  ASSERT_EQ(stopped.wait_for(kPatience), std::future_status::ready);
  EXPECT_EQ(sink.writes().size(), 1u);
  EXPECT_EQ(sampler.Stats().polls, 1u);
}

TEST(SystemSampler, ReportsASourceErrorOnceAndKeepsPollingIt) {
  RecordingSink sink;
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> reported;
  SystemSampler sampler(&sink, kFastNs, [&](std::string_view source, const Status& status) {
    std::lock_guard<std::mutex> lock(mutex);
    reported.emplace_back(std::string(source), status.message());
  });
  sampler.AddSource(std::make_unique<CountingSource>("flaky", [](int poll) { return poll >= 1; }));
  sampler.AddSource(std::make_unique<CountingSource>("steady"));
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(sink.WaitForWrites(5));
  sampler.Stop();

  std::vector<RecordingSink::Write> writes = sink.writes();
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
  EXPECT_EQ(sampler.Stats().source_errors, writes.size() - 1);
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
  SystemSampler sampler(&sink, kHourNs);
  sampler.AddSource(std::make_unique<CountingSource>("a"));
  ASSERT_TRUE(sampler.Start().ok());
  EXPECT_EQ(sampler.Start().code(), StatusCode::kInternal);
  ASSERT_TRUE(sink.WaitForWrites(1));
  sampler.Stop();
  sampler.Stop();  // idempotent
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(sink.WaitForWrites(2));
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
      std::lock_guard<std::mutex> lock(mutex);
      ++polls;
      polled.notify_all();
      return OkStatus();
    }
    std::mutex mutex;
    std::condition_variable polled;
    int polls = 0;
  };
  RecordingSink sink;
  SystemSampler sampler(&sink, kFastNs);
  auto owned = std::make_unique<SilentSource>();
  SilentSource* source = owned.get();
  sampler.AddSource(std::move(owned));
  ASSERT_TRUE(sampler.Start().ok());
  {
    std::unique_lock<std::mutex> lock(source->mutex);
    ASSERT_TRUE(source->polled.wait_for(lock, kPatience, [&] { return source->polls >= 3; }));
  }
  sampler.Stop();
  EXPECT_TRUE(sink.writes().empty());
  EXPECT_GE(sampler.Stats().polls, 3u);
  EXPECT_EQ(sampler.Stats().samples_written, 0u);
}

}  // namespace
}  // namespace stepscope
