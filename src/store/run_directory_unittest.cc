// What is a run and what is not, and hostile files inside one: each case is refused with one
// line naming the file, within the test's alarm (a FIFO must not block the open, a link to an
// endless device must not be read).
#include "store/run_directory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/test/temp_directory.h"
#include "store/stream_reader.h"
#include "store/stream_writer.h"

namespace stepscope::store {
namespace {

constexpr const char* kManifest =
    R"({"schema_version":1,"job":"j","node":"n1","status":"exited","clock":{"monotonic_ns":5,"realtime_ns":9}})";

class RunDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(60);  // a read that blocks or never ends fails the binary instead of hanging ctest
    ASSERT_TRUE(CreateDirectories(Node()).ok());
  }
  void TearDown() override { alarm(0); }

  std::string Job() const { return dir_.Path("job"); }
  std::string Node() const { return dir_.Path("job/n1"); }
  void Write(const std::string& path, const std::string& text) { ASSERT_TRUE(WriteFileAtomically(path, text).ok()); }
  void WriteStream(const std::string& name) {
    StreamWriterOptions options;
    options.directory = Node();
    options.name = name;
    options.block_bytes = 64 + 24 * 8;
    options.block_count = 2;
    options.meta_json = R"({"kind":"system","pid":7})";
    auto writer = StreamWriter::Create(options);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
  }
  // The error for `path`, which must be one line.
  static std::string ErrorOf(const std::string& path) {
    auto nodes = FindRunNodes(path);
    EXPECT_FALSE(nodes.ok());
    if (nodes.ok()) return "";
    EXPECT_EQ(nodes.status().message().find('\n'), std::string::npos);
    return nodes.status().message();
  }

  TempDirectory dir_;
};

TEST_F(RunDirectoryTest, ALaunchersManifestMakesANodeAndItsJob) {
  Write(Node() + "/manifest.json", kManifest);
  for (const std::string& path : {Job(), Node()}) {
    auto nodes = FindRunNodes(path);
    ASSERT_TRUE(nodes.ok()) << nodes.status().message();
    ASSERT_EQ(nodes->nodes.size(), 1u);
    EXPECT_EQ(nodes->nodes[0].name, "n1");
    EXPECT_EQ(nodes->nodes[0].path, Node());
    EXPECT_TRUE(nodes->problems.empty());
  }
}

TEST_F(RunDirectoryTest, AStreamWithoutAManifestIsARunRecordedWithoutTheLauncher) {
  WriteStream("proc-7-abcd");
  auto nodes = FindRunNodes(Job());
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ(nodes->nodes.size(), 1u);
}

TEST_F(RunDirectoryTest, ARandomManifestAndGarbageLogsAreNotARun) {
  Write(Node() + "/manifest.json", R"({"name": "my project", "version": "1.0"})");
  Write(Node() + "/system.log", std::string(4096, 'x'));
  Write(Node() + "/proc-1.log", "STPSLOG?garbage after a near miss");
  EXPECT_EQ(ErrorOf(Job()), "'" + Job() + "' holds no stepscope run: '" + Node() +
                                "/manifest.json' is not a node manifest (no schema_version, node, status, clock) and "
                                "no stream file beside it starts with a stepscope header, and no model.stepscope; pass "
                                "the directory that `stepscope run` or `stepscope import` printed (<out>/<job>)");
}

TEST_F(RunDirectoryTest, GarbageLogsAloneAreNotARun) {
  Write(Node() + "/system.log", "not a log at all");
  EXPECT_NE(ErrorOf(Node()).find("no stream file in '" + Node() + "' starts with a stepscope header"), std::string::npos);
}

TEST_F(RunDirectoryTest, ADirectoryWithNothingOfARunSaysSo) {
  EXPECT_NE(ErrorOf(Job()).find("holds no stepscope run: no manifest.json or stream files in it or in its "
                                "subdirectories"),
            std::string::npos);
}

TEST_F(RunDirectoryTest, ADamagedManifestBesideRealStreamsKeepsTheRunReadableAndSaysSo) {
  Write(Node() + "/manifest.json", R"({"schema_version":1,"job":"j"})");
  WriteStream("system");
  auto nodes = FindRunNodes(Job());
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->problems.size(), 1u);
  EXPECT_EQ(nodes->problems[0], "'" + Node() + "/manifest.json' is not a node manifest (no node, status, clock); its "
                                               "streams are read without it");
}

TEST_F(RunDirectoryTest, ANewerManifestSaysToUpgrade) {
  Write(Node() + "/manifest.json",
        R"({"schema_version":2,"node":"n1","status":"exited","clock":{"monotonic_ns":5,"realtime_ns":9}})");
  EXPECT_NE(ErrorOf(Job()).find("schema_version 2; this stepscope reads 1 to 1 (upgrade stepscope"), std::string::npos);
}

TEST_F(RunDirectoryTest, AFifoManifestIsRefusedWithoutBlocking) {
  ASSERT_EQ(mkfifo((Node() + "/manifest.json").c_str(), 0644), 0);
  EXPECT_EQ(ErrorOf(Job()), "'" + Node() + "/manifest.json' is a FIFO, not a regular file; stepscope reads only " +
                                "regular files (replace it with the file itself)");
}

TEST_F(RunDirectoryTest, AFifoLogIsRefusedWithoutBlocking) {
  ASSERT_EQ(mkfifo((Node() + "/system.log").c_str(), 0644), 0);
  EXPECT_NE(ErrorOf(Node()).find("system.log' is a FIFO, not a regular file"), std::string::npos);
  // With a manifest the node is a run; every reader refuses the FIFO all the same: the run's
  // nodes are not found, and the stream is not read.
  Write(Node() + "/manifest.json", kManifest);
  EXPECT_NE(ErrorOf(Job()).find("system.log' is a FIFO, not a regular file"), std::string::npos);
  auto stream = ReadStream(Node(), "system");
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.status().message().find("system.log' is a FIFO, not a regular file"), std::string::npos)
      << stream.status().message();
}

TEST_F(RunDirectoryTest, LinksToEndlessDevicesAreRefusedUnread) {
  ASSERT_EQ(symlink("/dev/zero", (Node() + "/manifest.json").c_str()), 0);
  EXPECT_NE(ErrorOf(Job()).find("manifest.json' is a symbolic link"), std::string::npos);
  ASSERT_EQ(unlink((Node() + "/manifest.json").c_str()), 0);
  Write(Node() + "/manifest.json", kManifest);
  ASSERT_EQ(symlink("/dev/urandom", (Node() + "/system.log").c_str()), 0);
  EXPECT_NE(ErrorOf(Job()).find("system.log' is a symbolic link"), std::string::npos);
  auto stream = ReadStream(Node(), "system");
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.status().message().find("system.log' is a symbolic link"), std::string::npos)
      << stream.status().message();
}

TEST_F(RunDirectoryTest, ALinkOutOfTheRunIsNotFollowed) {
  // A real manifest elsewhere: followed, the node would read as a run of someone else's data.
  Write(dir_.Path("elsewhere.json"), kManifest);
  ASSERT_EQ(symlink(dir_.Path("elsewhere.json").c_str(), (Node() + "/manifest.json").c_str()), 0);
  EXPECT_NE(ErrorOf(Job()).find("manifest.json' is a symbolic link, which stepscope does not follow here"),
            std::string::npos);
}

TEST_F(RunDirectoryTest, ANodeDirectoryThatIsALinkIsSkippedAndSaidSo) {
  ASSERT_TRUE(CreateDirectories(dir_.Path("other/n2")).ok());
  Write(dir_.Path("other/n2/manifest.json"), kManifest);
  ASSERT_EQ(symlink(dir_.Path("other/n2").c_str(), (Job() + "/n2").c_str()), 0);
  Write(Node() + "/manifest.json", kManifest);
  auto nodes = FindRunNodes(Job());
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->nodes.size(), 1u);
  EXPECT_EQ(nodes->nodes[0].name, "n1");
  ASSERT_EQ(nodes->problems.size(), 1u);
  EXPECT_NE(nodes->problems[0].find("n2' is a symbolic link to a directory; not read"), std::string::npos);
}

TEST(ManifestDefect, NamesWhatANodeManifestLacks) {
  EXPECT_EQ(ManifestDefect(kManifest), "");
  EXPECT_EQ(ManifestDefect("{}"), "no schema_version, node, status, clock");
  EXPECT_EQ(ManifestDefect("[1, 2]"), "not a JSON object");
  EXPECT_EQ(ManifestDefect("{\"schema_version\": 1, \"node\": \"n\""), "not valid JSON");
  EXPECT_EQ(ManifestDefect(R"({"schema_version":"1","node":3,"status":"exited","clock":{"monotonic_ns":5}})"),
            "no schema_version, node, clock");
  EXPECT_EQ(ManifestDefect(std::string("\xff\xfe\0{", 4)), "not valid JSON");
}

}  // namespace
}  // namespace stepscope::store
