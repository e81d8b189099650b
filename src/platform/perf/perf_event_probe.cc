#include "platform/perf/perf_event_probe.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace stepscope {

PerfCounterCapability ProbePerfCounters() {
  PerfCounterCapability capability;
  std::ifstream paranoid("/proc/sys/kernel/perf_event_paranoid");
  if (!(paranoid >> capability.paranoid_level)) capability.paranoid_level = -1;

  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    capability.available = true;
    return capability;
  }
  int err = errno;
  if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV) {
    capability.reason = "this CPU or hypervisor exposes no hardware counters";
  } else if (err == EACCES || err == EPERM) {
    capability.reason = "not permitted (kernel.perf_event_paranoid=" + std::to_string(capability.paranoid_level) +
                        "); run as root or lower it with sysctl";
  } else {
    capability.reason = std::string("perf_event_open failed: ") + std::strerror(err);
  }
  return capability;
}

}  // namespace stepscope
