#include "store/log_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

namespace stepscope::store {
namespace {

Status WriteAll(int fd, const std::string& path, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write '" + path + "'", errno);
    }
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

uint64_t FrameChecksum(FrameType type, std::string_view payload) {
  // Seeding with the type makes a flipped type byte fail the check like a flipped payload byte.
  return XXH64(payload.data(), payload.size(), static_cast<uint64_t>(type));
}

StatusOr<std::unique_ptr<LogWriter>> LogWriter::Create(const std::string& path, uint64_t stream_id) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create '" + path + "'", errno);
  LogHeader header{};
  std::memcpy(header.magic, kLogMagic, sizeof kLogMagic);
  header.version = kFormatVersion;
  header.header_bytes = sizeof(LogHeader);
  header.stream_id = stream_id;
  Status written = WriteAll(fd, path, reinterpret_cast<const char*>(&header), sizeof header);
  if (!written.ok()) {
    close(fd);
    return written;
  }
  auto writer = std::unique_ptr<LogWriter>(new LogWriter(path, fd));
  writer->bytes_written_ = sizeof header;
  return writer;
}

StatusOr<std::unique_ptr<LogWriter>> LogWriter::OpenForAppend(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);  // never a FIFO's wait
  if (fd < 0) return ErrnoError("open '" + path + "' for appending", errno);
  return std::unique_ptr<LogWriter>(new LogWriter(path, fd));
}

LogWriter::~LogWriter() {
  if (fd_ >= 0) close(fd_);
}

void LogWriter::AbandonAfterFork() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Status LogWriter::Append(FrameType type, std::string_view payload) {
  if (fd_ < 0) return InternalError("log '" + path_ + "' is closed");
  if (payload.size() > kMaxFramePayloadBytes) return InternalError("frame too large for '" + path_ + "'");
  FrameHeader header{};
  header.magic = kFrameMagic;
  header.type = static_cast<uint8_t>(type);
  header.payload_bytes = static_cast<uint32_t>(payload.size());
  header.checksum = FrameChecksum(type, payload);
  std::string frame;
  frame.reserve(sizeof header + payload.size());
  frame.append(reinterpret_cast<const char*>(&header), sizeof header);
  frame.append(payload);
  STEPSCOPE_RETURN_IF_ERROR(WriteAll(fd_, path_, frame.data(), frame.size()));
  bytes_written_ += frame.size();
  return OkStatus();
}

Status LogWriter::Sync() {
  if (fd_ >= 0 && fdatasync(fd_) != 0) return ErrnoError("sync '" + path_ + "'", errno);
  return OkStatus();
}

namespace {

// Frames of bytes[pos..] whose file offset is base + index. With kMayGrow, a frame cut short
// by the end of the bytes ends the parse there, unreported (its writer is still writing it).
void ParseFrames(std::string_view bytes, size_t pos, uint64_t base, LogTail tail, LogParseResult& result) {
  size_t skip_start = SIZE_MAX;
  std::string skip_reason;
  auto finish_skip = [&](size_t end) {
    if (skip_start == SIZE_MAX) return;
    result.problems.push_back("skipped " + std::to_string(end - skip_start) + " bytes at offset " +
                              std::to_string(base + skip_start) + ": " + skip_reason);
    skip_start = SIZE_MAX;
  };
  auto start_skip = [&](size_t at, std::string why) {
    if (skip_start == SIZE_MAX) {
      skip_start = at;
      skip_reason = std::move(why);
    }
  };
  while (pos < bytes.size()) {
    if (bytes.size() - pos < sizeof(FrameHeader)) {
      if (tail == LogTail::kMayGrow && skip_start == SIZE_MAX) break;
      start_skip(pos, "truncated frame header at the end of the file");
      pos = bytes.size();
      break;
    }
    FrameHeader frame;
    std::memcpy(&frame, bytes.data() + pos, sizeof frame);
    if (frame.magic != kFrameMagic) {
      start_skip(pos, "no frame marker");
      ++pos;
      continue;
    }
    if (frame.type == 0 || frame.type > kMaxFrameType || frame.payload_bytes > kMaxFramePayloadBytes) {
      start_skip(pos, "invalid frame header");
      ++pos;
      continue;
    }
    if (bytes.size() - pos - sizeof frame < frame.payload_bytes) {
      // A whole header with its payload still to come: the frame being appended right now.
      if (tail == LogTail::kMayGrow && skip_start == SIZE_MAX) break;
      start_skip(pos, "frame truncated (the writer stopped mid-write)");
      ++pos;
      continue;
    }
    std::string_view payload = bytes.substr(pos + sizeof frame, frame.payload_bytes);
    if (FrameChecksum(static_cast<FrameType>(frame.type), payload) != frame.checksum) {
      start_skip(pos, "checksum mismatch");
      ++pos;
      continue;
    }
    finish_skip(pos);
    result.frames.push_back({static_cast<FrameType>(frame.type), base + pos, payload});
    pos += sizeof frame + frame.payload_bytes;
  }
  finish_skip(pos);
  result.parsed_until = base + pos;
}

}  // namespace

StatusOr<LogParseResult> ParseLog(std::string_view bytes, LogTail tail) {
  if (bytes.size() < sizeof(LogHeader)) {
    return DataLossError("log is " + std::to_string(bytes.size()) + " bytes, shorter than its header");
  }
  LogHeader header;
  std::memcpy(&header, bytes.data(), sizeof header);
  // A damaged header (a flipped byte, a bad sector) must not cost the frames behind it: each
  // frame carries its own marker and checksum, so they are recovered by scanning for frames
  // from the end of a version-1 header. Only a plausible newer version is refused, since its
  // frames may mean something else.
  std::string header_damage;
  if (std::memcmp(header.magic, kLogMagic, sizeof kLogMagic) != 0) {
    header_damage = "bad magic";
  } else if (header.version > kFormatVersion && header.version <= kFormatVersion + kPlausibleNewerVersions) {
    return UnimplementedError("log format version " + std::to_string(header.version) +
                              "; this stepscope reads versions " + std::to_string(kOldestReadableFormatVersion) +
                              " to " + std::to_string(kFormatVersion) + " (upgrade stepscope)");
  } else if (header.version < kOldestReadableFormatVersion || header.version > kFormatVersion) {
    header_damage = "version field reads " + std::to_string(header.version);
  } else if (header.header_bytes != sizeof(LogHeader)) {
    header_damage = "header size field reads " + std::to_string(header.header_bytes);
  }
  LogParseResult result;
  result.stream_id = header.stream_id;
  result.version = header_damage.empty() ? header.version : kFormatVersion;
  result.header_damaged = !header_damage.empty();

  ParseFrames(bytes, sizeof(LogHeader), 0, tail, result);
  if (result.header_damaged && result.frames.empty()) {
    return DataLossError("not a stepscope log (" + header_damage + ") and no intact frame in it");
  }
  if (result.header_damaged) {
    // Said first: it is the reason the frames below were found by scanning.
    result.problems.insert(result.problems.begin(),
                           "the log header is damaged (" + header_damage + "); skipped its " +
                               std::to_string(sizeof(LogHeader)) + " bytes and recovered " +
                               std::to_string(result.frames.size()) + " frames whose checksums hold");
  }
  return result;
}

LogParseResult ParseLogTail(std::string_view bytes, uint64_t tail_offset, LogTail tail) {
  LogParseResult result;
  result.version = kFormatVersion;
  ParseFrames(bytes, 0, tail_offset, tail, result);
  return result;
}

}  // namespace stepscope::store
