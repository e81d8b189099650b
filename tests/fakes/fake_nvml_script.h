// Test helpers for the fake NVML (fake_nvml.cc): write a script and point the fake at it, and
// peek at the fake's init count.
//
// Link stepscope::fake_nvml_testing to get this header, the fakes' absolute paths
// (STEPSCOPE_FAKE_NVML_PATH, STEPSCOPE_FAKE_NVML_NO_CLOCK_INFO_PATH,
// STEPSCOPE_FAKE_NVML_BASIC_PATH) and a build dependency on the fakes. Threading: tests only; setenv is not thread-safe, so set scripts before loading.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace stepscope::testing {

inline const char* FakeNvmlPath() { return STEPSCOPE_FAKE_NVML_PATH; }
inline const char* FakeNvmlWithoutClockInfoPath() { return STEPSCOPE_FAKE_NVML_NO_CLOCK_INFO_PATH; }
// The fake without any optional entry point (an old driver).
inline const char* FakeNvmlBasicPath() { return STEPSCOPE_FAKE_NVML_BASIC_PATH; }

// Writes `json` to a fresh temporary file and sets STEPSCOPE_FAKE_NVML_SCRIPT to it; both are
// undone on destruction. The fake reads the script at its next first nvmlInit_v2.
class ScopedFakeNvmlScript {
 public:
  explicit ScopedFakeNvmlScript(std::string_view json) {
    const char* dir = getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/stepscope_fake_nvml_XXXXXX";
    int fd = mkstemp(path_.data());
    ok_ = fd >= 0;
    if (ok_) {
      ok_ = write(fd, json.data(), json.size()) == static_cast<ssize_t>(json.size());
      close(fd);
    }
    setenv("STEPSCOPE_FAKE_NVML_SCRIPT", path_.c_str(), /*overwrite=*/1);
  }
  ~ScopedFakeNvmlScript() {
    unsetenv("STEPSCOPE_FAKE_NVML_SCRIPT");
    std::remove(path_.c_str());
  }
  ScopedFakeNvmlScript(const ScopedFakeNvmlScript&) = delete;
  ScopedFakeNvmlScript& operator=(const ScopedFakeNvmlScript&) = delete;

  // False when the temporary file could not be written; tests should ASSERT on it.
  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool ok_ = false;
};

// Holds its own reference to the fake so it stays loaded (and its state readable) while the
// code under test opens and closes it.
class FakeNvmlProbe {
 public:
  FakeNvmlProbe() : library_(dlopen(FakeNvmlPath(), RTLD_NOW | RTLD_LOCAL)) {
    if (library_) {
      init_count_ = reinterpret_cast<int (*)()>(dlsym(library_, "StepscopeFakeNvmlInitCount"));
      leaked_ = reinterpret_cast<int (*)()>(dlsym(library_, "StepscopeFakeNvmlLeakedAtLastShutdown"));
    }
  }
  ~FakeNvmlProbe() {
    if (library_) dlclose(library_);
  }
  FakeNvmlProbe(const FakeNvmlProbe&) = delete;
  FakeNvmlProbe& operator=(const FakeNvmlProbe&) = delete;

  bool ok() const { return init_count_ != nullptr && leaked_ != nullptr; }
  // nvmlInit_v2 calls not yet matched by nvmlShutdown; -1 if the probe failed to load.
  int InitCount() const { return init_count_ ? init_count_() : -1; }
  // Event sets and GPM samples not freed before the last nvmlShutdown; -1 if the probe failed.
  int LeakedAtLastShutdown() const { return leaked_ ? leaked_() : -1; }

 private:
  void* library_ = nullptr;
  int (*init_count_)() = nullptr;
  int (*leaked_)() = nullptr;
};

}  // namespace stepscope::testing
