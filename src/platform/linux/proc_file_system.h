// A FileSystem for /proc that keeps the files it reads open and re-reads them with pread()
// from offset 0, which makes the kernel regenerate their text. The sampler reads the same few
// files every poll, and on small VMs an open()+close() of a /proc file costs about as much as
// reading it (sampler_cost_benchmark), so this keeps the always-on sampler within its budget.
// google/perfetto's sys_stats data source keeps its /proc fds open for the same reason.
//
// At most kMaxOpenFiles stay open (least recently read closed first). A cached descriptor of
// /proc/<pid>/... keeps naming the process it was opened for: once that process is gone its
// reads fail with ESRCH, and ReadFile() then reopens the path, so a recycled pid is read
// afresh. Directory listings are not cached. Meant for /proc: a regular file replaced by
// rename() would keep being read through the old descriptor.
//
// Used by the CLI and the benchmark in place of LocalFileSystem for the sampler's sources;
// tests use a fake FileSystem instead.
//
// Threading: safe to share between threads (one mutex; the sampler's thread is normally the
// only caller, so it is uncontended). Unlike LocalFileSystem it holds state: open descriptors,
// all O_CLOEXEC so a job started after it does not inherit them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/file_system.h"

namespace stepscope {

class ProcFileSystem : public FileSystem {
 public:
  static constexpr size_t kMaxOpenFiles = 64;

  ProcFileSystem() = default;
  ~ProcFileSystem() override;
  ProcFileSystem(const ProcFileSystem&) = delete;
  ProcFileSystem& operator=(const ProcFileSystem&) = delete;

  StatusOr<std::string> ReadFile(const std::string& path) const override;
  StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) const override;

  // Descriptors currently kept open (for tests and the overhead report).
  size_t open_files() const;

 private:
  struct OpenFile {
    int fd = -1;
    uint64_t last_read = 0;  // value of reads_ at the last read, for eviction
  };

  void CloseLeastRecentlyRead() const;  // requires mutex_

  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, OpenFile> files_;  // guarded by mutex_
  mutable uint64_t reads_ = 0;                               // guarded by mutex_
  LocalFileSystem local_;
};

}  // namespace stepscope
