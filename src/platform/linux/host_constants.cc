#include "platform/linux/host_constants.h"

#include <unistd.h>

namespace stepscope {

HostConstants HostConstants::FromSysconf() {
  HostConstants constants;
  long ticks = sysconf(_SC_CLK_TCK);
  if (ticks > 0) constants.clock_ticks_per_s = ticks;
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) constants.page_size_bytes = page;
  return constants;
}

}  // namespace stepscope
