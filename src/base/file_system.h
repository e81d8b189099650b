// Read-only file-system access behind an interface, so /proc and /sys readers can be fed
// captured text in tests (the idea of NVIDIA/DCGM's FileSystemOperator).
//
// Threading: implementations are stateless and safe to share between threads.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"

namespace stepscope {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // The whole file. /proc files report size 0, so implementations read until EOF.
  virtual StatusOr<std::string> ReadFile(const std::string& path) const = 0;
  // Names (not paths) of the entries of a directory, unsorted, without "." and "..".
  virtual StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) const = 0;
};

// LocalFileSystem::ReadFile leaves at least this much spare capacity past the file's bytes, so
// parsers that read ahead (simdjson needs 64 bytes) can use the string in place.
inline constexpr size_t kReadFileSlackBytes = 64;

// The real file system.
class LocalFileSystem : public FileSystem {
 public:
  StatusOr<std::string> ReadFile(const std::string& path) const override;
  StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) const override;
};

// Writes `data` to `path` atomically (temporary file in the same directory, rename) so a
// reader never sees half a file, even if this process dies mid-write. It does not fsync: the
// files written this way (manifests, configs, rule outputs, reports) are no more durable than
// the run's data, which reaches the disk when the kernel writes it back; only compaction syncs
// a log before deleting its ring (store/stream_reader.cc). A sync per file cost 1-70 ms each
// on a busy disk, and `stepscope run -- python -c pass` wrote 25 such files, 21 of them after
// the job had exited (benchmarks/run_startup_benchmark.py).
Status WriteFileAtomically(const std::string& path, const std::string& data);

// mkdir -p; an error names the directory and the reason (permissions, full disk, ...).
Status CreateDirectories(const std::string& path);

}  // namespace stepscope
