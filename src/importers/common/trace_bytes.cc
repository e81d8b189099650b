#include "importers/common/trace_bytes.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <limits>

namespace stepscope::analysis {
namespace {

bool IsGzip(std::string_view raw) {
  return raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b;
}

// Inflates every gzip member in `raw` (concatenated members are legal and `cat a.gz b.gz` makes
// them). A member cut short sets `truncated`; corrupt deflate data is an error naming the
// compressed offset.
Status Inflate(std::string_view name, std::string_view raw, size_t padding_bytes, TraceBytes* out) {
  z_stream stream{};
  // 15 + 32: any window size, gzip or zlib header detected automatically.
  if (inflateInit2(&stream, 15 + 32) != Z_OK) return InternalError("zlib inflateInit2 failed");
  std::string& bytes = out->bytes;
  bytes.resize(std::max<size_t>(raw.size() * 4, 4096));
  size_t produced = 0;
  size_t consumed = 0;
  Status status;
  while (true) {
    const size_t in_chunk = std::min<size_t>(raw.size() - consumed, std::numeric_limits<uInt>::max());
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + consumed));
    stream.avail_in = static_cast<uInt>(in_chunk);
    if (produced == bytes.size()) bytes.resize(bytes.size() * 2);
    const size_t out_chunk = std::min<size_t>(bytes.size() - produced, std::numeric_limits<uInt>::max());
    stream.next_out = reinterpret_cast<Bytef*>(bytes.data() + produced);
    stream.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&stream, Z_NO_FLUSH);
    consumed += in_chunk - stream.avail_in;
    produced += out_chunk - stream.avail_out;
    if (rc == Z_STREAM_END) {
      // Another member follows only if its magic does; trailing garbage (zero padding from some
      // copy tools) is ignored, as gzip(1) does.
      if (!IsGzip(raw.substr(consumed))) break;
      inflateReset(&stream);
      continue;
    }
    if (rc == Z_BUF_ERROR || (rc == Z_OK && consumed == raw.size() && stream.avail_out != 0)) {
      if (consumed == raw.size()) {
        out->truncated = true;
        break;
      }
      continue;  // out of output space: grow and go on
    }
    if (rc != Z_OK) {
      status = DataLossError(std::string(name) + ": corrupt gzip data near compressed byte " + std::to_string(consumed) +
                             " (" + (stream.msg != nullptr ? stream.msg : "inflate failed") +
                             "); re-copy or re-export the trace");
      break;
    }
  }
  inflateEnd(&stream);
  if (!status.ok()) return status;
  bytes.resize(produced);
  bytes.reserve(produced + padding_bytes);
  return OkStatus();
}

}  // namespace

StatusOr<TraceBytes> DecodeTraceBytes(std::string_view name, std::string_view raw, size_t padding_bytes) {
  TraceBytes out;
  out.compressed_bytes = raw.size();
  if (!IsGzip(raw)) {
    out.bytes.reserve(raw.size() + padding_bytes);
    out.bytes.assign(raw);
    return out;
  }
  out.was_gzip = true;
  STEPSCOPE_RETURN_IF_ERROR(Inflate(name, raw, padding_bytes, &out));
  return out;
}

StatusOr<TraceBytes> ReadTraceFile(const std::string& path, size_t padding_bytes) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return ErrnoError("open '" + path + "'", errno);
  std::string raw;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) raw.append(chunk, n);
  const bool failed = std::ferror(file) != 0;
  const int read_errno = errno;
  std::fclose(file);
  if (failed) return ErrnoError("read '" + path + "'", read_errno);
  if (!IsGzip(raw)) {
    TraceBytes out;
    out.compressed_bytes = raw.size();
    raw.reserve(raw.size() + padding_bytes);
    out.bytes = std::move(raw);
    return out;
  }
  return DecodeTraceBytes(path, raw, padding_bytes);
}

}  // namespace stepscope::analysis
