// Writes streams through StreamWriter/RingFile the way the recorder does and reads them back
// through ReadStream and RunReader.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "base/file_system.h"
#include "base/test/temp_directory.h"
#include "store/run_reader.h"
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

  auto run = RunReader::Open(directory_);
  ASSERT_TRUE(run.ok()) << run.status().message();
  int spans = 0, instants = 0;
  for (const Event& e : run->events()) {
    spans += e.kind == EventKind::kSpan;
    instants += e.kind == EventKind::kInstant;
  }
  EXPECT_EQ(spans, 6);
  EXPECT_EQ(instants, 1);
  EXPECT_EQ(run->streams()[0].pid, 4242);
  // ticks_per_ns 1 and the anchor put tick 100 at Unix 1 s + 100 ns.
  EXPECT_EQ(run->events().front().start_ns, 1'000'000'100);
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

TEST_F(StreamRoundTrip, RunReaderQueriesByTimeKindAndThread) {
  auto writer = MakeWriter();
  ASSERT_TRUE(writer->AppendStrings({{1, "a"}, {2, "b"}}).ok());
  BlockHeader* t1 = writer->ring().Claim(1, 0);
  BlockHeader* t2 = writer->ring().Claim(2, 0);
  Append(t1, Rec(RecordKind::kBegin, 100, 1));
  Append(t1, Rec(RecordKind::kEnd, 200, 1));
  Append(t2, Rec(RecordKind::kInstant, 150, 2));
  Append(t2, Rec(RecordKind::kBegin, 300, 2));  // never ends: unfinished
  auto run = RunReader::Open(directory_);
  ASSERT_TRUE(run.ok());
  EventQuery only_spans;
  only_spans.kinds = 1u << static_cast<uint32_t>(EventKind::kSpan);
  auto spans = run->Query(only_spans);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_FALSE(spans[0]->unfinished);
  EXPECT_TRUE(spans[1]->unfinished);
  EventQuery thread2;
  thread2.tid = 2;
  EXPECT_EQ(run->Query(thread2).size(), 2u);
  EventQuery window;
  window.start_ns = 1'000'000'160;
  window.end_ns = 1'000'000'250;
  auto in_window = run->Query(window);
  ASSERT_EQ(in_window.size(), 1u);  // span a [100,200] overlaps; the instant at 150 does not
  EXPECT_EQ(run->Name(in_window[0]->name), "a");
}

TEST_F(StreamRoundTrip, AnEndClosingAnOuterSpanEndsTheUnclosedInnerOnesAsUnfinished) {
  auto writer = MakeWriter();
  ASSERT_TRUE(writer->AppendStrings({{1, "outer"}, {2, "inner"}}).ok());
  BlockHeader* t = writer->ring().Claim(1, 0);
  Append(t, Rec(RecordKind::kBegin, 100, 1));
  Append(t, Rec(RecordKind::kBegin, 110, 2));
  Append(t, Rec(RecordKind::kEnd, 200, 1));  // "inner" never ends
  auto run = RunReader::Open(directory_);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->events().size(), 2u);
  const Event& inner = run->events()[1];
  EXPECT_EQ(run->Name(inner.name), "inner");
  EXPECT_TRUE(inner.unfinished);
  EXPECT_EQ(inner.end_ns, 1'000'000'200);
  EXPECT_FALSE(run->events()[0].unfinished);
}

TEST(RunReaderOpen, ExplainsAMissingOrEmptyDirectory) {
  auto missing = RunReader::Open("/nonexistent/stepscope-run");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("stepscope run"), std::string::npos);
  std::string empty = ::testing::TempDir() + "/empty-run-" + std::to_string(getpid());
  ASSERT_TRUE(CreateDirectories(empty).ok());
  auto nothing = RunReader::Open(empty);
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("no stepscope run"), std::string::npos);
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

  auto run = RunReader::Open(directory_);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->events().size(), static_cast<size_t>(kBlocks * 4));
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
