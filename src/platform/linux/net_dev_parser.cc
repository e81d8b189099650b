#include "platform/linux/net_dev_parser.h"

#include "platform/linux/proc_text.h"

namespace stepscope {
namespace {

constexpr size_t kCounters = 16;  // 8 receive + 8 transmit
constexpr size_t kRxBytes = 0;
constexpr size_t kTxBytes = 8;
constexpr int kHeaderLines = 2;

Status LineError(int line_number, const std::string& what) {
  return DataLossError("/proc/net/dev line " + std::to_string(line_number) + ": " + what);
}

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// See the header for why these are not counted.
bool IsExcluded(std::string_view name) {
  if (name == "lo") return true;
  if (name.size() > 3 && name.substr(0, 3) == "ifb") {
    return name.find_first_not_of("0123456789", 3) == std::string_view::npos;
  }
  return false;
}

}  // namespace

StatusOr<NetDevStats> ParseNetDev(std::string_view text) {
  NetDevStats stats;
  std::vector<std::string_view> fields;
  int line_number = 0;
  while (!text.empty()) {
    std::string_view line = proc_text::NextLine(text);
    ++line_number;
    if (line_number <= kHeaderLines) {
      // "Inter-|   Receive ...|  Transmit" and " face |bytes    packets ...".
      if (line.find('|') == std::string_view::npos) {
        return LineError(line_number,
                         "expected the column header, got '" + proc_text::Excerpt(line) + "'");
      }
      continue;
    }
    if (TrimSpaces(line).empty()) continue;
    // Interface names cannot contain ':' (net/core/dev.c dev_valid_name), and old kernels
    // print no space after it once the counter is wide ("eth0:123456"), so split on the colon.
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return LineError(line_number,
                       "no ':' after the interface name: '" + proc_text::Excerpt(line) + "'");
    }
    std::string_view name = TrimSpaces(line.substr(0, colon));
    if (name.empty()) return LineError(line_number, "empty interface name");
    proc_text::SplitFields(line.substr(colon + 1), fields);
    if (fields.size() < kCounters) {
      return LineError(line_number, "'" + proc_text::Excerpt(name) + "' has " +
                                        std::to_string(fields.size()) + " counters, expected " +
                                        std::to_string(kCounters));
    }
    for (size_t i = 0; i < kCounters; ++i) {
      if (!proc_text::ParseUint64(fields[i])) {
        return LineError(line_number, "counter " + std::to_string(i + 1) + " of '" +
                                          proc_text::Excerpt(name) + "' is not a number: '" +
                                          proc_text::Excerpt(fields[i]) + "'");
      }
    }
    if (IsExcluded(name)) continue;
    stats.interfaces.push_back({std::string(name), *proc_text::ParseUint64(fields[kRxBytes]),
                                *proc_text::ParseUint64(fields[kTxBytes])});
  }
  if (line_number < kHeaderLines) {
    return DataLossError("/proc/net/dev: cut short inside the header");
  }
  return stats;
}

}  // namespace stepscope
