#include "platform/linux/proc_text.h"

#include <charconv>

namespace stepscope::proc_text {

std::string_view NextLine(std::string_view& text, bool* terminated) {
  size_t end = text.find('\n');
  std::string_view line;
  if (end == std::string_view::npos) {
    line = text;
    text = {};
    if (terminated != nullptr) *terminated = false;
  } else {
    line = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (terminated != nullptr) *terminated = true;
  }
  return line;
}

void SplitFields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
}

std::optional<uint64_t> ParseUint64(std::string_view field) {
  if (field.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseInt64(std::string_view field) {
  if (field.empty()) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return value;
}

std::string Excerpt(std::string_view text) {
  constexpr size_t kMaxChars = 40;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMaxChars; ++i) {
    char c = text[i];
    // Control bytes would garble the one-line message the CLI prints.
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  if (text.size() > kMaxChars) out += "...";
  return out;
}

}  // namespace stepscope::proc_text
