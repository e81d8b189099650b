#include "platform/perf/perf_event_api.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stepscope {
namespace {

class SystemApi final : public PerfEventApi {
 public:
  int Open(const PerfEventRequest& request) override {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = request.type;
    attr.config = request.config;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr.inherit = request.inherit ? 1 : 0;
    attr.exclude_kernel = request.exclude_kernel ? 1 : 0;
    attr.exclude_hv = 1;  // a guest cannot see the hypervisor anyway; the same on bare metal
    long fd = syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(request.pid), static_cast<int>(request.cpu),
                      -1, PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 ? static_cast<int>(fd) : -errno;
  }

  int Read(int fd, PerfEventReading& reading) override {
    uint64_t values[3];  // value, time_enabled, time_running: the order of read_format's bits
    ssize_t n;
    do {
      n = read(fd, values, sizeof values);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -errno;
    if (n != static_cast<ssize_t>(sizeof values)) return -EIO;
    reading.value = values[0];
    reading.time_enabled_ns = values[1];
    reading.time_running_ns = values[2];
    return 0;
  }

  void Close(int fd) override { close(fd); }
};

}  // namespace

PerfEventApi& SystemPerfEventApi() {
  static SystemApi api;  // stateless
  return api;
}

}  // namespace stepscope
