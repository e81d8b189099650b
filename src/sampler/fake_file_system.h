// Test-only FileSystem serving in-memory files, so the sources can be fed captured /proc
// snapshots one after another. Used by the sampler unit tests; not part of any library.
//
// Threading: not thread-safe; tests change it only while no sampler thread reads it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/file_system.h"

namespace stepscope::testing {

class FakeFileSystem : public FileSystem {
 public:
  void SetFile(const std::string& path, std::string text) { files_[path] = std::move(text); }
  void RemoveFile(const std::string& path) { files_.erase(path); }
  // Replaces every "<proc_root>/<pid>/stat" with one file per line of `pid_stats` (the format
  // of tests/data/proc/*/pid_stats: one /proc/<pid>/stat text per line, pid first).
  void SetPidStats(const std::string& proc_root, const std::string& pid_stats) {
    for (auto it = files_.begin(); it != files_.end();) {
      bool is_pid_stat = it->first.rfind(proc_root + "/", 0) == 0 && it->first.size() > 5 &&
                         it->first.compare(it->first.size() - 5, 5, "/stat") == 0 &&
                         it->first != proc_root + "/stat";
      it = is_pid_stat ? files_.erase(it) : std::next(it);
    }
    size_t start = 0;
    while (start < pid_stats.size()) {
      size_t end = pid_stats.find('\n', start);
      end = end == std::string::npos ? pid_stats.size() : end + 1;
      std::string line = pid_stats.substr(start, end - start);
      SetFile(proc_root + "/" + line.substr(0, line.find(' ')) + "/stat", line);
      start = end;
    }
  }

  // How many times ReadFile() was asked for `path`.
  int reads(const std::string& path) const {
    auto it = reads_.find(path);
    return it == reads_.end() ? 0 : it->second;
  }

  StatusOr<std::string> ReadFile(const std::string& path) const override {
    ++reads_[path];
    auto it = files_.find(path);
    if (it == files_.end()) return NotFoundError("'" + path + "' does not exist");
    return it->second;
  }

  // How many times ListDirectory() was called, for any path.
  int listings() const { return listings_; }

  // The first path component below `path` of every file under it.
  StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) const override {
    ++listings_;
    std::string prefix = path + "/";
    std::set<std::string> names;
    for (const auto& [file, text] : files_) {
      if (file.rfind(prefix, 0) != 0) continue;
      std::string rest = file.substr(prefix.size());
      names.insert(rest.substr(0, rest.find('/')));
    }
    if (names.empty()) return NotFoundError("directory '" + path + "' does not exist");
    return std::vector<std::string>(names.begin(), names.end());
  }

 private:
  std::map<std::string, std::string> files_;
  mutable std::map<std::string, int> reads_;
  mutable int listings_ = 0;
};

}  // namespace stepscope::testing
