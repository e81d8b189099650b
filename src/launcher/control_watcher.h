// The launcher's side of live changes (`stepscope ctl`, files of control_file.h): a thread that
// looks at <node>/control/ about once a second, applies each new control file's interval_ns to
// the system sampler and reports every control file it handled, for the manifest's `control` list:
//
//   {"sequence": int, "time_ns": int (when ctl wrote it), "applied_at_ns": int (Unix-epoch ns),
//    "changes": {"interval_ns"?: int, "previous_interval_ns"?: int,
//                "detail"?: [windows]},   // detail is applied by the job's processes at their
//                                         // next step (they record Control instants)
//    "error"?: str}                       // the file was invalid or the change was refused
//
// Cheap by design: each poll is one stat() of the directory; it is listed only when its mtime
// changed (or changed so recently that a coarse-grained mtime could hide a second file).
//
// Its period and the times it records come from a WaitClock (base/wait_clock.h): the system's
// clocks, or a manual one in tests.
//
// Threading: Start()/Stop() from one thread. The callbacks run on the watcher thread only, one
// at a time; the caller must not touch what `record` touches between Start() and Stop().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/wait_clock.h"

namespace stepscope::launcher {

class ControlWatcher {
 public:
  // Applies a system sampling interval (ns); an error is recorded and the old interval kept.
  using IntervalSetter = std::function<Status(int64_t interval_ns)>;
  // Receives the manifest entry of each control file handled.
  using Recorder = std::function<void(const nlohmann::json& entry)>;

  // `clock` (not owned) must outlive the watcher.
  ControlWatcher(std::string node_dir, int64_t current_interval_ns, IntervalSetter set_interval, Recorder record,
                 int64_t poll_interval_ns = 1'000'000'000, WaitClock* clock = &SystemWaitClock());
  ~ControlWatcher();  // Stop()s.

  ControlWatcher(const ControlWatcher&) = delete;
  ControlWatcher& operator=(const ControlWatcher&) = delete;

  // Creates <node>/control (so ctl and the job's processes find it) and starts the thread; its
  // first poll runs at once, so files written before Start() are applied too.
  Status Start();
  // Wakes the thread and joins it. Idempotent.
  void Stop();

  // One poll on the caller's thread (the thread's body; tests call it directly while stopped).
  void PollOnce();

  // How often the directory was listed: polls that found nothing new cost one stat().
  uint64_t listings() const { return listings_; }

 private:
  void Run();
  nlohmann::json Apply(int64_t sequence, const std::string& path);

  const std::string control_dir_;
  int64_t interval_ns_;
  const IntervalSetter set_interval_;
  const Recorder record_;
  const int64_t poll_interval_ns_;
  WaitClock* const clock_;

  // Watcher thread only (or the caller of PollOnce while stopped).
  int64_t last_sequence_ = 0;
  int64_t seen_mtime_ns_ = -1;
  int64_t listed_at_ns_ = 0;
  uint64_t listings_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace stepscope::launcher
