// Shared by the store fuzzers and their seed generator: how a fuzz input is turned into store
// files. Kept in one place so seeds written by make_fuzz_seeds are exactly what the fuzzers
// parse.
//
// Checksums and header check values stop a byte-level mutator almost every time, so besides
// raw files the inputs have "built" forms in which this code computes them:
//
//   built log:  repeated { u8 type | u32 payload length | payload } -> LogHeader + frames, each
//               with a correct checksum (the type byte is kept as given, valid or not)
//   built ring: u32 block_bytes selector | u32 block_count selector | block bytes
//               -> a valid RingHeader + blocks whose capacity and check fields are made
//               consistent; state, count, tid, seq and records stay as given
//
// store_stream_fuzzer input: u8 flags | u32 n | n log bytes | u32 m | m ring bytes | manifest
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/format.h"
#include "store/log_file.h"

// A property the fuzzer checks: on failure, say which and abort so libFuzzer keeps the input.
#define FUZZ_CHECK(condition)                                                                   \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #condition);     \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

namespace stepscope::fuzz {

enum StreamInputFlags : uint8_t {
  kHasLog = 1 << 0,
  kHasRing = 1 << 1,
  kBuiltLog = 1 << 2,
  kBuiltRing = 1 << 3,
  kHasManifest = 1 << 4,
  kCompact = 1 << 5,
};

// Reads little-endian integers and length-prefixed pieces off the front of an input.
class InputCursor {
 public:
  explicit InputCursor(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T Take() {
    T value{};
    size_t n = std::min(sizeof(T), bytes_.size());
    std::memcpy(&value, bytes_.data(), n);
    bytes_.remove_prefix(n);
    return value;
  }
  std::string_view TakeBytes(size_t n) {
    n = std::min(n, bytes_.size());
    std::string_view out = bytes_.substr(0, n);
    bytes_.remove_prefix(n);
    return out;
  }
  std::string_view Rest() { return TakeBytes(bytes_.size()); }
  bool empty() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

inline void AppendFrame(std::string& log, uint8_t type, std::string_view payload) {
  store::FrameHeader frame{};
  frame.magic = store::kFrameMagic;
  frame.type = type;
  frame.payload_bytes = static_cast<uint32_t>(payload.size());
  // Computed as the writer does (and with the type byte as given, even an invalid one).
  frame.checksum = store::FrameChecksum(static_cast<store::FrameType>(type), payload);
  log.append(reinterpret_cast<const char*>(&frame), sizeof frame);
  log.append(payload);
}

inline std::string LogHeaderBytes() {
  store::LogHeader header{};
  std::memcpy(header.magic, store::kLogMagic, sizeof store::kLogMagic);
  header.version = store::kFormatVersion;
  header.header_bytes = sizeof(store::LogHeader);
  header.stream_id = 0x5EED;
  return std::string(reinterpret_cast<const char*>(&header), sizeof header);
}

inline std::string BuildLog(std::string_view spec) {
  std::string log = LogHeaderBytes();
  InputCursor in(spec);
  while (!in.empty()) {
    uint8_t type = in.Take<uint8_t>();
    uint32_t length = in.Take<uint32_t>();
    AppendFrame(log, type, in.TakeBytes(length));
  }
  return log;
}

// The inverse of BuildLog for a list of frames (used by the seed generator).
inline std::string LogSpec(const std::vector<std::pair<uint8_t, std::string>>& frames) {
  std::string spec;
  for (const auto& [type, payload] : frames) {
    spec.push_back(static_cast<char>(type));
    uint32_t length = static_cast<uint32_t>(payload.size());
    spec.append(reinterpret_cast<const char*>(&length), sizeof length);
    spec.append(payload);
  }
  return spec;
}

inline constexpr uint32_t kMaxBuiltBlocks = 16;

inline uint32_t BuiltBlockBytes(uint32_t selector) { return 128 + 64 * (selector % 32); }
inline uint32_t BuiltBlockCount(uint32_t selector) { return 1 + selector % kMaxBuiltBlocks; }

inline std::string BuildRing(std::string_view spec) {
  InputCursor in(spec);
  const uint32_t block_bytes = BuiltBlockBytes(in.Take<uint32_t>());
  const uint32_t block_count = BuiltBlockCount(in.Take<uint32_t>());
  std::string ring(store::kRingHeaderBytes + size_t{block_bytes} * block_count, '\0');
  auto* header = reinterpret_cast<store::RingHeader*>(ring.data());
  std::memcpy(header->magic, store::kRingMagic, sizeof store::kRingMagic);
  header->version = store::kFormatVersion;
  header->header_bytes = store::kRingHeaderBytes;
  header->block_bytes = block_bytes;
  header->block_count = block_count;
  header->stream_id = 0x5EED;
  std::string_view blocks = in.Rest();
  std::memcpy(ring.data() + store::kRingHeaderBytes, blocks.data(),
              std::min(blocks.size(), ring.size() - store::kRingHeaderBytes));
  const uint32_t capacity = (block_bytes - sizeof(store::BlockHeader)) / sizeof(store::RawRecord);
  for (uint32_t i = 0; i < block_count; ++i) {
    auto* block = reinterpret_cast<store::BlockHeader*>(ring.data() + store::kRingHeaderBytes + size_t{i} * block_bytes);
    block->capacity = capacity;
    block->check = store::BlockHeaderCheck(block->tid, block->seq, capacity);
  }
  return ring;
}

inline std::string StreamInput(uint8_t flags, std::string_view log, std::string_view ring, std::string_view manifest) {
  std::string input(1, static_cast<char>(flags));
  uint32_t n = static_cast<uint32_t>(log.size());
  input.append(reinterpret_cast<const char*>(&n), sizeof n);
  input.append(log);
  n = static_cast<uint32_t>(ring.size());
  input.append(reinterpret_cast<const char*>(&n), sizeof n);
  input.append(ring);
  input.append(manifest);
  return input;
}

}  // namespace stepscope::fuzz
