// The perf_event_open(2) system call behind a small interface, so the counter set
// (perf_counter_set.h) can be driven by scripted counters and errors in tests
// (fake_perf_event_api.h) and by the kernel everywhere else. perf_event_api.cc is the only file
// of stepscope that calls perf_event_open.
//
// Counting only, never sampling: an event is opened disabled=0 with read_format
// TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING and read with read(2), so no ring buffer is mapped and
// the kernel never interrupts anybody on our behalf.
//
// Threading: implementations are safe to call from any thread; a descriptor is read by one
// thread at a time (the sampler's).
#pragma once

#include <cstdint>

namespace stepscope {

// What to count and on whom. `type`/`config` are perf's (PERF_TYPE_HARDWARE +
// PERF_COUNT_HW_INSTRUCTIONS, ...). pid = -1 with cpu = N counts everything on CPU N; pid = P
// with cpu = -1 counts process P (and, with `inherit`, the children it forks from then on).
struct PerfEventRequest {
  uint32_t type = 0;
  uint64_t config = 0;
  int32_t pid = -1;
  int32_t cpu = -1;
  bool inherit = false;
  bool exclude_kernel = false;  // count user space only (what kernel.perf_event_paranoid=2 allows)
};

// One read of a counting event. time_running < time_enabled when the kernel multiplexed the
// event with others on too few hardware counters: the count then covers only the running part.
struct PerfEventReading {
  uint64_t value = 0;
  uint64_t time_enabled_ns = 0;
  uint64_t time_running_ns = 0;
};

class PerfEventApi {
 public:
  virtual ~PerfEventApi() = default;
  // A close-on-exec descriptor >= 0, or -errno (ENOENT, EOPNOTSUPP, EACCES, EMFILE, ...).
  virtual int Open(const PerfEventRequest& request) = 0;
  // 0, or -errno. Never blocks: a counting event's read returns at once.
  virtual int Read(int fd, PerfEventReading& reading) = 0;
  virtual void Close(int fd) = 0;
};

// The kernel's perf_event_open(2), read(2) and close(2). Stateless; lives for the process.
PerfEventApi& SystemPerfEventApi();

}  // namespace stepscope
