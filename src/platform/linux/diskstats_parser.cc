#include "platform/linux/diskstats_parser.h"

#include <algorithm>
#include <optional>

#include "platform/linux/proc_text.h"

namespace stepscope {
namespace {

// major minor name + 11 counters (kernels before 4.18; later ones append discard and flush).
constexpr size_t kMinColumns = 14;
// Column indices after splitting.
constexpr size_t kMajor = 0, kMinor = 1, kName = 2, kReadsCompleted = 3, kSectorsRead = 5,
                 kWritesCompleted = 7, kSectorsWritten = 9;

bool IsDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "loop" + digits, "md" + digits, ...
bool IsPrefixThenDigits(std::string_view name, std::string_view prefix) {
  return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix &&
         IsDigits(name.substr(prefix.size()));
}

bool IsVirtualOrStacked(std::string_view name) {
  return IsPrefixThenDigits(name, "loop") || IsPrefixThenDigits(name, "ram") ||
         IsPrefixThenDigits(name, "zram") || IsPrefixThenDigits(name, "dm-") ||
         IsPrefixThenDigits(name, "md");
}

// The whole disk `name` would belong to if it were a partition: the kernel names partitions
// disk + N, or disk + "p" + N when the disk name ends in a digit (block/partitions/core.c).
// So "sda1" -> "sda", "nvme0n1p2" -> "nvme0n1", while "sdaa" and "nvme0n10" have none.
std::optional<std::string_view> WholeDiskName(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  if (end == name.size() || end == 0) return std::nullopt;
  char before = name[end - 1];
  if (before == 'p' && end >= 2 && name[end - 2] >= '0' && name[end - 2] <= '9') {
    return name.substr(0, end - 1);
  }
  if (before >= '0' && before <= '9') return std::nullopt;
  return name.substr(0, end);
}

Status LineError(int line_number, const std::string& what) {
  return DataLossError("/proc/diskstats line " + std::to_string(line_number) + ": " + what);
}

}  // namespace

StatusOr<DiskStats> ParseDiskstats(std::string_view text) {
  std::vector<DiskDeviceStats> all;
  std::vector<std::string_view> fields;
  int line_number = 0;
  while (!text.empty()) {
    std::string_view line = proc_text::NextLine(text);
    ++line_number;
    proc_text::SplitFields(line, fields);
    if (fields.empty()) continue;
    if (fields.size() < kMinColumns) {
      return LineError(line_number,
                       "has " + std::to_string(fields.size()) + " columns, expected at least " +
                           std::to_string(kMinColumns) + ": '" + proc_text::Excerpt(line) + "'");
    }
    for (size_t i = 0; i < kMinColumns; ++i) {
      if (i != kName && !proc_text::ParseUint64(fields[i])) {
        return LineError(line_number, "column " + std::to_string(i + 1) + " is not a number: '" +
                                          proc_text::Excerpt(fields[i]) + "'");
      }
    }
    std::optional<uint64_t> major = proc_text::ParseUint64(fields[kMajor]);
    std::optional<uint64_t> minor = proc_text::ParseUint64(fields[kMinor]);
    if (*major > UINT32_MAX || *minor > UINT32_MAX) {
      return LineError(line_number,
                       "device number out of range: '" + proc_text::Excerpt(line) + "'");
    }
    DiskDeviceStats device;
    device.name = std::string(fields[kName]);
    device.major = static_cast<uint32_t>(*major);
    device.minor = static_cast<uint32_t>(*minor);
    device.reads_completed = *proc_text::ParseUint64(fields[kReadsCompleted]);
    device.sectors_read = *proc_text::ParseUint64(fields[kSectorsRead]);
    device.writes_completed = *proc_text::ParseUint64(fields[kWritesCompleted]);
    device.sectors_written = *proc_text::ParseUint64(fields[kSectorsWritten]);
    all.push_back(std::move(device));
  }

  // A sorted list of names makes the partition test O(n log n): hosts with hundreds of disks
  // exist, and this runs every poll.
  std::vector<std::string_view> names;
  names.reserve(all.size());
  for (const DiskDeviceStats& device : all) names.push_back(device.name);
  std::sort(names.begin(), names.end());
  std::vector<bool> keep(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    std::optional<std::string_view> disk = WholeDiskName(all[i].name);
    bool whole_disk_listed = disk && std::binary_search(names.begin(), names.end(), *disk);
    keep[i] = !IsVirtualOrStacked(all[i].name) && !whole_disk_listed;
  }
  DiskStats stats;
  for (size_t i = 0; i < all.size(); ++i) {
    if (keep[i]) stats.devices.push_back(std::move(all[i]));
  }
  return stats;
}

}  // namespace stepscope
