// Test-only helper: reads the /proc text captured from real machines under tests/data/proc/.
// Used by the platform/linux and sampler unit tests; not part of any library.
//
// The data root comes from STEPSCOPE_TEST_DATA (set by ctest), else from the path CMake
// compiled in, so the test binaries also run directly.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "base/file_system.h"

namespace stepscope::testing {

inline std::string ProcTestDataPath(const std::string& relative) {
  const char* env = std::getenv("STEPSCOPE_TEST_DATA");
  std::string root = env != nullptr && *env != '\0' ? env : STEPSCOPE_TEST_DATA_DIR;
  return root + "/proc/" + relative;
}

// The captured file's text; fails the calling test (and returns "") if it cannot be read.
inline std::string ReadProcTestData(const std::string& relative) {
  StatusOr<std::string> text = LocalFileSystem().ReadFile(ProcTestDataPath(relative));
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : std::string();
}

}  // namespace stepscope::testing
