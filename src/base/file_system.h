// Read-only file-system access behind an interface, so /proc and /sys readers can be fed
// captured text in tests (the idea of NVIDIA/DCGM's FileSystemOperator), and the one way files
// from untrusted directories are opened: regular files only, never blocking, bounded in size.
//
// Threading: implementations are stateless and safe to share between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace stepscope {

// Whether a reader follows a symbolic link at the end of a path. Files found inside a run
// directory are read with kRefuse: a link there could lead anywhere (another user's file,
// /dev/zero), and a run is read only through its own files. Paths a user names are followed.
enum class Symlinks { kFollow, kRefuse };

// Owns a file descriptor and closes it on destruction. Move-only.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd();
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// Opens `path` read-only if it is a regular file, without ever blocking: a FIFO, device, socket
// or directory is refused before it is opened (opening a FIFO waits for a writer; reading
// /dev/zero never ends), and the descriptor is checked again in case the path changed in
// between. Errors are one line naming the path, what it is and what to do.
StatusOr<ScopedFd> OpenRegularFile(const std::string& path, Symlinks symlinks);

// No limit but the machine's memory: a file larger than that cannot be read into it.
inline constexpr uint64_t kNoSizeLimit = UINT64_MAX;

// The whole of a regular file opened as by OpenRegularFile, with kReadFileSlackBytes of spare
// capacity. A file larger than `max_bytes` (or than the machine's memory) is refused before it
// is read, and so is one that grows past it while being read. `from_offset` > 0 reads only the
// bytes from there on (what was appended to a log since a reader last looked); `max_bytes` then
// bounds those.
StatusOr<std::string> ReadRegularFile(const std::string& path, Symlinks symlinks, uint64_t max_bytes = kNoSizeLimit,
                                      uint64_t from_offset = 0);

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

// The real file system. ReadFile reads regular files only (following links): /proc and /sys
// files are regular; a FIFO or a device is refused rather than waited on or read forever.
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

// Creates `path` holding `data` only if nothing is there yet, atomically: of several processes
// creating the same path at once exactly one gets true, and nobody ever sees half a file. False
// (and nothing changed) when `path` exists. The file is written under a dot name beside it and
// hard-linked into place, which fails rather than replaces.
StatusOr<bool> CreateFileAtomically(const std::string& path, const std::string& data);

// mkdir -p; an error names the directory and the reason (permissions, full disk, ...).
Status CreateDirectories(const std::string& path);

}  // namespace stepscope
