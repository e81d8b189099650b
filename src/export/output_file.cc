#include "export/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace stepscope::exporting {

std::string TempPathFor(const std::string& path) {
  return path + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
}

Status CreateParentDirectories(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return OkStatus();
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) {
    return IoError("cannot create directory " + parent.string() + ": " + error.message() +
                   "; pass -o with a writable location");
  }
  return OkStatus();
}

Status RenameInto(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    const int error = errno;
    std::remove(from.c_str());
    return IoError("cannot rename " + from + " to " + to + ": " + std::strerror(error) +
                   "; remove what is at " + to + " or pass another -o");
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path) {
  STEPSCOPE_RETURN_IF_ERROR(CreateParentDirectories(path));
  std::string temp_path = TempPathFor(path);
  std::FILE* file = std::fopen(temp_path.c_str(), "wb");
  if (file == nullptr) {
    return IoError("cannot write " + temp_path + ": " + std::strerror(errno) + "; pass -o with a writable location");
  }
  // A large stdio buffer: the exporters already batch their writes, this keeps syscalls few.
  std::setvbuf(file, nullptr, _IOFBF, 1 << 20);
  return std::unique_ptr<OutputFile>(new OutputFile(path, std::move(temp_path), file));
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(temp_path_.c_str());
}

Status OutputFile::WriteError(int errno_value) const {
  return IoError("cannot write " + temp_path_ + ": " + std::strerror(errno_value) +
                 (errno_value == ENOSPC ? "; free disk space or pass -o on another disk"
                                        : "; pass -o with a writable location"));
}

Status OutputFile::Append(std::string_view bytes) {
  if (file_ == nullptr) return InternalError("write to " + temp_path_ + " after it was closed");
  if (bytes.empty()) return OkStatus();
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) return WriteError(errno);
  return OkStatus();
}

Status OutputFile::Commit() {
  if (file_ == nullptr) return InternalError("commit of " + temp_path_ + " twice");
  std::FILE* file = file_;
  file_ = nullptr;
  // fclose flushes: a full disk shows up here for the last buffer.
  const bool flushed = std::fflush(file) == 0;
  const int flush_errno = errno;
  if (std::fclose(file) != 0 || !flushed) return WriteError(flushed ? errno : flush_errno);
  STEPSCOPE_RETURN_IF_ERROR(RenameInto(temp_path_, path_));
  committed_ = true;
  return OkStatus();
}

}  // namespace stepscope::exporting
