// A stream has one writer: a second writer of the same ring (two launchers sharing a node
// directory) must be refused without touching the live writer's ring or log. Before the lock
// was taken ahead of the truncation, the second writer shrank the first's mapped ring, and the
// first died of SIGBUS on its next record.
#include "store/ring_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/test/temp_directory.h"
#include "store/stream_reader.h"
#include "store/stream_writer.h"

namespace stepscope::store {
namespace {

class RingLock : public ::testing::Test {
 protected:
  StatusOr<std::unique_ptr<StreamWriter>> MakeWriter(const std::string& meta_json) {
    StreamWriterOptions options;
    options.directory = directory_.path();
    options.name = "system";
    options.block_bytes = 64 + 24 * 8;  // 8 records per block
    options.block_count = 4;
    options.meta_json = meta_json;
    return StreamWriter::Create(options);
  }
  // Fills a whole block the way the recorder does, writing into the mapping.
  static void FillBlock(RingFile& ring, uint64_t first_ticks) {
    BlockHeader* block = ring.Claim(7, 0);
    ASSERT_NE(block, nullptr);
    for (uint32_t i = 0; i < block->capacity; ++i) {
      RingFile::Records(block)[i] = RawRecord{first_ticks + i, 0, static_cast<uint8_t>(RecordKind::kInstant), 0, 0, 0};
      block->count.store(i + 1, std::memory_order_release);
    }
    ring.Seal(block);
  }
  uint64_t FileSize(const std::string& name) const {
    struct stat st;
    return stat(directory_.Path(name).c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  }

  TempDirectory directory_;
};

TEST_F(RingLock, ASecondWriterIsRefusedAndLeavesTheLiveStreamWhole) {
  auto first = MakeWriter(R"({"kind":"system","pid":1})");
  ASSERT_TRUE(first.ok()) << first.status().message();
  FillBlock((*first)->ring(), 100);
  ASSERT_EQ(*(*first)->FlushSealed(), 1u);
  const uint64_t ring_bytes = FileSize("system.ring");
  const uint64_t log_bytes = FileSize("system.log");

  auto second = MakeWriter(R"({"kind":"system","pid":2})");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(directory_.Path("system.ring") + "' is being written by another live process"),
            std::string::npos)
      << second.status().message();
  EXPECT_EQ(FileSize("system.ring"), ring_bytes);
  EXPECT_EQ(FileSize("system.log"), log_bytes);

  // The first writer goes on writing into every block of its mapping (a truncated file would
  // kill this test with SIGBUS here) and its whole stream reads back.
  for (uint64_t block = 1; block <= 4; ++block) {
    FillBlock((*first)->ring(), 100 + block * 100);
    ASSERT_EQ(*(*first)->FlushSealed(), 1u);
  }
  auto contents = ReadStream(directory_.path(), "system");
  ASSERT_TRUE(contents.ok()) << contents.status().message();
  EXPECT_EQ(contents->meta_json, R"({"kind":"system","pid":1})");
  ASSERT_EQ(contents->blocks.size(), 5u);
  EXPECT_EQ(contents->blocks.front().records.front().ticks, 100u);
  EXPECT_EQ(contents->blocks.back().records.front().ticks, 500u);
}

TEST_F(RingLock, TheNameIsFreeAgainOnceItsWriterIsGone) {
  auto first = MakeWriter(R"({"kind":"system","pid":1})");
  ASSERT_TRUE(first.ok()) << first.status().message();
  FillBlock((*first)->ring(), 100);
  first->reset();  // the lock goes with the writer

  auto second = MakeWriter(R"({"kind":"system","pid":2})");
  ASSERT_TRUE(second.ok()) << second.status().message();
  auto contents = ReadStream(directory_.path(), "system");
  ASSERT_TRUE(contents.ok()) << contents.status().message();
  EXPECT_EQ(contents->meta_json, R"({"kind":"system","pid":2})");
  EXPECT_TRUE(contents->blocks.empty());  // the new writer starts from an empty ring
}

TEST_F(RingLock, ALinkInPlaceOfTheRingIsNeverFollowed) {
  const std::string outside = directory_.Path("outside");
  ASSERT_TRUE(WriteFileAtomically(outside, "someone else's file").ok());
  ASSERT_EQ(symlink(outside.c_str(), directory_.Path("system.ring").c_str()), 0);
  auto writer = MakeWriter(R"({"kind":"system","pid":1})");
  ASSERT_FALSE(writer.ok());
  auto text = ReadRegularFile(outside, Symlinks::kFollow);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "someone else's file");
}

}  // namespace
}  // namespace stepscope::store
