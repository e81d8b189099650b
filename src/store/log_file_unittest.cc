#include "store/log_file.h"

#include <gtest/gtest.h>
#include <cstring>
#include <unistd.h>

#include "base/file_system.h"

namespace stepscope::store {
namespace {

std::string TempPath(const char* name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid());
}

std::string WriteLog(const std::string& path, const std::vector<std::string>& payloads) {
  auto writer = LogWriter::Create(path, 77);
  EXPECT_TRUE(writer.ok());
  for (const auto& payload : payloads) EXPECT_TRUE((*writer)->Append(FrameType::kStats, payload).ok());
  return *LocalFileSystem().ReadFile(path);
}

TEST(ParseLog, ReturnsFramesInOrder) {
  std::string bytes = WriteLog(TempPath("in-order"), {"a", "bb", "ccc"});
  auto parsed = ParseLog(bytes);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->stream_id, 77u);
  ASSERT_EQ(parsed->frames.size(), 3u);
  EXPECT_EQ(parsed->frames[2].payload, "ccc");
  EXPECT_TRUE(parsed->problems.empty());
}

TEST(ParseLog, KeepsEveryIntactFrameBeforeATornLastFrame) {
  std::string bytes = WriteLog(TempPath("torn"), {"first", "second", "third-frame-payload"});
  for (size_t cut = 1; cut < 20; ++cut) {
    auto parsed = ParseLog(bytes.substr(0, bytes.size() - cut));
    ASSERT_TRUE(parsed.ok());
    ASSERT_EQ(parsed->frames.size(), 2u) << cut;
    ASSERT_EQ(parsed->problems.size(), 1u);
    EXPECT_NE(parsed->problems[0].find("skipped"), std::string::npos);
  }
}

TEST(ParseLog, SkipsACorruptFrameAndResynchronises) {
  std::string bytes = WriteLog(TempPath("flip"), {"first", "second-payload", "third"});
  auto clean = ParseLog(bytes);
  ASSERT_TRUE(clean.ok());
  size_t second = clean->frames[1].offset + sizeof(FrameHeader) + 2;
  bytes[second] ^= 0x40;
  auto parsed = ParseLog(bytes);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->frames.size(), 2u);
  EXPECT_EQ(parsed->frames[0].payload, "first");
  EXPECT_EQ(parsed->frames[1].payload, "third");
  ASSERT_EQ(parsed->problems.size(), 1u);
  EXPECT_NE(parsed->problems[0].find("checksum"), std::string::npos);
}

TEST(ParseLog, NamesBothVersionsWhenTheFileIsTooNew) {
  std::string bytes = WriteLog(TempPath("version"), {"x"});
  uint32_t future = kFormatVersion + 5;
  std::memcpy(bytes.data() + 8, &future, sizeof future);
  auto parsed = ParseLog(bytes);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(parsed.status().message().find("version " + std::to_string(future)), std::string::npos);
}

// Whatever byte of the header is damaged, every frame behind it is recovered, and a damaged
// magic, version or size field is said first.
TEST(ParseLog, RecoversEveryFrameBehindADamagedHeaderByte) {
  const std::string clean = WriteLog(TempPath("header"), {"first", "second", "third"});
  for (size_t at = 0; at < sizeof(LogHeader); ++at) {
    std::string bytes = clean;
    bytes[at] ^= 0xFF;
    auto parsed = ParseLog(bytes);
    ASSERT_TRUE(parsed.ok()) << "byte " << at << ": " << parsed.status().message();
    ASSERT_EQ(parsed->frames.size(), 3u) << "byte " << at;
    EXPECT_EQ(parsed->frames[2].payload, "third");
    const bool checked_field = at < 16;  // magic, version, header size; the rest is the stream id
    EXPECT_EQ(parsed->header_damaged, checked_field) << "byte " << at;
    if (checked_field) {
      ASSERT_EQ(parsed->problems.size(), 1u) << "byte " << at;
      EXPECT_NE(parsed->problems[0].find("the log header is damaged"), std::string::npos) << parsed->problems[0];
      EXPECT_NE(parsed->problems[0].find("recovered 3 frames whose checksums hold"), std::string::npos) << parsed->problems[0];
    } else {
      EXPECT_TRUE(parsed->problems.empty()) << "byte " << at;
    }
  }
}

TEST(ParseLog, RejectsAFileThatIsNotALog) {
  EXPECT_FALSE(ParseLog("hello").ok());
  EXPECT_FALSE(ParseLog(std::string(64, 'x')).ok());
}

}  // namespace
}  // namespace stepscope::store
