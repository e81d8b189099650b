// The GPU activity frame (FrameType::kGpuActivity, format version 2): one completed CUPTI
// buffer's device work and API calls, one row per activity record, in columns, appended to a GPU
// stream's log with one write (docs/formats.md "GPU streams").
//
//   prefix   u32 row_count | u64 base_ticks | u8 start_width | u8 duration_width | u16 flags
//   streams  each {u8 mode, varint length, then by mode: 0 raw: the bytes; 1 zstd: varint
//            stored length, a zstd frame; 2 constant: the one byte every byte is; 3 by kind
//            (start and duration planes only): for each row kind present in the frame, in
//            increasing order, a stream of mode 0, 1, 2 or 4 holding that kind's rows' bytes in
//            row order; 4 sparse: varint stored length, then the byte most are, varint n,
//            n x {varint index - (the previous exception's index + 1, or 0), the byte there}};
//            modes 2-4 came later in version 2 (readers before them refuse them as an unknown
//            mode). In this order, with flags = 1 (kGpuFrameColumnsByKind, what the encoder
//            writes):
//     kind counts   7 x varint (not a stream): the rows of each kind, kernels to overhead,
//                   adding up to row_count. The rows are grouped by kind, in increasing kind
//                   order, in the order the tracer met them within a kind; nothing depends on
//                   how kinds were interleaved (each track is one kind's, and so is each delta)
//     declarations  varint n, n x {varint name id, varint length, bytes}: names first used
//                   here; varint m, m x {varint config id, 6 x zigzag grid/block x|y|z, varint
//                   registers per thread, varint shared memory bytes}: launch configurations
//                   first used here
//     columns       in this order, each as one stream per row kind present in the frame whose
//                   rows have it, in increasing kind order, holding those rows' values in row
//                   order (GpuRowHasColumn):
//       places        device work: device, stream; API calls and overhead: thread (each a
//                     repeat code; kGpuNoValue is a device or stream CUPTI did not say)
//       call names    API calls and overhead: repeat code of the name id
//       configs       kernels: varint 0 = the launch configuration of this name's previous
//                     kernel in this frame, else configuration id + 1
//       correlations  zigzag varint: correlation - the previous row's of the same kind (0
//                     before the first)
//       bytes         memcpy, memset: varint
//       cbids         runtime and driver calls: repeat code of CUPTI's callback id
//       names         device work: varint name id (names are the stream's string ids: strings
//                     frames and the declarations of this and earlier frames share them)
//                   A repeat code is varint 0 where the value is the previous row's of the
//                   kind in this frame, else varint value + 1: a kind's thread, device and
//                   stream, call name and callback id seldom change from row to row, and their
//                   codes are then one byte value, a constant or sparse stream
//     starts        start_width byte planes (low byte first) of zigzag(start - the previous
//                   row's end on the same track (store/gpu_tracks.h) in this frame, or -
//                   base_ticks for the track's first row)
//     durations     duration_width byte planes of zigzag(end - start)
//   Frames with flags = 0 (written before the columns were split by kind) hold instead, after
//   the prefix, one stream of the declarations and every column but the names, each behind its
//   varint length (kinds: u8 per row, in the tracer's order; places, call names, configs,
//   correlations - the previous row's whatever its kind -, bytes, cbids, all plain varints), then
//   the names column as one stream, then the planes (mode 3's kinds are then those rows', in
//   that order).
//
// Why so: the kinds of rows differ in everything, and CUPTI hands them interleaved (a buffer
// holds launches and, later, the kernels they queued); apart, each kind's column is about
// constant (a launch's thread, a kernel's device and stream, mostly one callback id: as repeat
// codes one byte value, stored in a few bytes without zstd) or small (correlations a few apart),
// where mixed in row order they took zstd 148 us a frame of a real trace, and the interleaving
// itself, which nothing needs, 33 us and 1.2 KB (docs/benchmarks.md).
// A stream that would not shrink (the random low bytes of times) is stored raw, which costs no
// CPU; times in byte planes keep their random low bytes apart from their predictable high ones;
// delta coding per track turns back-to-back kernels into a constant gap; and a kernel's launch
// configuration, which repeats per kernel name, costs nothing when it did. The planes are split
// by row kind (mode 3) for the same reason as the columns: a launch's duration is about
// constant (mode 2, no pass at all), a queued kernel's start gap too but after a copy (mode 4,
// one pass), a kernel's duration and a launch's gap random in their low bytes (raw). Frames
// written before either split read as they always did. Each frame decodes on its own but for
// its declarations: a name or configuration declared in a frame that was lost reads as unknown
// in later frames (and is reported), never as garbage. Decoding validates every field and never
// reads outside its input.
//
// Callers: GpuStreamWriter (encoder, on CUPTI's completion thread), the stream reader (decoder).
// Threading: an encoder is used by one thread at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "store/block_codec.h"
#include "store/gpu_tracks.h"
#include "store/varint.h"

namespace stepscope::store {

// What a row is: the same numbers as the tracer's GpuActivityKind.
enum class GpuRowKind : uint8_t {
  kKernel = 1,
  kMemcpy = 2,
  kMemset = 3,
  kSync = 4,
  kRuntimeApi = 5,
  kDriverApi = 6,
  kOverhead = 7,
};
inline constexpr uint8_t kMaxGpuRowKind = 7;

// A device, stream or thread CUPTI did not say (the tracer's kGpuNoValue).
inline constexpr uint32_t kGpuRowNoValue = 0xFFFFFFFFu;

// A kernel's launch configuration, interned per stream.
struct GpuLaunchConfig {
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t shared_memory_bytes = 0;
  // As one block of bytes (no padding): asked per kernel, where the member-wise comparison cost
  // 22 instructions.
  bool operator==(const GpuLaunchConfig& other) const { return std::memcmp(this, &other, sizeof other) == 0; }
};
static_assert(std::has_unique_object_representations_v<GpuLaunchConfig>, "compared as bytes: no padding");

struct GpuActivityRow {
  uint64_t start_ticks = 0;
  uint64_t end_ticks = 0;
  uint64_t bytes = 0;         // memcpy, memset
  uint32_t name_id = 0;       // the stream's string id
  uint32_t correlation = 0;
  uint32_t device = kGpuRowNoValue;  // device work
  uint32_t stream = kGpuRowNoValue;  // device work
  uint32_t thread_id = 0;     // API calls, overhead
  uint32_t callback_id = 0;   // API calls
  uint32_t config_id = 0;     // kernels
  GpuRowKind kind = GpuRowKind::kKernel;
};

inline constexpr bool IsGpuDeviceRow(GpuRowKind kind) { return kind <= GpuRowKind::kSync; }

// The row's track (store/gpu_tracks.h), as the version-1 encoding put its records.
constexpr uint32_t GpuRowTrack(GpuRowKind kind, uint32_t device, uint32_t stream, uint32_t thread_id) {
  switch (kind) {
    case GpuRowKind::kKernel:
    case GpuRowKind::kMemcpy:
    case GpuRowKind::kMemset:
    case GpuRowKind::kSync:
      return GpuDeviceTrackId(static_cast<GpuDeviceTrack>(static_cast<uint8_t>(kind) - 1),
                              device < kGpuTrackDeviceUnknown ? device : kGpuTrackDeviceUnknown,
                              stream < kGpuTrackStreamUnknown ? stream : kGpuTrackStreamUnknown);
    case GpuRowKind::kRuntimeApi: return GpuHostTrackId(GpuHostTrack::kRuntime, thread_id);
    case GpuRowKind::kDriverApi: return GpuHostTrackId(GpuHostTrack::kDriver, thread_id);
    case GpuRowKind::kOverhead: return GpuHostTrackId(GpuHostTrack::kOverhead, thread_id);
  }
  return 0;
}
inline uint32_t GpuRowTrack(const GpuActivityRow& row) {
  return GpuRowTrack(row.kind, row.device, row.stream, row.thread_id);
}

inline constexpr size_t kGpuFramePrefixBytes = 16;
// The prefix's flags: the rows grouped by kind, each column one stream per kind (else all in
// row order).
inline constexpr uint16_t kGpuFrameColumnsByKind = 1;
// The most rows a frame holds: the encoder starts a new frame there, the decoder refuses more.
inline constexpr uint32_t kMaxGpuFrameRows = 16384;
// The most tracks one frame's delta state follows; a row on one more starts a new frame.
inline constexpr uint32_t kMaxGpuFrameTracks = 128;

namespace gpu_frame_internal {

// The columns in their order in the frame (after the declarations), with the most bytes one
// row can put in each; the start and duration planes follow them. The kinds column is in frames
// in row order only.
enum ColumnIndex : uint32_t {
  kKinds, kPlaces, kHostNames, kConfigs, kCorrelations, kBytes, kCbids, kNames, kColumnCount
};
inline constexpr uint32_t kMaxRowBytes[kColumnCount] = {1, 10, 5, 5, 10, 10, 5, 5};

// Whether rows of `kind` have a value in `column` (all have a place and a correlation).
constexpr bool GpuRowHasColumn(uint32_t column, GpuRowKind kind) {
  switch (column) {
    case kKinds:
    case kPlaces:
    case kCorrelations: return true;
    case kHostNames: return !IsGpuDeviceRow(kind);
    case kConfigs: return kind == GpuRowKind::kKernel;
    case kBytes: return kind == GpuRowKind::kMemcpy || kind == GpuRowKind::kMemset;
    case kCbids: return kind == GpuRowKind::kRuntimeApi || kind == GpuRowKind::kDriverApi;
    case kNames: return IsGpuDeviceRow(kind);
  }
  return false;
}

inline void PutVarintRaw(uint8_t*& out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<uint8_t>(value);
}

// A repeat code (see the frame's layout): 0 for the previous value, else value + 1. `previous`
// starts each frame at kNoPrevious, which no 32-bit value is.
inline constexpr uint64_t kNoPrevious = ~uint64_t{0};
inline uint64_t RepeatCode(uint32_t value, uint64_t& previous) {
  const uint64_t code = value == previous ? 0 : uint64_t{value} + 1;
  previous = value;
  return code;
}

}  // namespace gpu_frame_internal

// Builds one frame. Hot path: AddOf() appends to preallocated columns (no allocation, no hashing
// beyond a small track table); it is forced inline (below) so that the writer's row, built for
// it, need not go through memory: the call cost 24 of the writer's ~480 instructions a record.
class GpuActivityFrameEncoder {
 public:
  GpuActivityFrameEncoder();
  ~GpuActivityFrameEncoder();
  GpuActivityFrameEncoder(const GpuActivityFrameEncoder&) = delete;
  GpuActivityFrameEncoder& operator=(const GpuActivityFrameEncoder&) = delete;

  // Whether a row on `track` still fits this frame (else: finish it, write it, Clear()).
  bool Fits(uint32_t track) const {
    // Inline: asked before every row; the track table is searched only once it is full.
    return rows_ < kMaxGpuFrameRows && (track_count_ < kMaxGpuFrameTracks || Follows(track));
  }
  void DeclareName(uint32_t id, std::string_view text);
  void DeclareLaunchConfig(uint32_t id, const GpuLaunchConfig& config);
  // `track` is GpuRowTrack(row); Fits(track) must hold; row.kind one of GpuRowKind's.
  inline void Add(const GpuActivityRow& row, uint32_t track);
  // Add for a row of kind kKind (row.kind is not read): the writer knows the kind where it
  // builds the row, so the row's path has no test of it.
  template <GpuRowKind kKind>
  inline void AddOf(const GpuActivityRow& row, uint32_t track);

  uint32_t rows() const { return rows_; }
  // The frame's payload into `payload` (cleared first), streams compressed with `compressor`.
  void Finish(BlockEncoder& compressor, int zstd_level, std::string& payload);
  void Clear();

 private:
  struct Column {
    std::unique_ptr<uint8_t[]> data;
    uint8_t* end = nullptr;
    std::string_view view() const {
      return {reinterpret_cast<const char*>(data.get()), static_cast<size_t>(end - data.get())};
    }
  };
  bool Follows(uint32_t track) const;  // whether the frame has a row on `track` already
  uint64_t& PreviousEnd(uint32_t track);
  uint32_t ConfigCode(uint32_t name_id, uint32_t config_id);
  void FollowName(uint32_t name_id);  // ConfigCode's table grown to hold `name_id`

  // Per row kind (the index; 0 unused): the kind's rows' values of each column it has, kept
  // apart as AddOf() meets them since the frame stores them apart; the rows, their times
  // (zigzag) in row order, and every start and duration or'ed and and'ed, so a plane's width and
  // whether a kind's bytes in a plane are all one are known without a pass over them.
  Column columns_[kMaxGpuRowKind + 1][gpu_frame_internal::kColumnCount];
  struct KindBits {
    uint32_t rows = 0;
    uint32_t previous_correlation = 0;
    // The previous row's values behind repeat codes: device or thread, stream, call name, cbid.
    uint64_t previous_place = gpu_frame_internal::kNoPrevious, previous_stream = gpu_frame_internal::kNoPrevious;
    uint64_t previous_call_name = gpu_frame_internal::kNoPrevious, previous_cbid = gpu_frame_internal::kNoPrevious;
    uint64_t starts_or = 0, starts_and = ~uint64_t{0};
    uint64_t durations_or = 0, durations_and = ~uint64_t{0};
    uint32_t last_track = 0;
    uint64_t* last_track_end = nullptr;  // last_track's previous end in tracks_ (none yet)
  };
  // Every kind's starts, then its durations, kMaxGpuFrameRows each (pages no kind uses are never
  // touched): Times(kind, 0) and Times(kind, 1).
  std::unique_ptr<uint64_t[]> times_;
  uint64_t* Times(uint32_t kind, uint32_t durations) const {
    return times_.get() + (2 * size_t{kind} + durations) * kMaxGpuFrameRows;
  }
  // Finish's scratch: byte plane p of the times, kind after kind, at p * kMaxGpuFrameRows.
  std::unique_ptr<uint8_t[]> planes_;
  KindBits kinds_[kMaxGpuRowKind + 1];
  std::string names_;    // declarations, counts added by Finish
  std::string configs_;
  std::string stream_;       // Finish's scratch: one stream before compression
  std::string compressed_;   // and after (CompressInto's scratch: its first bytes)
  std::string sparse_;       // or its exceptions listed (sized, not appended to)
  uint32_t name_count_ = 0;
  uint32_t config_count_ = 0;
  uint32_t rows_ = 0;
  uint64_t base_ticks_ = 0;
  // Open addressing, cleared per frame by bumping the generation.
  struct TrackSlot {
    uint32_t track = 0;
    uint32_t generation = 0;
    uint64_t previous_end = 0;
  };
  static constexpr uint32_t kTrackSlots = 256;
  TrackSlot tracks_[kTrackSlots];
  uint32_t generation_ = 1;
  uint32_t track_count_ = 0;
  // Per name id: the frame (generation) and configuration of its last kernel.
  struct NameConfig {
    uint32_t generation = 0;
    uint32_t config_id = 0;
  };
  std::vector<NameConfig> name_configs_;
};

[[gnu::always_inline]] inline uint64_t& GpuActivityFrameEncoder::PreviousEnd(uint32_t track) {
  uint32_t slot = (track * 0x9E3779B1u) >> 24;
  for (;; slot = (slot + 1) & (kTrackSlots - 1)) {
    TrackSlot& entry = tracks_[slot];
    if (entry.generation != generation_) {
      entry = {track, generation_, base_ticks_};
      ++track_count_;
      return entry.previous_end;
    }
    if (entry.track == track) return entry.previous_end;
  }
}

[[gnu::always_inline]] inline uint32_t GpuActivityFrameEncoder::ConfigCode(uint32_t name_id, uint32_t config_id) {
  // Name ids are the writer's, dense from 1: the table grows with them (rarely). Ids beyond any
  // writer's (a re-encoded damaged frame's) are always spelled out.
  constexpr uint32_t kMostNamesFollowed = 1u << 22;
  if (name_id >= kMostNamesFollowed) return config_id + 1;
  if (name_id >= name_configs_.size()) FollowName(name_id);
  NameConfig& last = name_configs_[name_id];
  if (last.generation == generation_ && last.config_id == config_id) return 0;
  last = {generation_, config_id};
  return config_id + 1;
}

template <GpuRowKind kKind>
[[gnu::always_inline]] inline void GpuActivityFrameEncoder::AddOf(const GpuActivityRow& row, uint32_t track) {
  using namespace gpu_frame_internal;
  constexpr bool kDeviceWork = IsGpuDeviceRow(kKind);
  if (rows_ == 0) base_ticks_ = row.start_ticks;
  KindBits& bits = kinds_[static_cast<uint8_t>(kKind)];
  // A kind's rows mostly stay on one track (a thread's calls, a stream's kernels): its last
  // track's slot is kept, and the table searched only when the track changes.
  if (bits.last_track_end == nullptr || bits.last_track != track) {
    bits.last_track_end = &PreviousEnd(track);
    bits.last_track = track;
  }
  uint64_t& previous_end = *bits.last_track_end;
  const uint64_t start = ZigZag(static_cast<int64_t>(row.start_ticks - previous_end));
  const uint64_t duration = ZigZag(static_cast<int64_t>(row.end_ticks - row.start_ticks));
  previous_end = row.end_ticks;
  Times(static_cast<uint8_t>(kKind), 0)[bits.rows] = start;
  Times(static_cast<uint8_t>(kKind), 1)[bits.rows] = duration;
  ++bits.rows;
  bits.starts_or |= start;
  bits.starts_and &= start;
  bits.durations_or |= duration;
  bits.durations_and &= duration;
  const uint64_t correlation = ZigZag(int64_t{row.correlation} - int64_t{bits.previous_correlation});
  bits.previous_correlation = row.correlation;
  uint32_t config_code = 0;
  if constexpr (kKind == GpuRowKind::kKernel) config_code = ConfigCode(row.name_id, row.config_id);
  ++rows_;
  // The bytes last, through local pointers: a byte store may alias anything, so each column's
  // end (and every member read after it) would be loaded again after every byte.
  Column* c = columns_[static_cast<uint8_t>(kKind)];
  uint8_t* places = c[kPlaces].end;
  uint8_t* names = c[kDeviceWork ? kNames : kHostNames].end;
  uint8_t* correlations = c[kCorrelations].end;
  if constexpr (kDeviceWork) {
    PutVarintRaw(places, RepeatCode(row.device, bits.previous_place));
    PutVarintRaw(places, RepeatCode(row.stream, bits.previous_stream));
    PutVarintRaw(names, row.name_id);
  } else {
    PutVarintRaw(places, RepeatCode(row.thread_id, bits.previous_place));
    PutVarintRaw(names, RepeatCode(row.name_id, bits.previous_call_name));
  }
  PutVarintRaw(correlations, correlation);
  if constexpr (kKind == GpuRowKind::kKernel) {
    uint8_t* configs = c[kConfigs].end;
    PutVarintRaw(configs, config_code);
    c[kConfigs].end = configs;
  } else if constexpr (kKind == GpuRowKind::kMemcpy || kKind == GpuRowKind::kMemset) {
    uint8_t* bytes = c[kBytes].end;
    PutVarintRaw(bytes, row.bytes);
    c[kBytes].end = bytes;
  } else if constexpr (kKind == GpuRowKind::kRuntimeApi || kKind == GpuRowKind::kDriverApi) {
    uint8_t* cbids = c[kCbids].end;
    PutVarintRaw(cbids, RepeatCode(row.callback_id, bits.previous_cbid));
    c[kCbids].end = cbids;
  }
  c[kPlaces].end = places;
  c[kDeviceWork ? kNames : kHostNames].end = names;
  c[kCorrelations].end = correlations;
}

inline void GpuActivityFrameEncoder::Add(const GpuActivityRow& row, uint32_t track) {
  switch (row.kind) {
    case GpuRowKind::kKernel: return AddOf<GpuRowKind::kKernel>(row, track);
    case GpuRowKind::kMemcpy: return AddOf<GpuRowKind::kMemcpy>(row, track);
    case GpuRowKind::kMemset: return AddOf<GpuRowKind::kMemset>(row, track);
    case GpuRowKind::kSync: return AddOf<GpuRowKind::kSync>(row, track);
    case GpuRowKind::kRuntimeApi: return AddOf<GpuRowKind::kRuntimeApi>(row, track);
    case GpuRowKind::kDriverApi: return AddOf<GpuRowKind::kDriverApi>(row, track);
    case GpuRowKind::kOverhead: return AddOf<GpuRowKind::kOverhead>(row, track);
  }
}

// Decodes a frame payload (prefix and streams). Declared names go into `strings`, declared
// configurations into `configs` (both the stream's, kept across frames); rows may name ids
// neither holds (declared in a frame that was lost). DataLoss, saying what was wrong, on any
// inconsistency; nothing is added to `strings` or `configs` then.
StatusOr<std::vector<GpuActivityRow>> DecodeGpuActivityFrame(std::string_view payload,
                                                             std::unordered_map<uint32_t, std::string>& strings,
                                                             std::unordered_map<uint32_t, GpuLaunchConfig>& configs);

}  // namespace stepscope::store
