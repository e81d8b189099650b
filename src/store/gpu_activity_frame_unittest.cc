#include "store/gpu_activity_frame.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "store/block_codec.h"
#include "store/stream_reader.h"
#include "store/stream_writer.h"

namespace stepscope::store {
namespace {

GpuActivityRow Row(GpuRowKind kind, uint64_t start, uint64_t end, uint32_t name, uint32_t correlation) {
  GpuActivityRow row;
  row.kind = kind;
  row.start_ticks = start;
  row.end_ticks = end;
  row.name_id = name;
  row.correlation = correlation;
  if (IsGpuDeviceRow(kind)) {
    row.device = 0;
    row.stream = 7;
  } else {
    row.thread_id = 4242;
  }
  if (kind == GpuRowKind::kKernel) row.config_id = 1;
  if (kind == GpuRowKind::kMemcpy || kind == GpuRowKind::kMemset) row.bytes = 1u << 20;
  if (kind == GpuRowKind::kRuntimeApi || kind == GpuRowKind::kDriverApi) row.callback_id = 211;
  return row;
}

std::vector<GpuActivityRow> SomeRows() {
  std::vector<GpuActivityRow> rows = {
      Row(GpuRowKind::kRuntimeApi, 1'000, 4'000, 1, 1),      Row(GpuRowKind::kKernel, 5'000, 45'000, 2, 1),
      Row(GpuRowKind::kRuntimeApi, 9'000, 12'000, 1, 2),     Row(GpuRowKind::kKernel, 46'000, 90'000, 2, 2),
      Row(GpuRowKind::kMemcpy, 91'000, 95'000, 3, 3),        Row(GpuRowKind::kMemset, 96'000, 97'000, 3, 4),
      Row(GpuRowKind::kSync, 98'000, 99'000, 3, 0),          Row(GpuRowKind::kOverhead, 10, 20, 1, 0),
      Row(GpuRowKind::kDriverApi, 2'000, 1'500, 1, 4'000'000'000u),  // end before start, a large correlation
  };
  rows[3].device = 200;  // beyond the track field: its own track with the other large ids
  rows[3].stream = kGpuRowNoValue;
  rows[1].end_ticks = UINT64_MAX;  // extremes survive the deltas
  return rows;
}

std::string Encode(const std::vector<GpuActivityRow>& rows, bool declare = true) {
  GpuActivityFrameEncoder encoder;
  if (declare) {
    encoder.DeclareName(1, "cudaLaunchKernel");
    encoder.DeclareName(2, "ampere_sgemm_128x64_nn");
    GpuLaunchConfig config;
    config.grid[0] = 128, config.grid[1] = 2, config.grid[2] = 1;
    config.block[0] = 256, config.block[1] = 1, config.block[2] = -1;
    config.registers_per_thread = 64;
    config.shared_memory_bytes = 4096;
    encoder.DeclareLaunchConfig(1, config);
  }
  for (const GpuActivityRow& row : rows) {
    EXPECT_TRUE(encoder.Fits(GpuRowTrack(row)));
    encoder.Add(row, GpuRowTrack(row));
  }
  std::string payload;
  BlockEncoder compressor;
  encoder.Finish(compressor, 3, payload);
  return payload;
}

// Rows as a frame holds them: grouped by kind, in increasing kind order, in the order they were
// added within a kind.
std::vector<GpuActivityRow> GroupedByKind(std::vector<GpuActivityRow> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const GpuActivityRow& a, const GpuActivityRow& b) { return a.kind < b.kind; });
  return rows;
}

void ExpectSameRows(const std::vector<GpuActivityRow>& a, const std::vector<GpuActivityRow>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].start_ticks, b[i].start_ticks);
    EXPECT_EQ(a[i].end_ticks, b[i].end_ticks);
    EXPECT_EQ(a[i].name_id, b[i].name_id);
    EXPECT_EQ(a[i].correlation, b[i].correlation);
    EXPECT_EQ(a[i].device, b[i].device);
    EXPECT_EQ(a[i].stream, b[i].stream);
    EXPECT_EQ(a[i].thread_id, b[i].thread_id);
    EXPECT_EQ(a[i].callback_id, b[i].callback_id);
    EXPECT_EQ(a[i].config_id, b[i].config_id);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
  }
}

void ExpectDecodesTo(const std::string& payload, const std::vector<GpuActivityRow>& rows) {
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, GpuLaunchConfig> configs;
  auto decoded = DecodeGpuActivityFrame(payload, strings, configs);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ExpectSameRows(*decoded, rows);
}

TEST(GpuActivityFrameTest, RowsNamesAndLaunchConfigurationsRoundTrip) {
  const std::vector<GpuActivityRow> rows = SomeRows();
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, GpuLaunchConfig> configs;
  auto decoded = DecodeGpuActivityFrame(Encode(rows), strings, configs);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ExpectSameRows(*decoded, GroupedByKind(rows));
  EXPECT_EQ(strings.at(1), "cudaLaunchKernel");
  EXPECT_EQ(strings.at(2), "ampere_sgemm_128x64_nn");
  ASSERT_EQ(configs.count(1), 1u);
  EXPECT_EQ(configs.at(1).grid[1], 2);
  EXPECT_EQ(configs.at(1).block[2], -1);
  EXPECT_EQ(configs.at(1).shared_memory_bytes, 4096u);
}

TEST(GpuActivityFrameTest, BackToBackKernelsCostAboutAByteOfTimeEach) {
  // Kernels queued on one stream start where the previous one ended: the per-track delta makes
  // their starts a constant, which zstd all but removes.
  std::vector<GpuActivityRow> rows;
  uint64_t t = 1'000'000;
  for (int i = 0; i < 4096; ++i) {
    rows.push_back(Row(GpuRowKind::kKernel, t, t + 20'000, 2, static_cast<uint32_t>(i)));
    t += 20'000;
  }
  EXPECT_LT(Encode(rows).size(), 4096u);
}

// SomeRows() and 64 launches with their kernels: enough rows that the planes of a frame written
// before the split by kind were zstd streams.
std::vector<GpuActivityRow> RowsOfTheStoredFrame() {
  std::vector<GpuActivityRow> rows = SomeRows();
  for (uint32_t i = 0; i < 64; ++i) {
    rows.push_back(Row(GpuRowKind::kRuntimeApi, 200'000 + i * 7'000, 203'000 + i * 7'000, 1, 10 + i));
    rows.push_back(Row(GpuRowKind::kKernel, 300'000 + i * 21'000, 320'000 + i * 21'000 + (i * 37) % 256, 2, 10 + i));
  }
  return rows;
}

TEST(GpuActivityFrameTest, AFrameWrittenBeforeThePlanesWereSplitByKindStillDecodes) {
  // RowsOfTheStoredFrame() with Encode()'s declarations, as the encoder wrote them before the
  // split (every stream raw or zstd, the planes in row order).
  static const char kStored[] =
    "\x89\x00\x00\x00\xe8\x03\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x01\x87\x07\xa4\x01\x28\xb5\x2f"
    "\xfd\x60\x87\x02\xd5\x04\x00\xa4\x07\x38\x02\x01\x10\x63\x75\x64\x61\x4c\x61\x75\x6e\x63\x68\x4b"
    "\x65\x72\x6e\x65\x6c\x02\x16\x61\x6d\x70\x65\x72\x65\x5f\x73\x67\x65\x6d\x6d\x5f\x31\x32\x38\x78"
    "\x36\x34\x5f\x6e\x6e\x01\x01\x80\x02\x04\x02\x80\x04\x02\x01\x40\x80\x20\x89\x01\x05\x01\x05\x01"
    "\x02\x03\x04\x07\x06\x97\x02\x92\x21\x00\x07\x92\x21\xc8\x01\xff\xff\xff\xff\x0f\x00\x07\x92\x21"
    "\x44\x01\x42\x02\x00\x91\x01\x02\x00\x02\x00\x02\x02\x07\x00\x80\xa0\xd9\xe6\x1d\xeb\x9f\xd9\xe6"
    "\x1d\x06\x80\x80\x40\x80\x80\x40\x86\x01\xd3\x0b\x00\x02\x40\x21\xce\x25\x40\x73\x65\x05\xd2\x00"
    "\x1c\x8a\xf7\x1d\x85\x4e\x03\xc0\x70\x60\x6d\xce\x25\x10\x5c\x8b\x19\x01\x45\x15\x28\xb5\x2f\xfd"
    "\x20\x45\x65\x00\x00\x30\x02\x02\x03\x03\x03\x02\x01\x00\x94\x40\x11\x01\x89\x01\x80\x01\x28\xb5"
    "\x2f\xfd\x20\x89\xbd\x03\x00\x92\xc8\x1c\x2a\x70\x77\x36\x03\x7c\x89\x74\xa8\x91\x1e\xec\x54\x51"
    "\x23\x6f\xc5\x8f\x7c\x46\x9d\xcd\xdb\x25\xd9\x49\xf6\xd5\x27\xd9\x59\x7d\x25\xb3\x9b\x2b\x2b\xbb"
    "\xb2\x69\xb2\xe7\xd9\x06\x29\x49\xbd\x8a\x9c\xad\x08\x2b\x4d\x01\x36\x7a\xbe\x2a\xbc\x44\x15\xf8"
    "\x08\x1a\xcb\x70\xd5\x81\x90\xa1\xb2\x0d\x33\xbb\x04\x25\x45\x67\x11\x35\x57\x0b\x4e\x8e\xd6\x26"
    "\x6e\xb2\x1e\xe4\x96\xde\x2e\x76\xba\x26\xb4\x3c\x0d\xe8\xf8\x09\xbb\x10\x33\xf5\xeb\xd9\x3e\xda"
    "\xc7\x45\x3a\xc6\x43\x00\x01\x89\x01\x42\x28\xb5\x2f\xfd\x20\x89\xcd\x01\x00\xd8\x00\x1f\x27\x5f"
    "\xbf\xe6\xf5\x07\x07\xbc\x27\x1f\x07\x06\x07\x06\x07\x06\x07\x06\x07\x06\x05\x05\x05\x05\x05\x0e"
    "\x00\xe0\x10\x70\x1c\x1c\x2c\x09\x27\xe0\x0e\x34\x06\x9c\x00\x71\x20\x19\x68\x02\xdc\x01\xc1\x40"
    "\x0a\xb5\xee\x0b\x01\x89\x01\x1b\x28\xb5\x2f\xfd\x20\x89\x95\x00\x00\x60\x00\x00\x00\x01\x02\x02"
    "\x02\x00\x00\x05\x09\x00\x01\x00\x3a\x05\x49\x01\x89\x01\x7e\x28\xb5\x2f\xfd\x20\x89\xad\x03\x00"
    "\x92\x48\x1c\x29\x80\x75\x36\x03\xc3\xdc\x4e\xe8\x0e\xe2\x30\x46\x05\xc7\xc0\xdb\x20\x38\xdb\xd9"
    "\x30\xdb\x64\xf7\xa9\xb7\x49\xef\x07\xb2\x91\xe4\xdd\xa0\x36\x0a\x94\x8f\x90\xf4\x04\xa1\x90\x02"
    "\x55\x31\x0d\x65\x77\x04\x88\x6a\x99\x10\xd6\x93\x11\xd7\x94\xf2\xa0\x2b\xa7\xe2\x97\x74\xd2\x60"
    "\xeb\x66\xd7\x76\x54\xb2\x20\xab\x26\x62\xad\x68\xe4\xc0\xd5\xcc\xc3\x59\xd0\xc7\x80\xa9\x97\x85"
    "\xb1\x9f\x8d\xb9\xa7\x95\x08\x5f\x3b\x17\x6f\x4b\xbd\x04\xdd\xf7\x79\xb4\x89\x01\x00\x01\x89\x01"
    "\x2c\x28\xb5\x2f\xfd\x20\x89\x1d\x01\x00\x88\x17\x27\x17\x57\x1f\x07\x07\x00\x03\x17\x9c\x9d\x9c"
    "\x9d\x9e\x9e\x9d\x07\x00\x60\x13\x04\xe8\xfd\x3c\x06\x4e\x40\x3b\xe0\x58\x82\x9b\x03\x01\x89\x01"
    "\x15\x28\xb5\x2f\xfd\x20\x89\x65\x00\x00\x28\x00\x00\x00\x01\x00\x01\x00\x01\x0a\x68\x01";
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, GpuLaunchConfig> configs;
  auto decoded = DecodeGpuActivityFrame(std::string_view(kStored, sizeof kStored - 1), strings, configs);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ExpectSameRows(*decoded, RowsOfTheStoredFrame());
  EXPECT_EQ(strings.at(2), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(configs.at(1).block[2], -1);
}

// A busy step's rows: launches 4-12 us apart, their kernels queued back to back on two streams
// (5-400 us each), every 20th a copy instead, as the tracer's benchmark makes them.
std::vector<GpuActivityRow> QueuedWork(uint32_t launches) {
  std::vector<GpuActivityRow> rows;
  uint64_t host = 1'000'000'000, device[2] = {host + 50'000, host + 50'000};
  uint64_t random = 7;
  auto next = [&random](uint64_t range) {
    random = random * 6364136223846793005ull + 1442695040888963407ull;
    return (random >> 33) % range;
  };
  for (uint32_t i = 1; i <= launches; ++i) {
    rows.push_back(Row(GpuRowKind::kRuntimeApi, host, host + 3'000, 1, i));
    const GpuRowKind kind = i % 20 == 0 ? GpuRowKind::kMemcpy : GpuRowKind::kKernel;
    uint64_t& clock = device[i % 2];
    const uint64_t start = std::max(clock, host + 5'000);
    GpuActivityRow work = Row(kind, start, start + 5'000 + next(395'000), kind == GpuRowKind::kKernel ? 2 : 3, i);
    work.stream = 7 + i % 2;
    rows.push_back(work);
    clock = work.end_ticks + 1'000;
    host += 4'000 + next(8'000);
  }
  return rows;
}

TEST(GpuActivityFrameTest, EachKindsTimesAreStoredAsTheyLook) {
  // Per kind, the planes are constant (a launch's duration), nearly so (a queued kernel's start
  // gap but after a copy: sparse), random (raw) or skewed (zstd): all of them round trip, and a
  // launch with its kernel costs under 5.5 bytes of time and columns (5.12; 4.92 when planes of
  // 5 to 6 bits a byte went through zstd too, at a tenth of the writer's time; 6.44 when the
  // kinds' times shared their planes).
  const std::vector<GpuActivityRow> rows = QueuedWork(4096);
  const std::string payload = Encode(rows);
  ExpectDecodesTo(payload, GroupedByKind(rows));
  EXPECT_LT(payload.size(), 4096u * 11 / 2);
}

TEST(GpuActivityFrameTest, EveryTruncationIsDataLossAndDeclaresNothing) {
  // Every stream mode is in one of them: QueuedWork's planes by kind, each constant, sparse,
  // raw or (a kernel duration's third byte: 1,140 skewed bytes) zstd's literals-only coding;
  // with its kernels' names cycling, a names column that repeats (zstd with matches). A stream
  // under 1 KiB never goes through zstd, hence 1,200 launches.
  std::vector<GpuActivityRow> cycling = QueuedWork(1200);
  for (size_t i = 0; i < cycling.size(); ++i) {
    if (cycling[i].kind == GpuRowKind::kKernel) cycling[i].name_id = static_cast<uint32_t>(2 + i % 5);
  }
  for (const std::string& payload : {Encode(SomeRows()), Encode(QueuedWork(1200)), Encode(cycling)}) {
    SCOPED_TRACE(payload.size());
    for (size_t length = 0; length < payload.size(); ++length) {
      std::unordered_map<uint32_t, std::string> strings;
      std::unordered_map<uint32_t, GpuLaunchConfig> configs;
      auto decoded = DecodeGpuActivityFrame(payload.substr(0, length), strings, configs);
      ASSERT_FALSE(decoded.ok()) << length;
      EXPECT_EQ(decoded.status().code(), StatusCode::kDataLoss);
      EXPECT_TRUE(strings.empty());
      EXPECT_TRUE(configs.empty());
    }
  }
}

TEST(GpuActivityFrameTest, ImplausiblePrefixesAreRefusedBeforeDecompressing) {
  std::string payload = Encode(SomeRows());
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, GpuLaunchConfig> configs;
  std::string too_many = payload;
  const uint32_t rows = kMaxGpuFrameRows + 1;
  std::memcpy(too_many.data(), &rows, sizeof rows);
  auto decoded = DecodeGpuActivityFrame(too_many, strings, configs);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("rows"), std::string::npos);
  std::string huge = payload;
  huge[12] = 9;  // start planes: wider than 8 bytes
  EXPECT_FALSE(DecodeGpuActivityFrame(huge, strings, configs).ok());
}

TEST(GpuActivityFrameTest, KindCountsThatDoNotAddUpAndUnknownFlagsAreRefused) {
  // SomeRows(): two kernels, two runtime calls and one row of each other kind, so the counts
  // after the 16-byte prefix are 2 1 1 1 2 1 1, nine rows.
  const std::string payload = Encode(SomeRows());
  ASSERT_EQ(payload.substr(kGpuFramePrefixBytes, 7), std::string("\x02\x01\x01\x01\x02\x01\x01"));
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, GpuLaunchConfig> configs;
  std::string too_many = payload;
  too_many[kGpuFramePrefixBytes] = 3;  // ten rows counted in a frame of nine
  auto decoded = DecodeGpuActivityFrame(too_many, strings, configs);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("kind counts"), std::string::npos) << decoded.status().message();
  std::string too_few = payload;
  too_few[kGpuFramePrefixBytes + 6] = 0;  // no overhead row: eight counted
  decoded = DecodeGpuActivityFrame(too_few, strings, configs);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("add up to 8, not its 9 rows"), std::string::npos)
      << decoded.status().message();
  std::string newer = payload;
  newer[14] = 3;  // a flag no reader knows yet
  decoded = DecodeGpuActivityFrame(newer, strings, configs);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("unknown flags"), std::string::npos) << decoded.status().message();
  EXPECT_TRUE(strings.empty());
  EXPECT_TRUE(configs.empty());
}

TEST(GpuActivityFrameTest, ARepeatCodeWithNothingBeforeItIsDataLoss) {
  // One kernel on device 0, stream 7: its places stream is raw, {mode 0, 2 bytes, device + 1,
  // stream + 1}; a 0 for the device would repeat a device no row had.
  const std::string payload = Encode({Row(GpuRowKind::kKernel, 5'000, 45'000, 2, 1)});
  const std::string places("\x00\x02\x01\x08", 4);
  const size_t at = payload.find(places);
  ASSERT_NE(at, std::string::npos);
  std::string repeated = payload;
  repeated[at + 2] = 0;
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, GpuLaunchConfig> configs;
  auto decoded = DecodeGpuActivityFrame(repeated, strings, configs);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("repeats a place before any"), std::string::npos) << decoded.status().message();
  EXPECT_TRUE(strings.empty());
}

TEST(GpuActivityFrameTest, EachKindsColumnsAreStoredApartSoOneThatHardlyChangesCostsNothing) {
  // Launches and the kernels they queued, interleaved as CUPTI hands them, a few other calls'
  // correlation ids between them: per kind, the places, names and callback ids are one value
  // and the correlations one apart, so the columns take a few bytes, where in row order the
  // correlations alone jumped between a launch's and its kernel's (two bytes a row).
  std::vector<GpuActivityRow> rows;
  uint32_t correlation = 100;
  for (uint32_t i = 0; i < 2048; ++i) {
    rows.push_back(Row(GpuRowKind::kRuntimeApi, 1'000'000 + i * 5'000, 1'003'000 + i * 5'000, 1, correlation));
    if (i >= 16) {  // the kernel launched 16 launches ago
      const uint32_t queued = correlation - 16 * 3;
      rows.push_back(Row(GpuRowKind::kKernel, 2'000'000 + i * 4'000, 2'004'000 + i * 4'000, 2, queued));
    }
    correlation += 3;
  }
  const std::string payload = Encode(rows);
  ExpectDecodesTo(payload, GroupedByKind(rows));
  EXPECT_LT(payload.size(), 600u);
}

TEST(GpuActivityFrameTest, AFrameStartsOverWhenFullOrOnTooManyTracks) {
  GpuActivityFrameEncoder encoder;
  for (uint32_t stream = 0; stream < kMaxGpuFrameTracks; ++stream) {
    GpuActivityRow row = Row(GpuRowKind::kKernel, 10, 20, 2, stream);
    row.stream = stream;
    ASSERT_TRUE(encoder.Fits(GpuRowTrack(row)));
    encoder.Add(row, GpuRowTrack(row));
  }
  GpuActivityRow known = Row(GpuRowKind::kKernel, 30, 40, 2, 1);
  known.stream = 3;
  EXPECT_TRUE(encoder.Fits(GpuRowTrack(known)));
  GpuActivityRow another = known;
  another.stream = kMaxGpuFrameTracks + 5;
  EXPECT_FALSE(encoder.Fits(GpuRowTrack(another)));
  encoder.Clear();
  EXPECT_EQ(encoder.rows(), 0u);
  EXPECT_TRUE(encoder.Fits(GpuRowTrack(another)));
  for (uint32_t i = 0; i < kMaxGpuFrameRows; ++i) encoder.Add(known, GpuRowTrack(known));
  EXPECT_FALSE(encoder.Fits(GpuRowTrack(known)));
}

class GpuActivityStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("stepscope_gpu_frame_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  StreamWriterOptions Options(const std::string& name) const {
    StreamWriterOptions options;
    options.directory = dir_.string();
    options.name = name;
    options.block_bytes = 4096;
    options.block_count = 2;
    options.meta_json = R"({"kind":"gpu","pid":1})";
    return options;
  }
  std::filesystem::path dir_;
};

TEST_F(GpuActivityStreamTest, AStreamCutMidFrameKeepsTheFramesBeforeAndSaysWhatWasLost) {
  const StreamWriterOptions options = Options("gpu-1-0001");
  GpuActivityFrameEncoder encoder;
  auto finish = [&](BlockEncoder& compressor, int level, std::string& payload) { encoder.Finish(compressor, level, payload); };
  {
    auto writer = StreamWriter::Create(options);
    ASSERT_TRUE(writer.ok());
    encoder.DeclareName(1, "cudaLaunchKernel");
    for (const GpuActivityRow& row : SomeRows()) encoder.Add(row, GpuRowTrack(row));
    ASSERT_TRUE((*writer)->AppendFrame(FrameType::kGpuActivity, finish).ok());
    encoder.Clear();
    encoder.DeclareName(2, "second_frame_kernel");
    encoder.Add(Row(GpuRowKind::kKernel, 7, 8, 2, 9), GpuRowTrack(Row(GpuRowKind::kKernel, 7, 8, 2, 9)));
    ASSERT_TRUE((*writer)->AppendFrame(FrameType::kGpuActivity, finish).ok());
  }
  const std::string log = (dir_ / "gpu-1-0001.log").string();
  auto whole = ReadStream(dir_.string(), "gpu-1-0001");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ(whole->gpu_rows.size(), SomeRows().size() + 1);
  EXPECT_EQ(whole->strings.at(2), "second_frame_kernel");
  EXPECT_TRUE(whole->problems.empty());

  // Killed while writing the second frame: the first is all there, the cut is reported.
  std::filesystem::resize_file(log, std::filesystem::file_size(log) - 5);
  auto cut = ReadStream(dir_.string(), "gpu-1-0001");
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  ExpectSameRows(cut->gpu_rows, GroupedByKind(SomeRows()));
  EXPECT_EQ(cut->strings.count(2), 0u);
  ASSERT_FALSE(cut->problems.empty());
  EXPECT_NE(cut->problems[0].find("truncated"), std::string::npos) << cut->problems[0];
}

TEST_F(GpuActivityStreamTest, AFrameThatDoesNotDecodeIsReportedAndCostsOnlyItself) {
  const StreamWriterOptions options = Options("gpu-1-0002");
  {
    auto writer = StreamWriter::Create(options);
    ASSERT_TRUE(writer.ok());
    // A frame without its prefix, intact as far as its checksum goes.
    ASSERT_TRUE((*writer)
                    ->AppendFrame(FrameType::kGpuActivity,
                                  [](BlockEncoder&, int, std::string& payload) { payload = "columns only"; })
                    .ok());
    GpuActivityFrameEncoder encoder;
    for (const GpuActivityRow& row : SomeRows()) encoder.Add(row, GpuRowTrack(row));
    ASSERT_TRUE((*writer)
                    ->AppendFrame(FrameType::kGpuActivity,
                                  [&](BlockEncoder& compressor, int level, std::string& payload) {
                                    encoder.Finish(compressor, level, payload);
                                  })
                    .ok());
  }
  auto read = ReadStream(dir_.string(), "gpu-1-0002");
  ASSERT_TRUE(read.ok());
  ExpectSameRows(read->gpu_rows, GroupedByKind(SomeRows()));
  ASSERT_EQ(read->problems.size(), 1u);
  EXPECT_NE(read->problems[0].find("GPU activity frame at offset"), std::string::npos) << read->problems[0];
}

}  // namespace
}  // namespace stepscope::store
