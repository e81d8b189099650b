// Writes streams through StreamWriter/RingFile the way the recorder does and reads their records
// back through ReadStream. How records pair into events is the analysis layer's
// (analysis/recorded_run_unittest.cc).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "base/file_system.h"
#include "base/test/temp_directory.h"
#include "store/stream_reader.h"
#include "store/stream_writer.h"

namespace stepscope::store {
namespace {

class StreamRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = ::testing::TempDir() + "/stream-roundtrip-" + std::to_string(getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_TRUE(CreateDirectories(directory_).ok());
  }
  std::unique_ptr<StreamWriter> MakeWriter(uint32_t block_count = 4) {
    StreamWriterOptions options;
    options.directory = directory_;
    options.name = "proc-1";
    options.block_bytes = 64 + 24 * 8;  // 8 records per block
    options.block_count = block_count;
    options.meta_json = R"({"pid":4242,"ppid":1,"kind":"process","ticks_per_ns":1.0,)"
                        R"("clock_anchor":{"monotonic_ns":0,"realtime_ns":1000000000}})";
    auto writer = StreamWriter::Create(options);
    EXPECT_TRUE(writer.ok()) << writer.status().message();
    return std::move(*writer);
  }
  // Appends like the recorder's hot path: write the record, then publish the count.
  static void Append(BlockHeader* block, const RawRecord& record) {
    uint32_t n = block->count.load(std::memory_order_relaxed);
    RingFile::Records(block)[n] = record;
    block->count.store(n + 1, std::memory_order_release);
  }
  std::string directory_;
};

RawRecord Rec(RecordKind kind, uint64_t ticks, uint32_t name) {
  return RawRecord{ticks, name, static_cast<uint8_t>(kind), 0, 0, 0};
}

TEST_F(StreamRoundTrip, ReadsSealedFlushedAndOpenBlocksExactlyOnce) {
  auto writer = MakeWriter();
  ASSERT_TRUE(writer->AppendStrings({{1, "forward"}}).ok());
  BlockHeader* first = writer->ring().Claim(11, 0);
  ASSERT_NE(first, nullptr);
  for (int i = 0; i < 8; ++i) Append(first, Rec(i % 2 ? RecordKind::kEnd : RecordKind::kBegin, 100 + i, 1));
  writer->ring().Seal(first);
  ASSERT_EQ(*writer->FlushSealed(), 1u);
  BlockHeader* second = writer->ring().Claim(11, 0);
  for (int i = 0; i < 4; ++i) Append(second, Rec(i % 2 ? RecordKind::kEnd : RecordKind::kBegin, 200 + i, 1));
  // A snapshot of an open block followed by more records: the reader keeps the larger copy.
  ASSERT_TRUE(writer->SnapshotOpenBlocks().ok());
  Append(second, Rec(RecordKind::kInstant, 300, 1));

  auto contents = ReadStream(directory_, "proc-1");
  ASSERT_TRUE(contents.ok()) << contents.status().message();
  EXPECT_TRUE(contents->problems.empty());
  ASSERT_EQ(contents->blocks.size(), 2u);
  EXPECT_EQ(contents->blocks[0].records.size(), 8u);
  EXPECT_EQ(contents->blocks[1].records.size(), 5u);
  EXPECT_EQ(contents->strings.at(1), "forward");
  EXPECT_EQ(contents->blocks[0].records.front().ticks, 100u);
  EXPECT_EQ(contents->blocks[1].records.back().kind, static_cast<uint8_t>(RecordKind::kInstant));
  EXPECT_NE(contents->meta_json.find("\"pid\":4242"), std::string::npos) << contents->meta_json;
}

TEST_F(StreamRoundTrip, CompactionMovesTheRingIntoTheLogOnceTheWriterIsGone) {
  {
    auto writer = MakeWriter();
    ASSERT_TRUE(writer->AppendStrings({{1, "x"}}).ok());
    BlockHeader* block = writer->ring().Claim(5, 0);
    for (int i = 0; i < 3; ++i) Append(block, Rec(RecordKind::kInstant, 10 + i, 1));
    writer->ring().CountDropped(6);
    // The live writer holds the lock: compaction must refuse.
    Status busy = CompactStream(directory_, "proc-1");
    EXPECT_EQ(busy.code(), StatusCode::kUnavailable);
  }
  ASSERT_TRUE(CompactStream(directory_, "proc-1").ok());
  EXPECT_NE(access((directory_ + "/proc-1.ring").c_str(), F_OK), 0);
  auto contents = ReadStream(directory_, "proc-1");
  ASSERT_TRUE(contents.ok());
  EXPECT_FALSE(contents->has_ring);
  ASSERT_EQ(contents->blocks.size(), 1u);
  EXPECT_EQ(contents->blocks[0].records.size(), 3u);
  EXPECT_EQ(contents->dropped_events, 6u);
  // Compacting again is a no-op.
  EXPECT_TRUE(CompactStream(directory_, "proc-1").ok());
}

TEST_F(StreamRoundTrip, ClaimReturnsNullWhenEveryBlockIsInUse) {
  auto writer = MakeWriter(2);
  EXPECT_NE(writer->ring().Claim(1, 0), nullptr);
  EXPECT_NE(writer->ring().Claim(2, 0), nullptr);
  EXPECT_EQ(writer->ring().Claim(3, 0), nullptr);
}

TEST_F(StreamRoundTrip, ACorruptRingBlockIsSkippedAndTheRestKept) {
  auto writer = MakeWriter();
  ASSERT_TRUE(writer->AppendStrings({{1, "x"}}).ok());
  BlockHeader* good = writer->ring().Claim(1, 0);
  Append(good, Rec(RecordKind::kInstant, 10, 1));
  BlockHeader* bad = writer->ring().Claim(2, 0);
  Append(bad, Rec(RecordKind::kInstant, 11, 1));
  bad->seq ^= 0xFF;  // header no longer matches its check
  auto contents = ReadStream(directory_, "proc-1");
  ASSERT_TRUE(contents.ok());
  ASSERT_EQ(contents->blocks.size(), 1u);
  ASSERT_EQ(contents->problems.size(), 1u);
  EXPECT_NE(contents->problems[0].find("corrupt header"), std::string::npos);
}

// Issue 12: one flipped byte in a log's header used to discard every frame behind it.
TEST_F(StreamRoundTrip, AFlippedLogHeaderByteLosesNoFrame) {
  constexpr int kBlocks = 2000;
  auto writer = MakeWriter();
  ASSERT_TRUE(writer->AppendStrings({{1, "forward"}}).ok());
  for (int b = 0; b < kBlocks; ++b) {
    BlockHeader* block = writer->ring().Claim(11, 0);
    ASSERT_NE(block, nullptr);
    for (int i = 0; i < 8; ++i) Append(block, Rec(i % 2 ? RecordKind::kEnd : RecordKind::kBegin, 8 * b + i, 1));
    writer->ring().Seal(block);
    ASSERT_EQ(*writer->FlushSealed(), 1u);
  }
  writer.reset();
  const std::string log = directory_ + "/proc-1.log";
  std::string bytes = *LocalFileSystem().ReadFile(log);
  bytes[3] ^= 0x10;  // inside the magic
  ASSERT_TRUE(WriteFileAtomically(log, bytes).ok());

  auto stream = ReadStream(directory_, "proc-1");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  EXPECT_EQ(stream->blocks.size(), static_cast<size_t>(kBlocks));
  EXPECT_EQ(stream->strings.at(1), "forward");
  EXPECT_NE(stream->meta_json.find("4242"), std::string::npos);
  ASSERT_EQ(stream->problems.size(), 1u);
  EXPECT_NE(stream->problems[0].find("the log header is damaged (bad magic); skipped its 32 bytes and recovered " +
                                     std::to_string(kBlocks + 3) + " frames"),
            std::string::npos)
      << stream->problems[0];
  size_t records = 0;
  for (const DecodedBlock& block : stream->blocks) records += block.records.size();
  EXPECT_EQ(records, static_cast<size_t>(kBlocks * 8));
}

// Issue 12: a disk full from the very start left no ring and no log, so every event of the
// stream was lost with nothing to count. The failed creation leaves an empty log behind, which
// readers report as an unwritten stream (analysis: process_log_unwritten). A real full disk: a
// small tmpfs, which mounting needs root for; elsewhere the test is skipped and says why.
TEST(StreamRoundtrip, AStreamThatCannotBeCreatedOnAFullDiskIsReadAsUnwritten) {
  TempDirectory dir;
  if (mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=65536") != 0) {
    GTEST_SKIP() << "mounting a small tmpfs needs root";
  }
  const int filler = open(dir.Path("filler").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ASSERT_GE(filler, 0);
  const std::string chunk(4096, 'x');
  while (write(filler, chunk.data(), chunk.size()) > 0) {
  }
  close(filler);

  StreamWriterOptions options;
  options.directory = dir.path();
  options.name = "proc-42-abcd";
  options.block_bytes = 4096;
  options.block_count = 8;
  auto writer = StreamWriter::Create(options);
  EXPECT_FALSE(writer.ok());
  auto names = ListStreams(dir.path());
  auto contents = ReadStream(dir.path(), "proc-42-abcd");
  umount2(dir.path().c_str(), MNT_DETACH);  // before any assertion can return
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, std::vector<std::string>{"proc-42-abcd"});
  ASSERT_TRUE(contents.ok()) << contents.status().message();
  EXPECT_TRUE(contents->unwritten);
}

}  // namespace
}  // namespace stepscope::store
