#include "store/clock_sync.h"

#include <nlohmann/json.hpp>

#include "base/file_system.h"
#include "base/json_fields.h"

namespace stepscope::store {

StatusOr<ClockSync> ParseClockSync(std::string_view text, const std::string& path) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return DataLossError("'" + path + "' is not a clock alignment record (not a JSON object); the node's clock "
                         "stays unaligned");
  }
  ClockSync sync;
  sync.node = JsonString(json, "node");
  sync.node_rank = static_cast<int32_t>(JsonInt(json, "node_rank", -1));
  sync.nodes = static_cast<int32_t>(JsonInt(json, "nodes", 0));
  sync.reference_node = JsonString(json, "reference_node");
  sync.error = JsonString(json, "error");
  for (const nlohmann::json& entry : JsonArray(json, "samples")) {
    ClockSyncSample sample{JsonInt(entry, "at_ns", -1), JsonInt(entry, "offset_ns", 0),
                           JsonInt(entry, "round_trip_ns", -1)};
    if (sample.at_ns < 0 || sample.round_trip_ns < 0) continue;
    sync.samples.push_back(sample);
  }
  return sync;
}

StatusOr<ClockSync> ReadClockSync(const std::string& node_dir) {
  const std::string path = node_dir + "/" + kClockSyncFileName;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, Symlinks::kRefuse, kMaxClockSyncBytes));
  return ParseClockSync(text, path);
}

}  // namespace stepscope::store
