// Parser for /proc/diskstats: cumulative I/O counters of the block devices whose traffic is
// real device traffic. Called by sampler/disk_source.cc once per poll.
//
// Which devices are kept, and why (the sampler sums them into host-wide disk metrics, so a
// byte must be counted once):
//   - loopN, ramN, zramN are skipped: loop I/O is replayed on the disk holding the backing
//     file (counted there), ram/zram are memory, not disk.
//   - dm-N (LVM, dm-crypt, multipath) and mdN (software RAID) are skipped: the kernel reissues
//     their I/O to member devices, which /proc/diskstats also lists; counting both would
//     double it. What remains is the traffic the physical devices actually served (a RAID1
//     write counts once per mirror, as the disks do it).
//   - a partition is skipped when its whole disk is listed (the disk's counters include it):
//     "sda1" of "sda", "nvme0n1p2" of "nvme0n1", "mmcblk0p1" of "mmcblk0". A partition whose
//     disk is not listed is kept.
//   - everything else is kept (sdX, vdX, xvdX, nvmeXnY, nbdN, rbdN, srN, ...).
//
// Threading: a pure function, safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stepscope {

// /proc/diskstats counts sectors of 512 bytes whatever the device's real sector size.
inline constexpr uint64_t kDiskstatsSectorBytes = 512;

struct DiskDeviceStats {
  std::string name;  // "nvme0n1"
  uint32_t major = 0;
  uint32_t minor = 0;
  uint64_t reads_completed = 0;
  uint64_t sectors_read = 0;  // x kDiskstatsSectorBytes
  uint64_t writes_completed = 0;
  uint64_t sectors_written = 0;  // x kDiskstatsSectorBytes
};

struct DiskStats {
  std::vector<DiskDeviceStats> devices;  // the counted devices (see above), in file order
};

// Parses the text of /proc/diskstats (14, 18 or 20 columns per line depending on the kernel;
// at least 14 are required). A short or non-numeric line gives DataLoss naming the line.
StatusOr<DiskStats> ParseDiskstats(std::string_view text);

}  // namespace stepscope
