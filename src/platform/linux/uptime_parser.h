// Parser for /proc/uptime: time since boot, including time suspended (the clock that
// /proc/<pid>/stat's starttime counts in). Called by sampler/process_tree_source.cc to tell a
// process's age when it shows up in the job's tree without a previous reading.
//
// Threading: a pure function, safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace stepscope {

// Parses "1381.54 1394.64\n" (seconds since boot with a fraction, then idle seconds) into
// nanoseconds since boot. Malformed text gives DataLoss naming the problem.
StatusOr<uint64_t> ParseUptimeNs(std::string_view text);

}  // namespace stepscope
