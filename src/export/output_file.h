// A file written under a temporary name and renamed into place only when complete, so an export
// that fails part-way (full disk, killed) never leaves a truncated file under the final name.
//
//   <path>.tmp-<pid>   while writing; removed by the destructor unless Commit() succeeded
//   <path>             after Commit()
//
// Callers: the Chrome trace and CSV exporters (TextSink), the SQLite exporter (TempPath only:
// SQLite writes the file itself). Not thread-safe; one writer per file.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stepscope::exporting {

// Where bytes go: a file (OutputFile) or a string (tests).
class TextSink {
 public:
  virtual ~TextSink() = default;
  virtual Status Append(std::string_view bytes) = 0;
};

class StringSink final : public TextSink {
 public:
  Status Append(std::string_view bytes) override {
    text_.append(bytes);
    return OkStatus();
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// "<path>.tmp-<pid>": the name a file is written under before it is renamed to `path`.
std::string TempPathFor(const std::string& path);

// Creates the parent directories of `path`. Errors name the directory and what to do.
Status CreateParentDirectories(const std::string& path);

// Renames `from` to `to` (same directory). Errors name both paths.
Status RenameInto(const std::string& from, const std::string& to);

class OutputFile final : public TextSink {
 public:
  // Opens TempPathFor(path) for writing, creating parent directories.
  static StatusOr<std::unique_ptr<OutputFile>> Create(const std::string& path);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Errors (ENOSPC, EIO) name the temporary file and suggest another -o.
  Status Append(std::string_view bytes) override;
  // Flushes, closes and renames the file to its final name.
  Status Commit();

  const std::string& path() const { return path_; }

 private:
  OutputFile(std::string path, std::string temp_path, std::FILE* file)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), file_(file) {}
  Status WriteError(int errno_value) const;

  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace stepscope::exporting
