// Parsing and printing of human durations ("500ms", "1.5s", "2m") used by flags and config.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stepscope {

// Accepts a number followed by one of ns, us, ms, s, m, h (a bare number means seconds).
// Returns InvalidArgument naming the text and the accepted forms otherwise.
StatusOr<int64_t> ParseDurationNs(std::string_view text);

// "500ms", "1s", "1.5s", "2m": the shortest exact-enough form for messages and manifests.
std::string FormatDurationNs(int64_t ns);

}  // namespace stepscope
