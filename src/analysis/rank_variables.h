// torchrun's rank variables as the recorder keeps them in a stream's meta ("ranks": {"RANK":
// "1", "LOCAL_RANK": "1", "WORLD_SIZE": "4", "GROUP_RANK": "0"}, strings as the environment held
// them; src/recorder/recorder.cc), read in one place for the loader's process facts and the
// job's node problems (job_nodes.h). Header-only.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/json_fields.h"

namespace stepscope::analysis {

// The variable as a non-negative integer, else -1.
inline int32_t RankVariable(const nlohmann::json& ranks, const char* name) {
  const std::string text = JsonString(ranks, name);
  int32_t value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0 ? value : -1;
}

}  // namespace stepscope::analysis
