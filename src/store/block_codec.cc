#include "store/block_codec.h"

// For ZSTD_c_literalCompressionMode (CompressInto's literals-only coding), checked when set.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "store/varint.h"

namespace stepscope::store {
namespace {

// CompressInto's literals-only finder: it steps 65 positions at a time while it finds no match,
// so on a stream of a few KiB it hardly looks for one.
constexpr int kLiteralsOnlyAcceleration = 64;

// Whether zstd took the request to Huffman-code literals whatever the match finder's settings
// (an experimental parameter; its value's name changed in zstd 1.5.1, and before 1.4 there was
// none: then plain parameters).
bool HuffmanLiteralsAsked(ZSTD_CCtx* zstd) {
#if defined(ZSTD_c_literalCompressionMode) && ZSTD_VERSION_NUMBER >= 10501
  return !ZSTD_isError(ZSTD_CCtx_setParameter(zstd, ZSTD_c_literalCompressionMode, ZSTD_ps_enable));
#elif defined(ZSTD_c_literalCompressionMode)
  return !ZSTD_isError(ZSTD_CCtx_setParameter(zstd, ZSTD_c_literalCompressionMode, ZSTD_lcm_huffman));
#else
  (void)zstd;
  return false;
#endif
}

// Samples are delta-coded in milli-units while |value| stays below this (exactly representable
// in a double's mantissa after scaling), else escaped to raw bits.
constexpr double kMaxQuantizableValue = 1e12;

bool IsQuantizable(double value) { return std::isfinite(value) && std::fabs(value) < kMaxQuantizableValue; }

double BitsToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
uint64_t DoubleToBits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

}  // namespace

bool IsValidRecord(const RawRecord& record) {
  if (record.kind == 0 || record.kind > kMaxRecordKind) return false;
  if (record.phase > kMaxPhase) return false;
  return true;
}

namespace {

// The block's columns compressed by `context` (nullptr: a one-shot context).
std::string EncodeBlockWith(ZSTD_CCtx* context, uint64_t seq, uint32_t tid, uint64_t dropped_before,
                            std::span<const RawRecord> records, int zstd_level) {
  const size_t n = records.size();
  std::string columns;
  columns.reserve(n * 6 + 16);
  for (const RawRecord& r : records) columns.push_back(static_cast<char>(r.kind));
  for (const RawRecord& r : records) columns.push_back(static_cast<char>(r.phase));
  uint64_t previous_ticks = 0;
  for (const RawRecord& r : records) {
    PutVarint(columns, ZigZag(static_cast<int64_t>(r.ticks - previous_ticks)));
    previous_ticks = r.ticks;
  }
  for (const RawRecord& r : records) PutVarint(columns, r.name_id);

  int64_t previous_step = 0;
  std::unordered_map<uint32_t, int64_t> previous_sample_milli;
  for (const RawRecord& r : records) {
    switch (static_cast<RecordKind>(r.kind)) {
      case RecordKind::kCounter:
      case RecordKind::kArgDouble:
        PutFixed<uint64_t>(columns, r.value);
        break;
      case RecordKind::kStepBegin:
      case RecordKind::kStepEnd: {
        int64_t step = static_cast<int64_t>(r.value);
        PutVarint(columns, ZigZag(step - previous_step));
        previous_step = step;
        break;
      }
      case RecordKind::kArgInt:
        PutVarint(columns, ZigZag(static_cast<int64_t>(r.value)));
        break;
      case RecordKind::kArgString:
        PutVarint(columns, r.value);
        break;
      case RecordKind::kSample: {
        double value = BitsToDouble(r.value);
        if (IsQuantizable(value)) {
          int64_t milli = std::llround(value * 1000.0);
          int64_t& previous = previous_sample_milli[r.name_id];
          PutVarint(columns, ZigZag(milli - previous) << 1);
          previous = milli;
        } else {
          PutVarint(columns, 1);
          PutFixed<uint64_t>(columns, r.value);
        }
        break;
      }
      default:
        break;  // begin, end, instant: no value
    }
  }

  std::string payload;
  PutFixed<uint64_t>(payload, seq);
  PutFixed<uint32_t>(payload, tid);
  PutFixed<uint32_t>(payload, static_cast<uint32_t>(n));
  PutFixed<uint64_t>(payload, dropped_before);
  PutFixed<uint32_t>(payload, static_cast<uint32_t>(columns.size()));
  size_t bound = ZSTD_compressBound(columns.size());
  size_t prefix = payload.size();
  payload.resize(prefix + bound);
  size_t compressed =
      context != nullptr
          ? ZSTD_compressCCtx(context, payload.data() + prefix, bound, columns.data(), columns.size(), zstd_level)
          : ZSTD_compress(payload.data() + prefix, bound, columns.data(), columns.size(), zstd_level);
  // Compression only fails on a too-small destination, which compressBound rules out.
  payload.resize(ZSTD_isError(compressed) ? prefix : prefix + compressed);
  return payload;
}

}  // namespace

std::string EncodeBlock(uint64_t seq, uint32_t tid, uint64_t dropped_before, std::span<const RawRecord> records,
                        int zstd_level) {
  return EncodeBlockWith(nullptr, seq, tid, dropped_before, records, zstd_level);
}

struct BlockEncoder::Context {
  ZSTD_CCtx* zstd;
};

BlockEncoder::BlockEncoder() : context_(nullptr) {
  if (ZSTD_CCtx* zstd = ZSTD_createCCtx(); zstd != nullptr) context_ = new Context{zstd};
}

BlockEncoder::~BlockEncoder() {
  if (context_ == nullptr) return;
  ZSTD_freeCCtx(context_->zstd);
  delete context_;
}

std::string BlockEncoder::Encode(uint64_t seq, uint32_t tid, uint64_t dropped_before,
                                 std::span<const RawRecord> records, int zstd_level) {
  return EncodeBlockWith(context_ != nullptr ? context_->zstd : nullptr, seq, tid, dropped_before, records, zstd_level);
}

size_t BlockEncoder::CompressInto(std::string_view input, int zstd_level, std::string& scratch, bool literals_only) {
  const size_t bound = ZSTD_compressBound(input.size());
  if (scratch.size() < bound) scratch.resize(bound);
  if (context_ == nullptr) {
    const size_t compressed = ZSTD_compress(scratch.data(), bound, input.data(), input.size(), zstd_level);
    return ZSTD_isError(compressed) ? 0 : compressed;
  }
  // Set at every call: Encode's ZSTD_compressCCtx takes its level's parameters whatever was set.
  ZSTD_CCtx* zstd = context_->zstd;
  (void)ZSTD_CCtx_reset(zstd, ZSTD_reset_parameters);
  (void)ZSTD_CCtx_setParameter(zstd, ZSTD_c_compressionLevel, zstd_level);
  (void)ZSTD_CCtx_setParameter(zstd, ZSTD_c_minMatch, 7);
  (void)ZSTD_CCtx_setParameter(zstd, ZSTD_c_hashLog, 10);
  (void)ZSTD_CCtx_setParameter(zstd, ZSTD_c_windowLog, 14);
  // With the fast strategy, targetLength is the finder's acceleration (its step over positions
  // without a match), which also turns Huffman coding of literals off unless asked for: both or
  // neither.
  if (literals_only && HuffmanLiteralsAsked(zstd)) {
    (void)ZSTD_CCtx_setParameter(zstd, ZSTD_c_strategy, ZSTD_fast);
    (void)ZSTD_CCtx_setParameter(zstd, ZSTD_c_targetLength, kLiteralsOnlyAcceleration);
  }
  const size_t compressed = ZSTD_compress2(zstd, scratch.data(), bound, input.data(), input.size());
  // Compression only fails on a too-small destination, which compressBound rules out.
  return ZSTD_isError(compressed) ? 0 : compressed;
}

StatusOr<DecodedBlock> DecodeBlock(std::string_view payload) {
  ByteReader reader(payload);
  BlockFramePrefix prefix;
  if (!reader.ReadFixed(&prefix.seq) || !reader.ReadFixed(&prefix.tid) ||
      !reader.ReadFixed(&prefix.record_count) || !reader.ReadFixed(&prefix.dropped_before) ||
      !reader.ReadFixed(&prefix.columns_bytes)) {
    return DataLossError("block frame shorter than its prefix");
  }
  if (prefix.record_count > kMaxRecordsPerBlock) {
    return DataLossError("block claims " + std::to_string(prefix.record_count) + " records");
  }
  // Every record needs at least 4 column bytes (kind, phase, ticks, name).
  if (prefix.columns_bytes > prefix.record_count * 30ull + 16 ||
      prefix.columns_bytes < prefix.record_count * 4ull) {
    return DataLossError("block column size " + std::to_string(prefix.columns_bytes) +
                         " is inconsistent with " + std::to_string(prefix.record_count) + " records");
  }
  std::string columns(prefix.columns_bytes, '\0');
  std::string_view compressed = payload.substr(reader.position());
  size_t produced = ZSTD_decompress(columns.data(), columns.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(produced)) {
    return DataLossError(std::string("block does not decompress: ") + ZSTD_getErrorName(produced));
  }
  if (produced != columns.size()) return DataLossError("block decompressed to the wrong size");

  const size_t n = prefix.record_count;
  DecodedBlock block;
  block.seq = prefix.seq;
  block.tid = prefix.tid;
  block.dropped_before = prefix.dropped_before;
  block.records.resize(n);
  ByteReader cols(columns);
  std::string_view kinds, phases;
  if (!cols.ReadBytes(n, &kinds) || !cols.ReadBytes(n, &phases)) return DataLossError("block kinds truncated");
  uint64_t ticks = 0;
  for (size_t i = 0; i < n; ++i) {
    RawRecord& r = block.records[i];
    r.kind = static_cast<uint8_t>(kinds[i]);
    r.phase = static_cast<uint8_t>(phases[i]);
    r.reserved = 0;
    if (!IsValidRecord(r)) return DataLossError("block record " + std::to_string(i) + " has an unknown kind or phase");
    uint64_t delta;
    if (!cols.ReadVarint(&delta)) return DataLossError("block timestamps truncated");
    ticks += static_cast<uint64_t>(UnZigZag(delta));
    r.ticks = ticks;
  }
  for (size_t i = 0; i < n; ++i) {
    uint64_t id;
    if (!cols.ReadVarint(&id) || id > UINT32_MAX) return DataLossError("block name ids truncated");
    block.records[i].name_id = static_cast<uint32_t>(id);
  }
  int64_t previous_step = 0;
  std::unordered_map<uint32_t, int64_t> previous_sample_milli;
  for (size_t i = 0; i < n; ++i) {
    RawRecord& r = block.records[i];
    r.value = 0;
    bool ok = true;
    uint64_t v = 0;
    switch (static_cast<RecordKind>(r.kind)) {
      case RecordKind::kCounter:
      case RecordKind::kArgDouble:
        ok = cols.ReadFixed(&r.value);
        break;
      case RecordKind::kStepBegin:
      case RecordKind::kStepEnd:
        ok = cols.ReadVarint(&v);
        previous_step += UnZigZag(v);
        r.value = static_cast<uint64_t>(previous_step);
        break;
      case RecordKind::kArgInt:
        ok = cols.ReadVarint(&v);
        r.value = static_cast<uint64_t>(UnZigZag(v));
        break;
      case RecordKind::kArgString:
        ok = cols.ReadVarint(&r.value);
        break;
      case RecordKind::kSample:
        ok = cols.ReadVarint(&v);
        if (ok && (v & 1)) {
          ok = cols.ReadFixed(&r.value);
        } else if (ok) {
          int64_t& previous = previous_sample_milli[r.name_id];
          previous += UnZigZag(v >> 1);
          r.value = DoubleToBits(static_cast<double>(previous) / 1000.0);
        }
        break;
      default:
        break;
    }
    if (!ok) return DataLossError("block values truncated at record " + std::to_string(i));
  }
  if (cols.remaining() != 0) return DataLossError("block has trailing bytes");
  return block;
}

}  // namespace stepscope::store
