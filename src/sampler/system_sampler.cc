#include "sampler/system_sampler.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/duration.h"

namespace stepscope {
namespace {

Status CheckInterval(int64_t interval_ns) {
  if (interval_ns >= SystemSampler::kMinIntervalNs) return OkStatus();
  return InvalidArgumentError(
      "sampling interval " + FormatDurationNs(interval_ns) + " is below the minimum " +
      FormatDurationNs(SystemSampler::kMinIntervalNs) + "; pass an interval of at least " +
      FormatDurationNs(SystemSampler::kMinIntervalNs));
}

}  // namespace

SystemSampler::SystemSampler(SampleSink* sink, int64_t interval_ns, ErrorCallback on_error, WaitClock* clock)
    : sink_(sink), on_error_(std::move(on_error)), clock_(clock), interval_ns_(interval_ns) {
  assert(sink != nullptr && clock != nullptr);
}

SystemSampler::~SystemSampler() { Stop(); }

void SystemSampler::AddSource(std::unique_ptr<MetricSource> source) {
  assert(!thread_.joinable() && "AddSource() while the sampler runs");
  sources_.push_back(std::move(source));
  error_reported_.push_back(false);
}

Status SystemSampler::Start() {
  if (thread_.joinable()) {
    return InternalError("SystemSampler::Start() called twice without Stop()");
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    STEPSCOPE_RETURN_IF_ERROR(CheckInterval(interval_ns_));
    stop_requested_ = false;
  }
  cpu_ns_before_this_run_ = thread_cpu_ns_.load(std::memory_order_relaxed);
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void SystemSampler::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

Status SystemSampler::SetInterval(int64_t interval_ns) {
  STEPSCOPE_RETURN_IF_ERROR(CheckInterval(interval_ns));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    interval_ns_ = interval_ns;
    ++interval_version_;
  }
  wake_.notify_all();
  return OkStatus();
}

int64_t SystemSampler::interval_ns() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return interval_ns_;
}

SamplerStats SystemSampler::Stats() const {
  SamplerStats stats;
  stats.polls = polls_.load(std::memory_order_relaxed);
  stats.missed_polls = missed_polls_.load(std::memory_order_relaxed);
  stats.samples_written = samples_written_.load(std::memory_order_relaxed);
  stats.source_errors = source_errors_.load(std::memory_order_relaxed);
  stats.thread_cpu_ns = thread_cpu_ns_.load(std::memory_order_relaxed);
  return stats;
}

void SystemSampler::UpdateThreadCpu() {
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return;
  uint64_t ns =
      static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
  thread_cpu_ns_.store(cpu_ns_before_this_run_ + ns, std::memory_order_relaxed);
}

void SystemSampler::Run() {
  pthread_setname_np(pthread_self(), "stepscope-smplr");  // 15 characters at most

  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t seen_version = interval_version_;
  int64_t deadline_ns = clock_->MonotonicNs();
  int64_t last_deadline_ns = deadline_ns;
  bool polled = false;
  while (!stop_requested_) {
    bool woken = clock_->WaitUntil(lock, wake_, deadline_ns,
                                   [&] { return stop_requested_ || interval_version_ != seen_version; });
    if (woken) {
      if (stop_requested_) break;
      // SetInterval(): the next deadline is the last poll's deadline + the new interval. If
      // that has passed, poll now and start the new grid there, rather than count the
      // deadlines the old interval never had as missed.
      seen_version = interval_version_;
      if (polled) deadline_ns = std::max(last_deadline_ns + interval_ns_, clock_->MonotonicNs());
      continue;
    }
    const int64_t interval_ns = interval_ns_;
    lock.unlock();
    PollOnce();
    lock.lock();

    polled = true;
    last_deadline_ns = deadline_ns;
    deadline_ns += interval_ns;
    const int64_t now_ns = clock_->MonotonicNs();
    if (deadline_ns <= now_ns) {
      // Stay on the grid: skip every deadline that already passed.
      const int64_t missed = (now_ns - deadline_ns) / interval_ns + 1;
      deadline_ns += missed * interval_ns;
      missed_polls_.fetch_add(static_cast<uint64_t>(missed), std::memory_order_relaxed);
    }
  }
  lock.unlock();
  UpdateThreadCpu();
}

void SystemSampler::PollOnce() {
  // One time for the whole poll: every sample of it lines up on the same instant.
  const uint64_t ticks = ReadTicks();
  const uint64_t monotonic_ns = MonotonicNowNs();
  samples_.clear();
  for (size_t i = 0; i < sources_.size(); ++i) {
    Status status = sources_[i]->Poll(monotonic_ns, samples_);
    if (status.ok()) continue;
    source_errors_.fetch_add(1, std::memory_order_relaxed);
    if (!error_reported_[i]) {
      error_reported_[i] = true;
      if (on_error_) on_error_(sources_[i]->name(), status);
    }
  }
  if (!samples_.empty()) {
    sink_->WriteSamples(ticks, samples_);
    samples_written_.fetch_add(samples_.size(), std::memory_order_relaxed);
  }
  polls_.fetch_add(1, std::memory_order_relaxed);
  UpdateThreadCpu();
}

}  // namespace stepscope
