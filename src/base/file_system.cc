#include "base/file_system.h"

#include <dirent.h>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stepscope {

StatusOr<std::string> LocalFileSystem::ReadFile(const std::string& path) const {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return NotFoundError("'" + path + "' does not exist");
    return ErrnoError("open '" + path + "'", err);
  }
  // Read straight into the string, sized from fstat, with kReadFileSlackBytes of spare capacity
  // so parsers that need padding past the end (simdjson) can use it in place. Importers read
  // thousands of files; 16 KB reads appended through a doubling string cost twice the copy.
  std::string out;
  struct stat info;
  size_t expected = 0;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) expected = static_cast<size_t>(info.st_size);
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
    ssize_t n = read(fd, out.data() + size, out.size() - size);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoError("read '" + path + "'", err);
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(size);
  return out;
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
