#include "importers/common/gzip_text.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace stepscope::analysis {

StatusOr<std::string> GunzipText(std::string_view compressed, std::string_view file_name, size_t max_bytes) {
  const std::string fix = "re-copy the file, or check it with `gzip -t`";
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (not a raw or zlib stream).
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return InternalError(std::string(file_name) + ": zlib could not start inflating");
  }
  std::string out;
  size_t consumed = 0;
  int result = Z_OK;
  char buffer[1 << 16];
  while (consumed < compressed.size()) {
    const size_t chunk = std::min<size_t>(compressed.size() - consumed, UINT_MAX);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + consumed));
    stream.avail_in = static_cast<uInt>(chunk);
    do {
      stream.next_out = reinterpret_cast<Bytef*>(buffer);
      stream.avail_out = sizeof(buffer);
      result = inflate(&stream, Z_NO_FLUSH);
      // Z_BUF_ERROR: no progress possible because the input ran out; the truncation check
      // below reports it.
      if (result == Z_BUF_ERROR) result = Z_OK;
      if (result != Z_OK && result != Z_STREAM_END) break;
      out.append(buffer, sizeof(buffer) - stream.avail_out);
      if (out.size() > max_bytes) {
        inflateEnd(&stream);
        return DataLossError(std::string(file_name) + ": decompresses to more than " + std::to_string(max_bytes >> 20) +
                             " MiB; this is not a trace stepscope can import");
      }
    } while (result == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0));
    consumed += chunk - stream.avail_in;
    if (result == Z_STREAM_END) {
      // Concatenated gzip members (what `cat a.gz b.gz` makes) are one file to gzip too.
      if (consumed < compressed.size() && inflateReset(&stream) == Z_OK) continue;
      break;
    }
    if (result != Z_OK) {
      const std::string what = stream.msg != nullptr ? stream.msg : "corrupt gzip data";
      inflateEnd(&stream);
      return DataLossError(std::string(file_name) + ": " + what + " at compressed byte " + std::to_string(consumed) +
                           "; " + fix);
    }
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return DataLossError(std::string(file_name) + ": gzip data ends early (truncated after " +
                         std::to_string(out.size()) + " decompressed bytes); " + fix);
  }
  return out;
}

StatusOr<std::string> GzipText(std::string_view text, std::string_view file_name, int level) {
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip header and trailer; memLevel 8 is zlib's default.
  if (deflateInit2(&stream, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return InternalError(std::string(file_name) + ": zlib could not start compressing (level " +
                         std::to_string(level) + ")");
  }
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(std::min<size_t>(text.size(), ULONG_MAX))) + 64);
  size_t consumed = 0;
  int result = Z_OK;
  while (result == Z_OK) {
    // zlib counts in uInt: feed inputs past 4 GiB in pieces, and grow the output if it fills.
    const size_t chunk = std::min<size_t>(text.size() - consumed, UINT_MAX);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data() + consumed));
    stream.avail_in = static_cast<uInt>(chunk);
    if (stream.total_out >= out.size()) out.resize(out.size() * 2);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + stream.total_out);
    stream.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - stream.total_out, UINT_MAX));
    const bool last = consumed + chunk == text.size();
    result = deflate(&stream, last ? Z_FINISH : Z_NO_FLUSH);
    consumed += chunk - stream.avail_in;
    if (result == Z_BUF_ERROR) result = Z_OK;  // no room left: the loop grows the output
  }
  const size_t size = stream.total_out;
  deflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return InternalError(std::string(file_name) + ": zlib failed to compress (" + std::to_string(result) + ")");
  }
  out.resize(size);
  return out;
}

}  // namespace stepscope::analysis
