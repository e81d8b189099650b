#include "recorder/string_interner.h"

#include "store/stream_writer.h"

namespace stepscope::recorder {

uint32_t StringInterner::Intern(std::string_view name, store::StreamWriter* stream) {
  std::lock_guard lock(mutex_);
  auto it = ids_.find(std::string(name));
  if (it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(entries_.size()) + 1;
  std::vector<std::pair<uint32_t, std::string>> entry = {{id, std::string(name)}};
  if (stream != nullptr && !stream->AppendStrings(entry).ok()) return 0;
  ids_.emplace(std::string(name), id);
  entries_.push_back(std::move(entry[0]));
  return id;
}

Status StringInterner::EmitAll(store::StreamWriter* stream) {
  std::lock_guard lock(mutex_);
  if (entries_.empty()) return OkStatus();
  return stream->AppendStrings(entries_);
}

}  // namespace stepscope::recorder
