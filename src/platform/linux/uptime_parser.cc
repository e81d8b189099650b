#include "platform/linux/uptime_parser.h"

#include <optional>
#include <vector>

#include "platform/linux/proc_text.h"

namespace stepscope {

StatusOr<uint64_t> ParseUptimeNs(std::string_view text) {
  std::vector<std::string_view> fields;
  std::string_view line = proc_text::NextLine(text);
  proc_text::SplitFields(line, fields);
  if (fields.size() != 2) {
    return DataLossError("/proc/uptime: expected two numbers, got '" + proc_text::Excerpt(line) +
                         "'");
  }
  std::string_view uptime = fields[0];
  size_t dot = uptime.find('.');
  std::string_view whole = uptime.substr(0, dot);
  std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : uptime.substr(dot + 1);
  std::optional<uint64_t> seconds = proc_text::ParseUint64(whole);
  // The kernel prints two decimals; accept up to nine (ns) so the parse stays exact.
  std::optional<uint64_t> fraction_value =
      fraction.empty() ? std::optional<uint64_t>(0) : proc_text::ParseUint64(fraction);
  constexpr uint64_t kMaxSeconds = UINT64_MAX / 1'000'000'000ull - 1;
  if (!seconds || !fraction_value || fraction.size() > 9 ||
      (dot != std::string_view::npos && fraction.empty()) || *seconds > kMaxSeconds) {
    return DataLossError("/proc/uptime: '" + proc_text::Excerpt(uptime) +
                         "' is not a number of seconds");
  }
  uint64_t fraction_ns = *fraction_value;
  for (size_t i = fraction.size(); i < 9; ++i) fraction_ns *= 10;
  return *seconds * 1'000'000'000ull + fraction_ns;
}

}  // namespace stepscope
