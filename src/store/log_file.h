// A stream's .log file: append-only, checksummed frames (format.h).
//
// LogWriter: callers are the recorder's intern path (string frames, under its own lock) and
// the flusher (block, clock, stats frames). Each frame goes out in one write(2) on an O_APPEND
// descriptor, so frames from different threads never interleave, and once write returns the
// frame is in the page cache and survives the death of the process.
//
// ReadLogFrames: parses a whole log from untrusted bytes. A frame with a bad header, length or
// checksum is skipped and reported; parsing resumes at the next frame magic, so one torn frame
// (a full disk, a crash mid-write) costs only itself.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/format.h"

namespace stepscope::store {

class LogWriter {
 public:
  // Creates or empties `path`: callers hold the stream's ring lock (StreamWriter::Create).
  static StatusOr<std::unique_ptr<LogWriter>> Create(const std::string& path, uint64_t stream_id);
  // Opens an existing log for appending (used by the compactor after the writer died).
  static StatusOr<std::unique_ptr<LogWriter>> OpenForAppend(const std::string& path);
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  Status Append(FrameType type, std::string_view payload);
  Status Sync();
  uint64_t bytes_written() const { return bytes_written_; }
  const std::string& path() const { return path_; }
  void AbandonAfterFork();

 private:
  LogWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
  uint64_t bytes_written_ = 0;
};

// XXH64 of the payload seeded with the frame type (format.h FrameHeader::checksum).
uint64_t FrameChecksum(FrameType type, std::string_view payload);

struct LogFrame {
  FrameType type;
  uint64_t offset;          // of the frame header in the file
  std::string_view payload;  // points into the caller's buffer
};

struct LogParseResult {
  uint64_t stream_id = 0;
  uint32_t version = 0;
  bool header_damaged = false;  // frames were recovered by scanning; problems[0] says why
  std::vector<LogFrame> frames;
  std::vector<std::string> problems;  // "skipped N bytes at offset X: <why>"
  // File offset up to which the bytes were parsed: the end of the file, or, with
  // LogTail::kMayGrow, the start of a frame the writer has not finished yet. A reader that
  // follows the log resumes here (ParseLogTail).
  uint64_t parsed_until = 0;
};

// What the end of the bytes means. kFinal: the writer is gone, so a frame cut short there is
// damage (reported). kMayGrow: the writer may be appending it right now, so parsing stops before
// it, silently, and parsed_until points at it.
enum class LogTail : uint8_t { kFinal, kMayGrow };

// Versions above kFormatVersion by at most this much are taken as a newer writer's (refused);
// any other unreadable version is a damaged header.
inline constexpr uint32_t kPlausibleNewerVersions = 16;

// Parses `bytes` (the whole file). Fails only when the file is shorter than a header or is a
// newer format; a damaged header is reported and every intact frame behind it recovered.
StatusOr<LogParseResult> ParseLog(std::string_view bytes, LogTail tail = LogTail::kFinal);

// Parses bytes a log gained after `tail_offset` (a previous result's parsed_until): frames only,
// no header. Offsets in frames and problems are the file's.
LogParseResult ParseLogTail(std::string_view bytes, uint64_t tail_offset, LogTail tail);

}  // namespace stepscope::store
