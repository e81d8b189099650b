// Whole zstd files read back, and the files that must be refused with one line naming them:
// not zstd, truncated, inflating past the cap, too large to be one, a link, a FIFO.
#include "store/zstd_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <string>

#include "base/file_system.h"
#include "base/test/temp_directory.h"

namespace stepscope::store {
namespace {

std::string Compress(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t size = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  EXPECT_FALSE(ZSTD_isError(size));
  out.resize(size);
  return out;
}

class ZstdFileTest : public ::testing::Test {
 protected:
  void SetUp() override { alarm(60); }  // a FIFO that blocked the open would hang ctest otherwise
  void TearDown() override { alarm(0); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.Path(name);
    EXPECT_TRUE(WriteFileAtomically(path, bytes).ok());
    return path;
  }
  static std::string ErrorOf(const std::string& path, Symlinks symlinks = Symlinks::kRefuse,
                             uint64_t max_bytes = uint64_t{1} << 30) {
    auto read = ReadZstdFile(path, symlinks, max_bytes);
    EXPECT_FALSE(read.ok());
    if (read.ok()) return "";
    EXPECT_EQ(read.status().message().find('\n'), std::string::npos);
    return read.status().message();
  }

  TempDirectory dir_;
};

TEST_F(ZstdFileTest, ReadsEveryFrameAndOutputLargerThanOneDecoderBuffer) {
  // 3 MB across two frames: more than ZSTD_DStreamOutSize() per frame, so the decoder holds
  // inflated bytes after its input is consumed.
  std::string first(2 << 20, '\0'), second(1 << 20, '\0');
  for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<char>('a' + (i * 7) % 23);
  for (size_t i = 0; i < second.size(); ++i) second[i] = static_cast<char>('A' + (i * 5) % 19);
  const std::string path = Write("two.zst", Compress(first) + Compress(second));
  auto read = ReadZstdFile(path, Symlinks::kRefuse, uint64_t{1} << 30);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->size(), first.size() + second.size());
  EXPECT_TRUE(*read == first + second);
}

TEST_F(ZstdFileTest, RefusesBytesThatAreNotZstd) {
  const std::string path = Write("text.zst", "not zstd at all");
  EXPECT_EQ(ErrorOf(path), "'" + path + "' is not a zstd file: Unknown frame descriptor");
  EXPECT_EQ(ReadZstdFile(path, Symlinks::kRefuse, 1 << 20).status().code(), StatusCode::kDataLoss);
}

TEST_F(ZstdFileTest, RefusesATruncatedFrameAndAnEmptyFile) {
  const std::string whole = Compress(std::string(100000, 'x') + "end");
  const std::string path = Write("cut.zst", whole.substr(0, whole.size() - 4));
  EXPECT_EQ(ErrorOf(path), "'" + path + "' ends inside its zstd frame (truncated)");
  const std::string empty = Write("empty.zst", "");
  EXPECT_EQ(ErrorOf(empty), "'" + empty + "' ends inside its zstd frame (truncated)");
}

TEST_F(ZstdFileTest, StopsInflatingAtTheCap) {
  const std::string path = Write("bomb.zst", Compress(std::string(4 << 20, '\0')));  // a few hundred bytes
  EXPECT_EQ(ErrorOf(path, Symlinks::kRefuse, 1 << 20),
            "'" + path + "' inflates past 1 MiB, more than any file stepscope writes there; remove it");
  EXPECT_TRUE(ReadZstdFile(path, Symlinks::kRefuse, 4 << 20).ok());
}

TEST_F(ZstdFileTest, RefusesACompressedFileLargerThanTheCapBeforeReadingIt) {
  const std::string path = Write("big.zst", std::string(5000, 'z'));
  EXPECT_NE(ErrorOf(path, Symlinks::kRefuse, 1000).find("is 5000 bytes, more than the 1000 bytes"), std::string::npos);
}

TEST_F(ZstdFileTest, RefusesALinkWhenAskedAndAFifoAlways) {
  const std::string target = Write("real.zst", Compress("{}"));
  const std::string link = dir_.Path("link.zst");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_NE(ErrorOf(link).find("is a symbolic link"), std::string::npos);
  auto followed = ReadZstdFile(link, Symlinks::kFollow, 1 << 20);
  ASSERT_TRUE(followed.ok()) << followed.status().message();
  EXPECT_EQ(*followed, "{}");
  const std::string fifo = dir_.Path("fifo.zst");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(ErrorOf(fifo).find("is a FIFO, not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::store
