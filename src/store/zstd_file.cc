#include "store/zstd_file.h"

#include <zstd.h>

#include <memory>

namespace stepscope::store {
namespace {

// "1 GiB", "64 MiB", "1000 bytes": the cap as people write it.
std::string BytesText(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

StatusOr<std::string> ReadZstdFile(const std::string& path, Symlinks symlinks, uint64_t max_inflated_bytes) {
  // zstd never makes data larger by more than a few bytes per block, so a compressed file past
  // the inflated cap cannot be one that fits under it.
  STEPSCOPE_ASSIGN_OR_RETURN(std::string compressed, ReadRegularFile(path, symlinks, max_inflated_bytes));
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (stream == nullptr) return InternalError("zstd cannot allocate a decompression stream for '" + path + "'");
  std::string out;
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  size_t pending = 1;  // 0 once a frame ended exactly
  bool output_was_full = false;
  // Keep going while input remains, or while the last call filled its output inside a frame:
  // the decoder may still hold inflated bytes after it consumed the last input byte. Once a
  // frame ended (pending 0) there is nothing held; another call would ask for the next frame.
  while (in.pos < in.size || (output_was_full && pending != 0)) {
    const size_t before = out.size();
    out.resize(before + ZSTD_DStreamOutSize());
    ZSTD_outBuffer chunk{out.data() + before, out.size() - before, 0};
    pending = ZSTD_decompressStream(stream.get(), &chunk, &in);
    output_was_full = chunk.pos == chunk.size;
    out.resize(before + chunk.pos);
    if (ZSTD_isError(pending)) {
      return DataLossError("'" + path + "' is not a zstd file: " + ZSTD_getErrorName(pending));
    }
    if (out.size() > max_inflated_bytes) {
      return DataLossError("'" + path + "' inflates past " + BytesText(max_inflated_bytes) +
                           ", more than any file stepscope writes there; remove it");
    }
  }
  if (pending != 0) return DataLossError("'" + path + "' ends inside its zstd frame (truncated)");
  return out;
}

}  // namespace stepscope::store
