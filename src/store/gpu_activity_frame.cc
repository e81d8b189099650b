#include "store/gpu_activity_frame.h"

#include <zstd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "store/varint.h"

namespace stepscope::store {

using namespace gpu_frame_internal;

namespace {

// The declarations of one frame: far above any real frame's, far below what would hurt a reader.
constexpr uint64_t kMaxDeclarationBytes = 64u << 20;

enum class StreamMode : uint8_t { kRaw = 0, kZstd = 1, kConstant = 2, kByKind = 3, kSparse = 4 };

size_t VarintSize(uint64_t value) { return value < 0x80 ? 1 : (std::bit_width(value) + 6) / 7; }

uint8_t ByteWidth(uint64_t all_or) { return static_cast<uint8_t>((std::bit_width(all_or) + 7) / 8); }

// How to store a stream, judged on samples of its bytes (about 256 say as much as the whole, at
// a fraction of the cost). zstd costs about 2.5 us and 2.5 ns a byte here, so it must earn it:
//   sparse  four in five bytes or more one value (a queued kernel's start gap, but for the
//           kernels after a copy; a column of one kind that hardly changes; the third byte of a
//           launch's gap, zero but after a pause of the host's): the exceptions are listed, in
//           one pass instead of zstd's match search over runs broken every few bytes (16 us for
//           4 KiB on the build machine); none at all: the constant mode. Listing them costs two
//           bytes each, up to two fifths of the stream at four in five, where zstd stored a
//           real trace's such planes in 13-15 %: with nine in ten, 4 % fewer bytes for 14 more
//           instructions a record of about 400 (docs/benchmarks.md);
//   zstd    repeating (a kernel's name follows the same one as before in four tenths of a run of
//           bytes or more: a training step's kernels come in the same order every step, and
//           copies' places and sizes cycle), which zstd's matches shrink whatever the bytes'
//           spread;
//   zstd's literals only (kZstdLiterals: BlockEncoder::CompressInto's literals_only) skewed
//           but not repeating, enough to save three eighths and 128 bytes or more, judged by the
//           strided sample's entropy: 5 bits a byte or less (the high bytes of times, the low
//           ones of a GPU's kernel times, which its timer's 32 ns ticks skew). Huffman coding is
//           what shrinks them; the match search cost more than it saved. Not by the collision
//           entropy, which a few frequent values pull down: a real trace's kernel durations read
//           5.6 bits by it, 7.1 by their entropy, and zstd saved 8 % in 12 us. The bar was 6
//           bits: the planes between 5 and 6 (a launch's duration's second byte: 6.0 bits, zstd
//           saved 22 %) cost 16 instructions a byte to save a fifth of it, a tenth of the
//           writer's time on a real trace for 3 % of its bytes (docs/benchmarks.md);
//   raw     the rest (the random low bytes of times, a frame's few copies' times): nothing
//           worth a pass of zstd, which saved 8 % of a real trace's launch gaps in 18 us; and
//           whatever stream is under 1 KiB: a zstd call costs ~12,000 instructions before its
//           first byte (measured alone on skewed bytes: 16,600 for 256 bytes, 30,000 for 1 KiB,
//           77,000 for 4 KiB with the literals-only finder; 21,700, 54,000 and 139,000 with
//           the narrowed one), 30 to 50 a byte of such a stream: on a real trace, a frame's
//           copies' and sets' planes, 5 % of the bytes for 6 % of the writer's instructions.
constexpr size_t kLeastForZstd = 1024;  // see "raw" above

struct StreamChoice {
  enum Kind { kRaw, kSparse, kZstd, kZstdLiterals } kind = kRaw;
  uint8_t common = 0;  // sparse: the value most bytes are
};

StreamChoice ChooseStream(std::string_view bytes) {
  constexpr size_t kSamples = 256;
  constexpr double kMostBitsForZstd = 5.0;
  constexpr double kLeastSavedForZstd = 128;
  if (bytes.size() < 32) return {};
  const size_t stride = bytes.size() >= 2 * kSamples ? bytes.size() / kSamples : 1;
  // Two histograms, samples alternating between them: a run of one value (the common case)
  // would otherwise make each count wait for the one before it.
  uint16_t counts[2][256] = {};
  uint64_t sampled = 0;
  size_t i = 0;
  for (; i + stride < bytes.size(); i += 2 * stride, sampled += 2) {
    ++counts[0][static_cast<uint8_t>(bytes[i])];
    ++counts[1][static_cast<uint8_t>(bytes[i + stride])];
  }
  if (i < bytes.size()) ++counts[0][static_cast<uint8_t>(bytes[i])], ++sampled;
  // The two histograms summed, and the largest count: loops the compiler vectorizes. The value
  // behind that count and the entropy are worked out only where they decide.
  uint16_t total[256];
  uint16_t most = 0;
  for (uint32_t value = 0; value < 256; ++value) total[value] = counts[0][value] + counts[1][value];
  for (uint32_t value = 0; value < 256; ++value) most = std::max(most, total[value]);
  if (uint64_t{most} * 5 >= sampled * 4) {
    const auto common = static_cast<uint8_t>(std::find(total, total + 256, most) - total);
    return {StreamChoice::kSparse, common};
  }
  if (bytes.size() < kLeastForZstd) return {};
  // Repeats: how often a byte is followed by what followed it last time, over a run of bytes
  // from the middle (the strided sample has no neighbours).
  const size_t run = std::min<size_t>(bytes.size(), kSamples);
  const auto* window = reinterpret_cast<const uint8_t*>(bytes.data()) + (bytes.size() - run) / 2;
  uint16_t followed_by[256];
  std::memset(followed_by, 0xFF, sizeof followed_by);  // none yet: no byte value
  uint32_t repeated = 0;
  for (size_t j = 0; j + 1 < run; ++j) {
    repeated += followed_by[window[j]] == window[j + 1];
    followed_by[window[j]] = window[j + 1];
  }
  if (repeated * 10 >= (run - 1) * 4) return {StreamChoice::kZstd, 0};
  // The sample's entropy, bits a byte: about what zstd's order-0 coding reaches (a sample of 256
  // reads a little low where the bytes are spread, which the bar of 5 bits allows for). From
  // count * log2(count) for every count a sample can have (at most 2 * kSamples - 1 bytes): no
  // logarithm per value; four sums, so the additions do not wait each for the one before.
  static const auto kCountLog2 = [] {
    std::array<double, 2 * kSamples + 2> table{};
    for (size_t n = 1; n < table.size(); ++n) table[n] = double(n) * std::log2(double(n));
    return table;
  }();
  double sums[4] = {};
  for (uint32_t value = 0; value < 256; value += 4) {
    for (uint32_t k = 0; k < 4; ++k) sums[k] += kCountLog2[total[value + k]];
  }
  const double sum_count_log2 = (sums[0] + sums[1]) + (sums[2] + sums[3]);
  const double bits = std::log2(double(sampled)) - sum_count_log2 / double(sampled);
  const double saved = double(bytes.size()) * (1.0 - bits / 8.0);
  if (bits > kMostBitsForZstd || saved < kLeastSavedForZstd) return {};
  return {StreamChoice::kZstdLiterals, 0};
}

// Room past a sparse list's cut-off: ListExceptions checks it a word at a time, and a word adds
// up to eight exceptions, each a varint gap (10 bytes at most) and a byte.
constexpr size_t kExceptionsOfAWord = 8 * (10 + 1);

// The bytes of `bytes` that are not `common`, as the sparse mode lists them ({varint index -
// (the previous exception's index + 1, or 0), the byte}), into `list`, counted in `exceptions`;
// stopped once the list is past `most` bytes (then up to kExceptionsOfAWord past it). Returns
// the list's end. Eight bytes at a time, the bytes that are not the common one found by their
// bits (a byte loop cost ~5 instructions a byte at four in five common; this, ~2).
uint8_t* ListExceptions(std::string_view bytes, uint8_t common, size_t most, uint8_t* list, uint32_t& exceptions) {
  uint8_t* out = list;
  size_t next = 0;
  auto except = [&](size_t index, uint8_t byte) {
    PutVarintRaw(out, index - next);
    *out++ = byte;
    next = index + 1;
    ++exceptions;
  };
  const uint64_t all_common = 0x0101010101010101ull * common;
  size_t i = 0;
  for (; i + 8 <= bytes.size() && static_cast<size_t>(out - list) <= most; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, sizeof word);
    for (uint64_t differs = word ^ all_common; differs != 0;) {
      const int bit = std::countr_zero(differs) & ~7;  // the lowest differing byte's first bit
      except(i + bit / 8, static_cast<uint8_t>(word >> bit));
      differs &= ~(uint64_t{0xFF} << bit);
    }
  }
  for (; i < bytes.size() && static_cast<size_t>(out - list) <= most; ++i) {
    if (static_cast<uint8_t>(bytes[i]) != common) except(i, static_cast<uint8_t>(bytes[i]));
  }
  return out;
}

// The low `width` byte planes of `count` values: plane p's bytes at out + p * kMaxGpuFrameRows.
// Eight values at a time are a byte matrix transposed (SSE2 where there is: three rounds of
// interleaving, about four instructions a value for all eight planes, where cutting each plane
// alone took five a plane; docs/benchmarks.md), the last few value by value.
void CutBytePlanes(const uint64_t* values, uint32_t count, uint32_t width, uint8_t* out) {
  static_assert(std::endian::native == std::endian::little, "planes are cut from little-endian words");
  uint32_t i = 0;
#if defined(__SSE2__)
  for (; i + 8 <= count; i += 8) {
    const auto* rows = reinterpret_cast<const __m128i*>(values + i);
    // Two values a register; bytes of the pair interleaved: value 2k's and 2k+1's byte p next to
    // each other, p = 0..7.
    __m128i pairs[4];
    for (int k = 0; k < 4; ++k) {
      const __m128i two = _mm_loadu_si128(rows + k);
      pairs[k] = _mm_unpacklo_epi8(two, _mm_srli_si128(two, 8));
    }
    // Byte p of values 0-3 and of 4-7, as 4-byte groups: planes 0-3 and 4-7.
    const __m128i low03 = _mm_unpacklo_epi16(pairs[0], pairs[1]), high03 = _mm_unpackhi_epi16(pairs[0], pairs[1]);
    const __m128i low47 = _mm_unpacklo_epi16(pairs[2], pairs[3]), high47 = _mm_unpackhi_epi16(pairs[2], pairs[3]);
    // Byte p of all eight values, two planes a register.
    const __m128i planes[4] = {_mm_unpacklo_epi32(low03, low47), _mm_unpackhi_epi32(low03, low47),
                               _mm_unpacklo_epi32(high03, high47), _mm_unpackhi_epi32(high03, high47)};
    for (uint32_t plane = 0; plane < width; ++plane) {
      const __m128i two = planes[plane / 2];
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + size_t{plane} * kMaxGpuFrameRows + i),
                       plane % 2 == 0 ? two : _mm_srli_si128(two, 8));
    }
  }
#endif
  for (; i < count; ++i) {
    for (uint32_t plane = 0; plane < width; ++plane) {
      out[size_t{plane} * kMaxGpuFrameRows + i] = static_cast<uint8_t>(values[i] >> (8 * plane));
    }
  }
}

}  // namespace

GpuActivityFrameEncoder::GpuActivityFrameEncoder()
    : times_(new uint64_t[2 * size_t{kMaxGpuRowKind + 1} * kMaxGpuFrameRows]),
      planes_(new uint8_t[8 * size_t{kMaxGpuFrameRows}]) {
  // Room for a full frame of each kind up front: AddOf() never checks or grows; kinds 1-7 with
  // the columns they have (no kinds column: the rows are stored grouped by kind).
  auto allocate = [](Column& column, uint32_t index) {
    column.data.reset(new uint8_t[size_t{kMaxGpuFrameRows} * kMaxRowBytes[index]]);
    column.end = column.data.get();
  };
  for (uint32_t k = 1; k <= kMaxGpuRowKind; ++k) {
    for (uint32_t i = kPlaces; i < kColumnCount; ++i) {
      if (GpuRowHasColumn(i, static_cast<GpuRowKind>(k))) allocate(columns_[k][i], i);
    }
  }
}

GpuActivityFrameEncoder::~GpuActivityFrameEncoder() = default;


void GpuActivityFrameEncoder::FollowName(uint32_t name_id) { name_configs_.resize(name_id + 1); }

bool GpuActivityFrameEncoder::Follows(uint32_t track) const {
  uint32_t slot = (track * 0x9E3779B1u) >> 24;
  for (;; slot = (slot + 1) & (kTrackSlots - 1)) {
    const TrackSlot& entry = tracks_[slot];
    if (entry.generation != generation_) return false;
    if (entry.track == track) return true;
  }
}

void GpuActivityFrameEncoder::DeclareName(uint32_t id, std::string_view text) {
  PutVarint(names_, id);
  PutVarint(names_, text.size());
  names_.append(text);
  ++name_count_;
}

void GpuActivityFrameEncoder::DeclareLaunchConfig(uint32_t id, const GpuLaunchConfig& config) {
  PutVarint(configs_, id);
  for (int32_t value : config.grid) PutVarint(configs_, ZigZag(value));
  for (int32_t value : config.block) PutVarint(configs_, ZigZag(value));
  PutVarint(configs_, config.registers_per_thread);
  PutVarint(configs_, config.shared_memory_bytes);
  ++config_count_;
}



void GpuActivityFrameEncoder::Finish(BlockEncoder& compressor, int zstd_level, std::string& payload) {
  auto put_stream = [&](std::string_view raw, int level) {
    const StreamChoice choice = ChooseStream(raw);
    if (choice.kind == StreamChoice::kSparse) {
      // {common byte, varint exceptions, the exceptions listed}; given up for zstd where the
      // exceptions are many, so the list is cut off past half the stream's bytes.
      const size_t size = raw.size();
      const size_t most = size / 2;
      if (sparse_.size() < most + kExceptionsOfAWord) sparse_.resize(most + kExceptionsOfAWord);
      uint8_t* const list = reinterpret_cast<uint8_t*>(sparse_.data());
      uint32_t exceptions = 0;
      const uint8_t* const out = ListExceptions(raw, choice.common, most, list, exceptions);
      const size_t listed = static_cast<size_t>(out - list);
      const size_t stored = 1 + VarintSize(exceptions) + listed;
      if (exceptions == 0) {
        payload.push_back(static_cast<char>(StreamMode::kConstant));
        PutVarint(payload, size);
        payload.push_back(static_cast<char>(choice.common));
        return;
      }
      if (listed <= most && stored * 2 < size) {
        payload.push_back(static_cast<char>(StreamMode::kSparse));
        PutVarint(payload, size);
        PutVarint(payload, stored);
        payload.push_back(static_cast<char>(choice.common));
        PutVarint(payload, exceptions);
        payload.append(reinterpret_cast<const char*>(list), listed);
        return;
      }
    }
    // A sparse stream with more exceptions than its sample showed goes to zstd, if it is not
    // too short for it.
    if (choice.kind != StreamChoice::kRaw && raw.size() >= kLeastForZstd) {
      const size_t compressed =
          compressor.CompressInto(raw, level, compressed_, choice.kind == StreamChoice::kZstdLiterals);
      if (compressed != 0 && compressed < raw.size()) {
        payload.push_back(static_cast<char>(StreamMode::kZstd));
        PutVarint(payload, raw.size());
        PutVarint(payload, compressed);
        payload.append(compressed_.data(), compressed);
        return;
      }
    }
    payload.push_back(static_cast<char>(StreamMode::kRaw));
    PutVarint(payload, raw.size());
    payload.append(raw);
  };
  // Where each kind's rows begin among the rows grouped by kind (kinds in increasing order).
  uint32_t group_begin[kMaxGpuRowKind + 2] = {};
  for (uint32_t k = 0; k <= kMaxGpuRowKind; ++k) group_begin[k + 1] = group_begin[k] + kinds_[k].rows;
  auto put_planes = [&](uint32_t durations, uint8_t width, uint64_t KindBits::*all_or,
                        uint64_t KindBits::*all_and) {
    // Every kind's planes are cut first, all of them in one pass over its times.
    for (uint32_t k = 1; k <= kMaxGpuRowKind; ++k) {
      const KindBits& bits = kinds_[k];
      if (bits.rows != 0) CutBytePlanes(Times(k, durations), bits.rows, width, planes_.get() + group_begin[k]);
    }
    for (uint32_t plane = 0; plane < width; ++plane) {
      const uint32_t shift = 8 * plane;
      payload.push_back(static_cast<char>(StreamMode::kByKind));
      PutVarint(payload, rows_);
      for (uint32_t k = 1; k <= kMaxGpuRowKind; ++k) {
        const KindBits& bits = kinds_[k];
        if (bits.rows == 0) continue;
        if ((((bits.*all_or ^ bits.*all_and) >> shift) & 0xFF) == 0) {
          payload.push_back(static_cast<char>(StreamMode::kConstant));
          PutVarint(payload, bits.rows);
          payload.push_back(static_cast<char>(bits.*all_or >> shift));
          continue;
        }
        const uint8_t* cut = planes_.get() + size_t{plane} * kMaxGpuFrameRows + group_begin[k];
        put_stream({reinterpret_cast<const char*>(cut), bits.rows}, zstd_level);
      }
    }
  };
  uint64_t starts_or = 0, durations_or = 0;
  for (const KindBits& bits : kinds_) starts_or |= bits.starts_or, durations_or |= bits.durations_or;
  const uint8_t start_width = ByteWidth(starts_or);
  const uint8_t duration_width = ByteWidth(durations_or);
  payload.clear();
  PutFixed<uint32_t>(payload, rows_);
  PutFixed<uint64_t>(payload, base_ticks_);
  payload.push_back(static_cast<char>(start_width));
  payload.push_back(static_cast<char>(duration_width));
  PutFixed<uint16_t>(payload, kGpuFrameColumnsByKind);
  for (uint32_t k = 1; k <= kMaxGpuRowKind; ++k) PutVarint(payload, kinds_[k].rows);
  stream_.clear();
  PutVarint(stream_, name_count_);
  stream_.append(names_);
  PutVarint(stream_, config_count_);
  stream_.append(configs_);
  put_stream(stream_, zstd_level);
  for (uint32_t i = kPlaces; i < kColumnCount; ++i) {
    for (uint32_t k = 1; k <= kMaxGpuRowKind; ++k) {
      if (kinds_[k].rows != 0 && GpuRowHasColumn(i, static_cast<GpuRowKind>(k))) {
        put_stream(columns_[k][i].view(), zstd_level);
      }
    }
  }
  put_planes(0, start_width, &KindBits::starts_or, &KindBits::starts_and);
  put_planes(1, duration_width, &KindBits::durations_or, &KindBits::durations_and);
}

void GpuActivityFrameEncoder::Clear() {
  for (auto& kind_columns : columns_) {
    for (Column& column : kind_columns) column.end = column.data.get();
  }
  names_.clear();
  configs_.clear();
  name_count_ = config_count_ = rows_ = 0;
  base_ticks_ = 0;
  for (KindBits& bits : kinds_) bits = KindBits();
  track_count_ = 0;
  if (++generation_ == 0) {
    // After 2^32 frames: entries of generation 0 would look current.
    for (TrackSlot& slot : tracks_) slot.generation = 0;
    for (NameConfig& name : name_configs_) name.generation = 0;
    generation_ = 1;
  }
}

StatusOr<std::vector<GpuActivityRow>> DecodeGpuActivityFrame(std::string_view payload,
                                                             std::unordered_map<uint32_t, std::string>& strings,
                                                             std::unordered_map<uint32_t, GpuLaunchConfig>& configs) {
  ByteReader reader(payload);
  uint32_t row_count = 0;
  uint64_t base_ticks = 0;
  uint8_t start_width = 0, duration_width = 0;
  uint16_t flags = 0;
  if (!reader.ReadFixed(&row_count) || !reader.ReadFixed(&base_ticks) || !reader.ReadFixed(&start_width) ||
      !reader.ReadFixed(&duration_width) || !reader.ReadFixed(&flags)) {
    return DataLossError("GPU activity frame shorter than its prefix");
  }
  if ((flags & ~kGpuFrameColumnsByKind) != 0) {
    return DataLossError("GPU activity frame has unknown flags " + std::to_string(flags) +
                         " (written by a newer stepscope: read it with that one)");
  }
  const bool by_kind = (flags & kGpuFrameColumnsByKind) != 0;
  if (row_count > kMaxGpuFrameRows) {
    return DataLossError("GPU activity frame claims " + std::to_string(row_count) + " rows (at most " +
                         std::to_string(kMaxGpuFrameRows) + ")");
  }
  if (start_width > 8 || duration_width > 8) return DataLossError("GPU activity frame has times wider than 8 bytes");

  // One stream, raw, decompressed or repeated, into `out`: exactly `exact` bytes, or at most
  // `most`. A stream by kind (allowed where `kinds`, the kinds column, is given: the planes,
  // whose `exact` is the row count, as is the column's length) holds one part per kind present,
  // each read the same way (but not by kind) and put back in row order.
  std::vector<uint32_t> kind_rows;  // row indices grouped by kind, in row order within a kind
  uint32_t kind_begin[257] = {};
  auto read_stream = [&](auto& self, const char* what, uint64_t exact, uint64_t most, std::string& out,
                         const std::string* kinds) -> Status {
    uint8_t mode = 0;
    uint64_t length = 0;
    if (!reader.ReadFixed(&mode) || !reader.ReadVarint(&length)) {
      return DataLossError(std::string("GPU activity frame ") + what + " truncated");
    }
    if (exact != UINT64_MAX ? length != exact : length > most) {
      return DataLossError(std::string("GPU activity frame ") + what + " length " + std::to_string(length) +
                           " is inconsistent with " + std::to_string(row_count) + " rows");
    }
    std::string_view stored;
    if (mode == static_cast<uint8_t>(StreamMode::kConstant)) {
      uint8_t byte = 0;
      if (!reader.ReadFixed(&byte)) return DataLossError(std::string("GPU activity frame ") + what + " truncated");
      out.assign(length, static_cast<char>(byte));
      return OkStatus();
    }
    if (mode == static_cast<uint8_t>(StreamMode::kByKind) && kinds != nullptr) {
      // `exact` is the frame's row count here, which the kinds column holds one byte of each.
      if (kind_rows.empty()) {
        for (char kind : *kinds) ++kind_begin[static_cast<uint8_t>(kind) + 1];
        for (uint32_t k = 1; k <= 256; ++k) kind_begin[k] += kind_begin[k - 1];
        kind_rows.resize(kinds->size());
        uint32_t next[256];
        std::memcpy(next, kind_begin, sizeof next);
        for (uint32_t i = 0; i < kinds->size(); ++i) kind_rows[next[static_cast<uint8_t>((*kinds)[i])]++] = i;
      }
      out.resize(length);
      std::string part;
      for (uint32_t k = 0; k < 256; ++k) {
        const uint32_t count = kind_begin[k + 1] - kind_begin[k];
        if (count == 0) continue;
        STEPSCOPE_RETURN_IF_ERROR(self(self, what, count, count, part, nullptr));
        for (uint32_t i = 0; i < count; ++i) out[kind_rows[kind_begin[k] + i]] = part[i];
      }
      return OkStatus();
    }
    if (mode == static_cast<uint8_t>(StreamMode::kSparse)) {
      uint64_t stored_length = 0, exceptions = 0;
      uint8_t common = 0;
      if (!reader.ReadVarint(&stored_length) || !reader.ReadBytes(stored_length, &stored)) {
        return DataLossError(std::string("GPU activity frame ") + what + " truncated");
      }
      ByteReader sparse(stored);
      if (!sparse.ReadFixed(&common) || !sparse.ReadVarint(&exceptions) || exceptions > length) {
        return DataLossError(std::string("GPU activity frame ") + what + " has a bad exception count");
      }
      out.assign(length, static_cast<char>(common));
      uint64_t next = 0;
      for (uint64_t i = 0; i < exceptions; ++i) {
        uint64_t gap = 0;
        uint8_t byte = 0;
        if (!sparse.ReadVarint(&gap) || !sparse.ReadFixed(&byte) || gap >= length - next) {
          return DataLossError(std::string("GPU activity frame ") + what + " has an exception out of place");
        }
        next += gap;
        out[next++] = static_cast<char>(byte);
      }
      if (sparse.remaining() != 0) return DataLossError(std::string("GPU activity frame ") + what + " has trailing bytes");
      return OkStatus();
    }
    if (mode == static_cast<uint8_t>(StreamMode::kRaw)) {
      if (!reader.ReadBytes(length, &stored)) return DataLossError(std::string("GPU activity frame ") + what + " truncated");
      out.assign(stored);
      return OkStatus();
    }
    uint64_t stored_length = 0;
    if (mode != static_cast<uint8_t>(StreamMode::kZstd) || !reader.ReadVarint(&stored_length) ||
        !reader.ReadBytes(stored_length, &stored)) {
      return DataLossError(std::string("GPU activity frame ") + what + " truncated or of an unknown mode");
    }
    out.resize(length);
    const size_t produced = ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
    if (ZSTD_isError(produced)) {
      return DataLossError(std::string("GPU activity frame ") + what + " does not decompress: " + ZSTD_getErrorName(produced));
    }
    if (produced != length) return DataLossError(std::string("GPU activity frame ") + what + " decompressed to the wrong size");
    return OkStatus();
  };
  static constexpr const char* kColumnNames[kColumnCount] = {
      "kinds", "places", "call names", "launch configurations ids", "correlations", "bytes", "callback ids",
      "device work names"};
  // Each column by row kind; a frame in row order has them all at kind 0.
  std::string declarations, columns[kMaxGpuRowKind + 1][kColumnCount];
  std::string& kinds = columns[0][kKinds];
  if (by_kind) {
    // The rows grouped by kind: their kinds column is made from the counts.
    uint32_t rows_of_kind[kMaxGpuRowKind + 1] = {};
    uint64_t counted = 0;
    for (uint32_t k = 1; k <= kMaxGpuRowKind; ++k) {
      uint64_t count = 0;
      if (!reader.ReadVarint(&count) || count > row_count - counted) {
        return DataLossError("GPU activity frame's kind counts are truncated or add up to more than its " +
                             std::to_string(row_count) + " rows");
      }
      counted += count;
      rows_of_kind[k] = static_cast<uint32_t>(count);
      kinds.append(count, static_cast<char>(k));
    }
    if (counted != row_count) {
      return DataLossError("GPU activity frame's kind counts add up to " + std::to_string(counted) + ", not its " +
                           std::to_string(row_count) + " rows");
    }
    STEPSCOPE_RETURN_IF_ERROR(read_stream(read_stream, "declarations", UINT64_MAX, kMaxDeclarationBytes, declarations, nullptr));
    for (uint32_t i = kPlaces; i < kColumnCount; ++i) {
      for (uint32_t k = 1; k <= kMaxGpuRowKind; ++k) {
        if (rows_of_kind[k] == 0 || !GpuRowHasColumn(i, static_cast<GpuRowKind>(k))) continue;
        STEPSCOPE_RETURN_IF_ERROR(read_stream(read_stream, kColumnNames[i], UINT64_MAX,
                                              uint64_t{rows_of_kind[k]} * kMaxRowBytes[i], columns[k][i], nullptr));
      }
    }
  } else {
    std::string structure;
    uint64_t most_structure = kMaxDeclarationBytes + 16;
    for (uint32_t i = 0; i < kColumnCount; ++i) most_structure += uint64_t{row_count} * kMaxRowBytes[i] + 10;
    STEPSCOPE_RETURN_IF_ERROR(read_stream(read_stream, "columns", UINT64_MAX, most_structure, structure, nullptr));
    STEPSCOPE_RETURN_IF_ERROR(read_stream(read_stream, "names", UINT64_MAX, uint64_t{row_count} * kMaxRowBytes[kNames],
                                          columns[0][kNames], nullptr));
    ByteReader parts(structure);
    auto part = [&](const char* what, uint64_t exact, uint64_t most, std::string& out) -> Status {
      uint64_t length = 0;
      std::string_view bytes;
      if (!parts.ReadVarint(&length) || (exact != UINT64_MAX ? length != exact : length > most) ||
          !parts.ReadBytes(length, &bytes)) {
        return DataLossError(std::string("GPU activity frame ") + what + " truncated or of a wrong length");
      }
      out.assign(bytes);
      return OkStatus();
    };
    STEPSCOPE_RETURN_IF_ERROR(part("declarations", UINT64_MAX, kMaxDeclarationBytes, declarations));
    for (uint32_t i = 0; i < kColumnCount; ++i) {
      if (i == kNames) continue;
      STEPSCOPE_RETURN_IF_ERROR(part(kColumnNames[i], i == kKinds ? row_count : UINT64_MAX,
                                     uint64_t{row_count} * kMaxRowBytes[i], columns[0][i]));
    }
    if (parts.remaining() != 0) return DataLossError("GPU activity frame columns have trailing bytes");
    for (uint32_t i = 0; i < row_count; ++i) {
      const auto kind = static_cast<uint8_t>(kinds[i]);
      if (kind == 0 || kind > kMaxGpuRowKind) {
        return DataLossError("GPU activity frame row " + std::to_string(i) + " has unknown kind " + std::to_string(kind));
      }
    }
  }
  std::vector<GpuActivityRow> rows(row_count);
  std::string plane;
  for (uint8_t p = 0; p < start_width + duration_width; ++p) {
    STEPSCOPE_RETURN_IF_ERROR(
        read_stream(read_stream, p < start_width ? "starts" : "durations", row_count, row_count, plane, &kinds));
    const uint32_t shift = 8 * (p < start_width ? p : p - start_width);
    for (uint32_t i = 0; i < row_count; ++i) {
      uint64_t& value = p < start_width ? rows[i].start_ticks : rows[i].end_ticks;  // zigzag for now
      value |= uint64_t{static_cast<uint8_t>(plane[i])} << shift;
    }
  }
  if (reader.remaining() != 0) return DataLossError("GPU activity frame has trailing bytes");

  auto truncated = [](const char* what) { return DataLossError(std::string("GPU activity frame ") + what + " truncated"); };
  // Declarations are kept aside until the whole frame decodes.
  ByteReader decl(declarations);
  uint64_t count = 0;
  if (!decl.ReadVarint(&count) || count > declarations.size()) return truncated("name declarations");
  std::vector<std::pair<uint32_t, std::string_view>> names;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t id = 0, length = 0;
    std::string_view text;
    if (!decl.ReadVarint(&id) || !decl.ReadVarint(&length) || !decl.ReadBytes(length, &text)) {
      return truncated("name declarations");
    }
    if (id == 0 || id > UINT32_MAX) return DataLossError("GPU activity frame declares name id " + std::to_string(id));
    names.emplace_back(static_cast<uint32_t>(id), text);
  }
  if (!decl.ReadVarint(&count) || count > declarations.size()) return truncated("launch configurations");
  std::vector<std::pair<uint32_t, GpuLaunchConfig>> declared_configs;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t id = 0, value[8];
    bool ok = decl.ReadVarint(&id);
    for (uint64_t& v : value) ok = ok && decl.ReadVarint(&v);
    if (!ok) return truncated("launch configurations");
    GpuLaunchConfig config;
    for (int d = 0; d < 3; ++d) {
      const int64_t grid = UnZigZag(value[d]), block = UnZigZag(value[3 + d]);
      if (grid < INT32_MIN || grid > INT32_MAX || block < INT32_MIN || block > INT32_MAX) {
        return DataLossError("GPU activity frame has a launch configuration out of range");
      }
      config.grid[d] = static_cast<int32_t>(grid);
      config.block[d] = static_cast<int32_t>(block);
    }
    if (id > UINT32_MAX || value[6] > UINT32_MAX || value[7] > UINT32_MAX) {
      return DataLossError("GPU activity frame has a launch configuration out of range");
    }
    config.registers_per_thread = static_cast<uint32_t>(value[6]);
    config.shared_memory_bytes = static_cast<uint32_t>(value[7]);
    declared_configs.emplace_back(static_cast<uint32_t>(id), config);
  }
  if (decl.remaining() != 0) return DataLossError("GPU activity frame declarations have trailing bytes");

  // A reader per column and kind (in a frame in row order, every kind reads kind 0's).
  std::vector<ByteReader> readers;
  readers.reserve(size_t{kMaxGpuRowKind + 1} * kColumnCount);
  for (auto& kind_columns : columns) {
    for (const std::string& column : kind_columns) readers.emplace_back(column);
  }
  auto column = [&](uint32_t index, GpuRowKind kind) -> ByteReader& {
    return readers[size_t{by_kind ? static_cast<uint8_t>(kind) : 0u} * kColumnCount + index];
  };
  auto read_u32 = [&](ByteReader& from, uint32_t* out) {
    uint64_t value = 0;
    if (!from.ReadVarint(&value) || value > UINT32_MAX) return false;
    *out = static_cast<uint32_t>(value);
    return true;
  };
  // Repeat codes (frames by kind only): the previous value of the kind's row, per column.
  struct Previous {
    uint64_t place = kNoPrevious, stream = kNoPrevious, call_name = kNoPrevious, cbid = kNoPrevious;
  };
  Previous previous_of[kMaxGpuRowKind + 1];
  auto read_coded = [&](ByteReader& from, uint64_t& previous, uint32_t* out) {
    if (!by_kind) return read_u32(from, out);
    uint64_t code = 0;
    if (!from.ReadVarint(&code) || code > uint64_t{UINT32_MAX} + 1) return false;
    if (code == 0) {
      if (previous == kNoPrevious) return false;
      *out = static_cast<uint32_t>(previous);
    } else {
      *out = static_cast<uint32_t>(code - 1);
      previous = *out;
    }
    return true;
  };
  std::unordered_map<uint32_t, uint64_t> previous_end;
  std::unordered_map<uint32_t, uint32_t> config_by_name;
  int64_t correlations[kMaxGpuRowKind + 1] = {};  // the previous row's (of the kind, by kind)
  for (uint32_t i = 0; i < row_count; ++i) {
    GpuActivityRow& row = rows[i];
    row.kind = static_cast<GpuRowKind>(kinds[i]);  // known: made from the counts, or checked
    ByteReader& places = column(kPlaces, row.kind);
    Previous& previous = previous_of[by_kind ? static_cast<uint8_t>(row.kind) : 0];
    const bool placed = IsGpuDeviceRow(row.kind)
                            ? read_coded(places, previous.place, &row.device) && read_coded(places, previous.stream, &row.stream)
                            : read_coded(places, previous.place, &row.thread_id);
    if (!placed) return truncated("places or repeats a place before any");
    const bool named = IsGpuDeviceRow(row.kind) ? read_u32(column(kNames, row.kind), &row.name_id)
                                                : read_coded(column(kHostNames, row.kind), previous.call_name, &row.name_id);
    if (!named) return truncated("names or repeats a call name before any");
    auto [end, inserted] = previous_end.emplace(GpuRowTrack(row), base_ticks);
    row.start_ticks = end->second + static_cast<uint64_t>(UnZigZag(row.start_ticks));
    row.end_ticks = row.start_ticks + static_cast<uint64_t>(UnZigZag(row.end_ticks));
    end->second = row.end_ticks;
    uint64_t delta = 0;
    if (!column(kCorrelations, row.kind).ReadVarint(&delta)) return truncated("correlations");
    int64_t& correlation = correlations[by_kind ? static_cast<uint8_t>(row.kind) : 0];
    correlation += UnZigZag(delta);
    if (correlation < 0 || correlation > UINT32_MAX) return DataLossError("GPU activity frame correlation out of range");
    row.correlation = static_cast<uint32_t>(correlation);
    switch (row.kind) {
      case GpuRowKind::kKernel: {
        uint32_t code = 0;
        if (!read_u32(column(kConfigs, row.kind), &code)) return truncated("launch configuration ids");
        if (code == 0) {
          auto last = config_by_name.find(row.name_id);
          if (last == config_by_name.end()) {
            return DataLossError("GPU activity frame row " + std::to_string(i) +
                                 " repeats a launch configuration its kernel has not had in the frame");
          }
          row.config_id = last->second;
        } else {
          row.config_id = code - 1;
          config_by_name[row.name_id] = row.config_id;
        }
        break;
      }
      case GpuRowKind::kMemcpy:
      case GpuRowKind::kMemset:
        if (!column(kBytes, row.kind).ReadVarint(&row.bytes)) return truncated("bytes");
        break;
      case GpuRowKind::kRuntimeApi:
      case GpuRowKind::kDriverApi:
        if (!read_coded(column(kCbids, row.kind), previous.cbid, &row.callback_id)) {
          return truncated("callback ids or repeats one before any");
        }
        break;
      case GpuRowKind::kSync:
      case GpuRowKind::kOverhead:
        break;
    }
  }
  for (size_t r = 0; r < readers.size(); ++r) {
    if (r % kColumnCount != kKinds && readers[r].remaining() != 0) {  // kinds were read by index
      return DataLossError(std::string("GPU activity frame has trailing bytes in its ") + kColumnNames[r % kColumnCount]);
    }
  }
  for (auto& [id, text] : names) strings[id] = std::string(text);
  for (auto& [id, config] : declared_configs) configs[id] = config;
  return rows;
}

}  // namespace stepscope::store
