// Test-only PerfEventApi: scripted open errors and counters, so the counter set and the sampler
// source are tested without the kernel (ENOENT for hardware in a VM, EACCES under
// kernel.perf_event_paranoid, multiplexing). Used by platform/perf and sampler unit tests; not
// part of any library.
//
// Threading: not thread-safe; tests script it while no sampler thread reads it.
#pragma once

#include <cerrno>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "platform/perf/perf_event_api.h"

namespace stepscope::testing {

class FakePerfEventApi : public PerfEventApi {
 public:
  // Returns the errno an Open() of `request` fails with, 0 to succeed. Default: all succeed.
  std::function<int(const PerfEventRequest&)> open_error = [](const PerfEventRequest&) { return 0; };

  int Open(const PerfEventRequest& request) override {
    requests.push_back(request);
    if (int error = open_error(request); error != 0) return -error;
    const int fd = next_fd_++;
    counters_[fd] = Counter{request, {}, false};
    return fd;
  }

  int Read(int fd, PerfEventReading& reading) override {
    auto it = counters_.find(fd);
    if (it == counters_.end()) return -EBADF;
    if (it->second.fail_reads) return -EIO;
    reading = it->second.reading;
    return 0;
  }

  void Close(int fd) override {
    if (counters_.erase(fd) == 0) ++bad_closes;
  }

  // Adds to every open counter of (type, config) on `cpu` (-1: the job's counters): `value`
  // counted while running `running_ns` of `enabled_ns` (running < enabled = multiplexed).
  void Advance(uint32_t type, uint64_t config, int32_t cpu, uint64_t value, uint64_t enabled_ns,
               uint64_t running_ns) {
    for (auto& [fd, counter] : counters_) {
      if (counter.request.type != type || counter.request.config != config || counter.request.cpu != cpu) continue;
      counter.reading.value += value;
      counter.reading.time_enabled_ns += enabled_ns;
      counter.reading.time_running_ns += running_ns;
    }
  }
  // Sets a counter's value outright (a counter going backwards).
  void SetValue(uint32_t type, uint64_t config, int32_t cpu, uint64_t value) {
    for (auto& [fd, counter] : counters_) {
      if (counter.request.type == type && counter.request.config == config && counter.request.cpu == cpu) {
        counter.reading.value = value;
      }
    }
  }
  void FailReads(uint32_t type, uint64_t config, bool fail) {
    for (auto& [fd, counter] : counters_) {
      if (counter.request.type == type && counter.request.config == config) counter.fail_reads = fail;
    }
  }

  size_t open_count() const { return counters_.size(); }
  // Whether an open counter was requested as `predicate` says.
  bool AnyOpen(const std::function<bool(const PerfEventRequest&)>& predicate) const {
    for (const auto& [fd, counter] : counters_) {
      if (predicate(counter.request)) return true;
    }
    return false;
  }

  std::vector<PerfEventRequest> requests;  // every Open(), in order
  int bad_closes = 0;                      // Close() of a descriptor not open

 private:
  struct Counter {
    PerfEventRequest request;
    PerfEventReading reading;
    bool fail_reads = false;
  };
  int next_fd_ = 100;
  std::map<int, Counter> counters_;
};

}  // namespace stepscope::testing
