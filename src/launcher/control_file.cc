#include "launcher/control_file.h"

#include <algorithm>

#include "base/file_system.h"

namespace stepscope::launcher {

nlohmann::json ControlFileJson(const ControlRequest& request, int64_t sequence, int64_t time_ns) {
  nlohmann::json body = {{"sequence", sequence}, {"time_ns", time_ns}};
  if (request.interval_ns) body["interval_ns"] = *request.interval_ns;
  if (!request.detail.empty()) body["detail"] = DetailWindowsToJson(request.detail);
  return body;
}

std::optional<int64_t> ControlSequenceOfName(const std::string& name) {
  constexpr size_t kSuffix = 5;  // ".json"
  if (name.size() <= kSuffix || name.size() > kSuffix + 18 || name.compare(name.size() - kSuffix, kSuffix, ".json") != 0) {
    return std::nullopt;
  }
  int64_t value = 0;
  for (size_t i = 0; i + kSuffix < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    value = value * 10 + (name[i] - '0');
  }
  return value;
}

int64_t HighestControlSequence(const std::string& control_dir) {
  LocalFileSystem fs;
  auto entries = fs.ListDirectory(control_dir);
  int64_t highest = 0;
  if (!entries.ok()) return highest;
  for (const std::string& name : *entries) {
    if (std::optional<int64_t> sequence = ControlSequenceOfName(name)) highest = std::max(highest, *sequence);
  }
  return highest;
}

StatusOr<int64_t> WriteControlFile(const std::string& node_dir, const ControlRequest& request, int64_t time_ns) {
  const std::string control_dir = node_dir + "/control";
  STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(control_dir));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int64_t sequence = HighestControlSequence(control_dir) + 1;
    const std::string final_path = control_dir + "/" + std::to_string(sequence) + ".json";
    // Another ctl may take the same number at the same time: the one whose file appears first keeps it.
    const std::string body = ControlFileJson(request, sequence, time_ns).dump(2) + "\n";
    STEPSCOPE_ASSIGN_OR_RETURN(bool created, CreateFileAtomically(final_path, body));
    if (created) return sequence;
  }
  return IoError("could not claim a sequence number in '" + control_dir + "' after 100 tries; is another tool "
                 "writing there?");
}

}  // namespace stepscope::launcher
