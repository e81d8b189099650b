// Shared by the fuzzers that hand their input to a reader as files (store_stream, manifest,
// control_file): a scratch folder made once per process, on tmpfs when there is one, and a
// write that aborts instead of failing quietly (a lost write would fuzz the wrong bytes).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace stepscope::fuzz {

inline void WriteFileOrAbort(const std::string& path, std::string_view bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) std::abort();
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  close(fd);
}

// "/dev/shm/stepscope-<what>-fuzz-XXXXXX" (or under /tmp), created; aborts when it cannot be.
inline std::string MakeScratchDirOrAbort(const std::string& what) {
  const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  std::string pattern = std::string(base) + "/stepscope-" + what + "-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  return pattern;
}

}  // namespace stepscope::fuzz
