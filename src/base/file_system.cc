#include "base/file_system.h"

#include <dirent.h>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stepscope {

namespace {

// What a file that is not a regular one is, for the error that refuses it.
const char* FileTypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Status NotRegularError(const std::string& path, mode_t mode) {
  if (S_ISLNK(mode)) {
    return InvalidArgumentError("'" + path + "' is a symbolic link, which stepscope does not follow here (it could " +
                                "lead out of the directory being read); replace it with the file itself");
  }
  return InvalidArgumentError("'" + path + "' is " + FileTypeName(mode) + ", not a regular file; stepscope reads " +
                              "only regular files (replace it with the file itself)");
}

uint64_t MemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes);
}

Status TooLargeError(const std::string& path, uint64_t size, uint64_t max_bytes, bool memory_bound) {
  return InvalidArgumentError("'" + path + "' is " + std::to_string(size) + " bytes, more than " +
                              (memory_bound ? "this machine's memory (" + std::to_string(max_bytes) + " bytes)"
                                            : "the " + std::to_string(max_bytes) + " bytes such a file can be") +
                              "; it is not a file stepscope wrote (remove or replace it)");
}

}  // namespace

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) close(fd_);
}

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

StatusOr<ScopedFd> OpenRegularFile(const std::string& path, Symlinks symlinks) {
  // Look before opening: opening a device can itself act (a tape rewinds, a watchdog arms).
  struct stat before;
  const int looked = symlinks == Symlinks::kRefuse ? lstat(path.c_str(), &before) : stat(path.c_str(), &before);
  if (looked != 0) {
    const int err = errno;
    if (err == ENOENT) return NotFoundError("'" + path + "' does not exist");
    return ErrnoError("open '" + path + "'", err);
  }
  if (!S_ISREG(before.st_mode)) return NotRegularError(path, before.st_mode);
  // O_NONBLOCK: should the path have become a FIFO since, the open returns instead of waiting.
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (symlinks == Symlinks::kRefuse ? O_NOFOLLOW : 0);
  ScopedFd fd(open(path.c_str(), flags));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ELOOP && symlinks == Symlinks::kRefuse) return NotRegularError(path, S_IFLNK);
    if (err == ENOENT) return NotFoundError("'" + path + "' does not exist");
    return ErrnoError("open '" + path + "'", err);
  }
  struct stat opened;
  if (fstat(fd.get(), &opened) != 0) return ErrnoError("stat '" + path + "'", errno);
  if (!S_ISREG(opened.st_mode)) return NotRegularError(path, opened.st_mode);
  // Reads of a regular file never block; clearing the flag keeps them plain all the same.
  fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

StatusOr<std::string> ReadRegularFile(const std::string& path, Symlinks symlinks, uint64_t max_bytes,
                                      uint64_t from_offset) {
  const uint64_t memory = MemoryBytes();
  const bool memory_bound = memory < max_bytes;
  if (memory_bound) max_bytes = memory;
  STEPSCOPE_ASSIGN_OR_RETURN(ScopedFd fd, OpenRegularFile(path, symlinks));
  if (from_offset > 0 && lseek(fd.get(), static_cast<off_t>(from_offset), SEEK_SET) < 0) {
    return ErrnoError("seek in '" + path + "'", errno);
  }
  // Read straight into the string, sized from fstat, with kReadFileSlackBytes of spare capacity
  // so parsers that need padding past the end (simdjson) can use it in place. Importers read
  // thousands of files; 16 KB reads appended through a doubling string cost twice the copy.
  std::string out;
  struct stat info;
  size_t expected = 0;
  if (fstat(fd.get(), &info) == 0 && static_cast<uint64_t>(info.st_size) > from_offset) {
    const uint64_t remaining = static_cast<uint64_t>(info.st_size) - from_offset;
    if (remaining > max_bytes) return TooLargeError(path, remaining, max_bytes, memory_bound);
    expected = static_cast<size_t>(remaining);
  }
  // /proc and /sys files report size 0: start small (the sampler reads them every poll).
  size_t room = expected > 0 ? expected + 1 : 4096;  // +1: the read that returns 0 needs no regrow
  out.reserve(room + kReadFileSlackBytes);
  size_t size = 0;
  for (;;) {
    if (size == out.size()) {
      if (size >= room) room = std::max(room * 2, size + 4096);
      out.reserve(room + kReadFileSlackBytes);
      out.resize(room);
    }
    ssize_t n = read(fd.get(), out.data() + size, out.size() - size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read '" + path + "'", errno);
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
    // A file growing while it is read (a log being appended) stops being read at the bound.
    if (size > max_bytes) return TooLargeError(path, size, max_bytes, memory_bound);
  }
  out.resize(size);
  return out;
}

StatusOr<std::string> LocalFileSystem::ReadFile(const std::string& path) const {
  return ReadRegularFile(path, Symlinks::kFollow);
}

StatusOr<std::vector<std::string>> LocalFileSystem::ListDirectory(const std::string& path) const {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    int err = errno;
    if (err == ENOENT) return NotFoundError("directory '" + path + "' does not exist");
    return ErrnoError("list '" + path + "'", err);
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    names.emplace_back(entry->d_name);
  }
  closedir(dir);
  return names;
}

Status WriteFileAtomically(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create '" + tmp + "'", errno);
  size_t written = 0;
  while (written < data.size()) {
    ssize_t n = write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return ErrnoError("write '" + tmp + "'", err);
    }
    written += static_cast<size_t>(n);
  }
  // Network file systems report a failed write-back at close (EINTR: closed, outcome unknown).
  if (close(fd) != 0 && errno != EINTR) {
    int err = errno;
    unlink(tmp.c_str());
    return ErrnoError("write '" + tmp + "'", err);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return ErrnoError("rename '" + tmp + "' to '" + path + "'", err);
  }
  return OkStatus();
}

StatusOr<bool> CreateFileAtomically(const std::string& path, const std::string& data) {
  const size_t slash = path.rfind('/');
  const size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  // A dot name: readers listing the directory for final names never pick it up.
  const std::string temporary =
      path.substr(0, name_at) + "." + path.substr(name_at) + ".new." + std::to_string(getpid());
  STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(temporary, data));
  const int linked = link(temporary.c_str(), path.c_str());
  const int link_errno = errno;
  unlink(temporary.c_str());
  if (linked == 0) return true;
  if (link_errno == EEXIST) return false;
  return ErrnoError("create '" + path + "'", link_errno);
}

Status CreateDirectories(const std::string& path) {
  if (path.empty()) return OkStatus();
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("create directory '" + partial + "'", errno);
    }
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return IoError("'" + path + "' exists but is not a directory; choose another --out");
  }
  return OkStatus();
}

}  // namespace stepscope
