// A fresh directory for one test (under ::testing::TempDir()), removed with everything in it
// when the object goes. Tests that write files (runs, rings, FIFOs, links) each make their own.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace stepscope {

class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern = ::testing::TempDir() + "stepscope-test-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "cannot create a directory under " << ::testing::TempDir();
  }
  ~TempDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;

  const std::string& path() const { return path_; }
  // `name` inside the directory.
  std::string Path(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace stepscope
