#include "platform/linux/meminfo_parser.h"

#include <optional>
#include <string>
#include <vector>

#include "platform/linux/proc_text.h"

namespace stepscope {
namespace {

enum Key : size_t { kMemTotal, kMemAvailable, kMemFree, kBuffers, kCached, kKeyCount };
constexpr std::string_view kKeyNames[kKeyCount] = {"MemTotal", "MemAvailable", "MemFree", "Buffers",
                                                   "Cached"};
constexpr uint64_t kBytesPerKib = 1024;

}  // namespace

StatusOr<Meminfo> ParseMeminfo(std::string_view text) {
  std::optional<uint64_t> kib[kKeyCount];
  std::vector<std::string_view> fields;
  while (!text.empty()) {
    std::string_view line = proc_text::NextLine(text);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    size_t index = 0;
    while (index < kKeyCount && kKeyNames[index] != key) ++index;
    if (index == kKeyCount) continue;
    if (kib[index]) return DataLossError("/proc/meminfo: '" + std::string(key) + "' appears twice");
    proc_text::SplitFields(line.substr(colon + 1), fields);
    // "MemTotal:  24684092 kB". A value cut off before its unit is rejected: it may have lost
    // digits too.
    if (fields.size() != 2 || fields[1] != "kB") {
      return DataLossError("/proc/meminfo: '" + std::string(key) + "' is not '<number> kB': '" +
                           proc_text::Excerpt(line.substr(colon + 1)) + "'");
    }
    std::optional<uint64_t> value = proc_text::ParseUint64(fields[0]);
    if (!value || *value > UINT64_MAX / kBytesPerKib) {
      return DataLossError("/proc/meminfo: '" + std::string(key) + "' is not a number: '" +
                           proc_text::Excerpt(fields[0]) + "'");
    }
    kib[index] = *value;
  }
  if (!kib[kMemTotal] || *kib[kMemTotal] == 0) {
    return DataLossError("/proc/meminfo: no MemTotal (or it is 0)");
  }
  Meminfo info;
  info.total_bytes = *kib[kMemTotal] * kBytesPerKib;
  if (kib[kMemAvailable]) {
    info.available_bytes = *kib[kMemAvailable] * kBytesPerKib;
  } else if (kib[kMemFree] && kib[kBuffers] && kib[kCached]) {
    // Each term is below 2^54 (checked above), so the sum cannot overflow. The old estimate
    // can exceed the total when Cached includes shared memory; clamp it rather than reject a
    // file the kernel wrote correctly.
    uint64_t estimate_kib = *kib[kMemFree] + *kib[kBuffers] + *kib[kCached];
    if (estimate_kib > *kib[kMemTotal]) estimate_kib = *kib[kMemTotal];
    info.available_bytes = estimate_kib * kBytesPerKib;
    info.available_estimated = true;
  } else {
    return DataLossError(
        "/proc/meminfo: no MemAvailable, and no MemFree/Buffers/Cached to estimate it");
  }
  if (info.available_bytes > info.total_bytes) {
    return DataLossError("/proc/meminfo: MemAvailable (" + std::to_string(*kib[kMemAvailable]) +
                         " kB) exceeds MemTotal (" + std::to_string(*kib[kMemTotal]) + " kB)");
  }
  return info;
}

}  // namespace stepscope
