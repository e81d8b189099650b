#include "platform/linux/proc_file_system.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace stepscope {
namespace {

// Reads the whole file from offset 0. Returns the errno of a failed read, 0 on success.
int PreadAll(int fd, std::string& out) {
  out.clear();
  char buffer[16384];
  off_t offset = 0;
  for (;;) {
    ssize_t n = pread(fd, buffer, sizeof buffer, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return 0;
    out.append(buffer, static_cast<size_t>(n));
    offset += n;
  }
}

}  // namespace

ProcFileSystem::~ProcFileSystem() {
  for (auto& [path, file] : files_) close(file.fd);
}

size_t ProcFileSystem::open_files() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return files_.size();
}

void ProcFileSystem::CloseLeastRecentlyRead() const {
  auto oldest = files_.begin();
  for (auto it = files_.begin(); it != files_.end(); ++it) {
    if (it->second.last_read < oldest->second.last_read) oldest = it;
  }
  if (oldest == files_.end()) return;
  close(oldest->second.fd);
  files_.erase(oldest);
}

StatusOr<std::string> ProcFileSystem::ReadFile(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mutex_);
  ++reads_;
  std::string text;
  auto cached = files_.find(path);
  if (cached != files_.end()) {
    // An empty read is retried on a fresh descriptor too, in case the descriptor went stale;
    // a file that really is empty just costs an extra open.
    if (PreadAll(cached->second.fd, text) == 0 && !text.empty()) {
      cached->second.last_read = reads_;
      return text;
    }
    close(cached->second.fd);
    files_.erase(cached);
  }

  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ESRCH) return NotFoundError("'" + path + "' does not exist");
    return ErrnoError("open '" + path + "'", err);
  }
  int err = PreadAll(fd, text);
  if (err != 0) {
    close(fd);
    if (err == ESRCH) return NotFoundError("'" + path + "': the process is gone");
    return ErrnoError("read '" + path + "'", err);
  }
  if (files_.size() >= kMaxOpenFiles) CloseLeastRecentlyRead();
  files_[path] = OpenFile{fd, reads_};
  return text;
}

StatusOr<std::vector<std::string>> ProcFileSystem::ListDirectory(const std::string& path) const {
  return local_.ListDirectory(path);
}

}  // namespace stepscope
