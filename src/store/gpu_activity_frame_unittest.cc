#include "store/gpu_activity_frame.h"

#include <gtest/gtest.h>
#include <unistd.h>

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

TEST(GpuActivityFrameTest, RowsNamesAndLaunchConfigurationsRoundTrip) {
  const std::vector<GpuActivityRow> rows = SomeRows();
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, GpuLaunchConfig> configs;
  auto decoded = DecodeGpuActivityFrame(Encode(rows), strings, configs);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ExpectSameRows(*decoded, rows);
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

TEST(GpuActivityFrameTest, EveryTruncationIsDataLossAndDeclaresNothing) {
  const std::string payload = Encode(SomeRows());
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
  ExpectSameRows(cut->gpu_rows, SomeRows());
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
  ExpectSameRows(read->gpu_rows, SomeRows());
  ASSERT_EQ(read->problems.size(), 1u);
  EXPECT_NE(read->problems[0].find("GPU activity frame at offset"), std::string::npos) << read->problems[0];
}

}  // namespace
}  // namespace stepscope::store
