// The system sampler: one background thread that polls a list of MetricSources at a fixed
// interval and hands each poll's samples to a SampleSink.
//
// Schedule: polls sit on a drift-free grid of absolute CLOCK_MONOTONIC deadlines (start,
// start + interval, start + 2 * interval, ...); the first poll runs as soon as the thread
// starts. A poll that overruns one or more deadlines (a stalled disk, a suspended machine)
// skips them and counts them in SamplerStats::missed_polls rather than firing a burst.
// SetInterval() wakes the thread and takes effect at the next poll: the next deadline becomes
// the last poll's deadline + the new interval (now, if that has passed).
//
// Each poll reads ReadTicks() (base/clock.h) once and stamps all its samples with it, and
// passes the CLOCK_MONOTONIC time read at the same moment to every source. Sources are polled
// in the order they were added. A source's error is passed to the error callback the first
// time that source fails (the CLI prints it once) and counted every time; the source is polled
// again at the next interval, and the samples it appended before failing are kept.
//
// The sampler measures its own cost: the CPU time of its thread (CLOCK_THREAD_CPUTIME_ID) and
// the number of polls, for the overhead section every run reports.
//
// The grid runs on a WaitClock (base/wait_clock.h): the system's CLOCK_MONOTONIC unless a test
// passes a manual one to step through a schedule. The samples' ticks and the monotonic time
// given to the sources are always read from base/clock.h.
//
// Threading: Start(), Stop(), SetInterval() and Stats() may be called from any thread, but
// Start()/Stop() not concurrently with each other. Sources, the sink and the error callback are
// called on the sampler thread only, never concurrently. AddSource() only while stopped.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/wait_clock.h"
#include "sampler/metric_source.h"

namespace stepscope {

struct SamplerStats {
  uint64_t polls = 0;            // polls completed
  uint64_t missed_polls = 0;     // deadlines skipped because a poll ran late
  uint64_t samples_written = 0;  // samples handed to the sink
  uint64_t source_errors = 0;    // failed Source::Poll calls (each reported once per source)
  uint64_t thread_cpu_ns = 0;    // CPU time of the sampler thread, all runs together
};

class SystemSampler {
 public:
  using ErrorCallback = std::function<void(std::string_view source, const Status& status)>;

  // SPEC §2.1: any interval of at least 10 ms is accepted.
  static constexpr int64_t kMinIntervalNs = 10'000'000;

  // `sink` and `clock` (not owned) must outlive the sampler. `on_error` may be empty. The
  // interval is checked by Start().
  SystemSampler(SampleSink* sink, int64_t interval_ns, ErrorCallback on_error = {},
                WaitClock* clock = &SystemWaitClock());
  ~SystemSampler();  // Stop()s.

  SystemSampler(const SystemSampler&) = delete;
  SystemSampler& operator=(const SystemSampler&) = delete;

  // Adds a source polled after those added before it. Only while stopped.
  void AddSource(std::unique_ptr<MetricSource> source);

  // Starts the thread; its first poll runs immediately. InvalidArgument for an interval below
  // kMinIntervalNs, Internal if already running.
  Status Start();
  // Wakes the thread, waits for a poll in progress to finish, and joins. Idempotent.
  void Stop();

  // The new interval (ns, >= kMinIntervalNs) takes effect at the next poll; InvalidArgument
  // otherwise (the current interval is kept).
  Status SetInterval(int64_t interval_ns);
  int64_t interval_ns() const;

  // A consistent-enough snapshot (each counter is read atomically, not all together).
  SamplerStats Stats() const;

 private:
  void Run();
  void PollOnce();
  void UpdateThreadCpu();

  SampleSink* const sink_;
  const ErrorCallback on_error_;
  WaitClock* const clock_;
  std::vector<std::unique_ptr<MetricSource>> sources_;
  std::vector<bool> error_reported_;     // per source; sampler thread only
  std::vector<MetricSample> samples_;    // reused every poll; sampler thread only
  uint64_t cpu_ns_before_this_run_ = 0;  // set by Start() before the thread exists

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  int64_t interval_ns_;            // guarded by mutex_
  uint64_t interval_version_ = 0;  // guarded by mutex_; bumped by SetInterval()
  bool stop_requested_ = false;    // guarded by mutex_
  std::thread thread_;

  std::atomic<uint64_t> polls_{0};
  std::atomic<uint64_t> missed_polls_{0};
  std::atomic<uint64_t> samples_written_{0};
  std::atomic<uint64_t> source_errors_{0};
  std::atomic<uint64_t> thread_cpu_ns_{0};
};

}  // namespace stepscope
