#include "base/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "base/test/temp_directory.h"

namespace stepscope {
namespace {

class FileSystemTest : public ::testing::Test {
 protected:
  // The reads below must return; should one block (on a FIFO) or read forever (from a device),
  // SIGALRM ends the test binary and ctest reports the test as failed instead of hanging.
  void SetUp() override { alarm(60); }
  void TearDown() override { alarm(0); }
  std::string Path(const std::string& name) const { return dir_.Path(name); }
  void Write(const std::string& name, const std::string& text) const {
    ASSERT_TRUE(WriteFileAtomically(Path(name), text).ok());
  }

  TempDirectory dir_;
};

TEST_F(FileSystemTest, ReadsARegularFileWithSlackForParsersThatReadAhead) {
  Write("manifest.json", "{\"job\": \"j\"}\n");
  auto text = ReadRegularFile(Path("manifest.json"), Symlinks::kRefuse);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "{\"job\": \"j\"}\n");
  EXPECT_GE(text->capacity(), text->size() + kReadFileSlackBytes);
}

TEST_F(FileSystemTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(mkfifo(Path("manifest.json").c_str(), 0644), 0);
  for (Symlinks symlinks : {Symlinks::kRefuse, Symlinks::kFollow}) {
    auto text = ReadRegularFile(Path("manifest.json"), symlinks);
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.status().message().find("is a FIFO, not a regular file"), std::string::npos)
        << text.status().message();
    EXPECT_NE(text.status().message().find(Path("manifest.json")), std::string::npos);
  }
  LocalFileSystem fs;
  EXPECT_FALSE(fs.ReadFile(Path("manifest.json")).ok());
}

TEST_F(FileSystemTest, ALinkToAnEndlessDeviceIsRefusedBeforeAnyRead) {
  ASSERT_EQ(symlink("/dev/zero", Path("system.log").c_str()), 0);
  ASSERT_EQ(symlink("/dev/urandom", Path("proc-1.log").c_str()), 0);
  for (const char* name : {"system.log", "proc-1.log"}) {
    auto refused = ReadRegularFile(Path(name), Symlinks::kRefuse);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("is a symbolic link"), std::string::npos) << refused.status().message();
    // Followed, the link leads to a device, which is no more readable than the link.
    auto followed = ReadRegularFile(Path(name), Symlinks::kFollow);
    ASSERT_FALSE(followed.ok());
    EXPECT_NE(followed.status().message().find("is a character device"), std::string::npos)
        << followed.status().message();
  }
}

TEST_F(FileSystemTest, ALinkOutOfTheDirectoryIsReadOnlyWhenLinksAreFollowed) {
  Write("outside.json", "{}");
  ASSERT_EQ(mkdir(Path("run").c_str(), 0755), 0);
  ASSERT_EQ(symlink(Path("outside.json").c_str(), Path("run/manifest.json").c_str()), 0);
  auto refused = ReadRegularFile(Path("run/manifest.json"), Symlinks::kRefuse);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("replace it with the file itself"), std::string::npos);
  auto followed = ReadRegularFile(Path("run/manifest.json"), Symlinks::kFollow);
  ASSERT_TRUE(followed.ok()) << followed.status().message();
  EXPECT_EQ(*followed, "{}");
}

TEST_F(FileSystemTest, AFileLargerThanItsBoundIsRefusedUnread) {
  // Sparse: a 1 TiB file costs no disk, and reading it would take the machine's memory.
  const int fd = open(Path("manifest.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t{1} << 40), 0);
  close(fd);
  auto bounded = ReadRegularFile(Path("manifest.json"), Symlinks::kRefuse, 1 << 20);
  ASSERT_FALSE(bounded.ok());
  EXPECT_NE(bounded.status().message().find("1099511627776 bytes, more than the 1048576 bytes"), std::string::npos)
      << bounded.status().message();
  auto unbounded = ReadRegularFile(Path("manifest.json"), Symlinks::kRefuse);
  ASSERT_FALSE(unbounded.ok());
  EXPECT_NE(unbounded.status().message().find("more than this machine's memory"), std::string::npos)
      << unbounded.status().message();
}

TEST_F(FileSystemTest, MissingFilesAndDirectoriesSayWhatTheyAre) {
  auto missing = ReadRegularFile(Path("nothing"), Symlinks::kRefuse);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto directory = ReadRegularFile(dir_.path(), Symlinks::kFollow);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("is a directory, not a regular file"), std::string::npos);
}

TEST_F(FileSystemTest, OpenRegularFileHandsBackABlockingDescriptor) {
  Write("ring", "abc");
  auto fd = OpenRegularFile(Path("ring"), Symlinks::kRefuse);
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  EXPECT_EQ(fcntl(fd->get(), F_GETFL) & O_NONBLOCK, 0);
  char bytes[4] = {};
  EXPECT_EQ(read(fd->get(), bytes, sizeof bytes), 3);
}

TEST_F(FileSystemTest, CreateFileAtomicallyNeverReplacesAFileThatIsThere) {
  auto created = CreateFileAtomically(Path("manifest.json"), "first");
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_TRUE(*created);
  auto again = CreateFileAtomically(Path("manifest.json"), "second");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(*again);
  EXPECT_EQ(*ReadRegularFile(Path("manifest.json"), Symlinks::kRefuse), "first");
  LocalFileSystem fs;
  EXPECT_EQ(fs.ListDirectory(dir_.path())->size(), 1u);  // no temporary left behind
  auto unwritable = CreateFileAtomically(Path("missing/manifest.json"), "x");
  ASSERT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.status().message().find(Path("missing")), std::string::npos);
}

}  // namespace
}  // namespace stepscope
