// The detail-window reader: which names are windows, how a node's windows are listed and
// described, and the files and directories it refuses (each named with its error, never a
// failure of the whole listing).
#include "analysis/detail_window_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "analysis/test_run_writer.h"
#include "base/file_system.h"
#include "base/test/temp_directory.h"

namespace stepscope::analysis {
namespace {

TEST(DetailFileName, ParsesKindPidAndWindow) {
  EXPECT_EQ(ParseDetailFileName("operators-4242-0.json.zst"), (DetailFileName{"operators", 4242, 0}));
  EXPECT_EQ(ParseDetailFileName("python-1-12.json.zst"), (DetailFileName{"python", 1, 12}));
  // A kind with dashes keeps them: the pid and window are the last two fields.
  EXPECT_EQ(ParseDetailFileName("my-kind-7-3.json.zst"), (DetailFileName{"my-kind", 7, 3}));
  EXPECT_EQ(ParseDetailFileName("python-999999999999999999-0.json.zst"),
            (DetailFileName{"python", 999999999999999999, 0}));
}

TEST(DetailFileName, IgnoresEveryOtherFileOfTheDirectory) {
  for (const char* name : {
           "python-4242-0.json.zst.tmp-4242",        // the writers' temporary files
           "operators-4242-0.json.zst.tmp.4242",
           ".dataloader-4242-1-4300.jsonl",          // a worker's batch lines
           "dataloader-4242.active",                 // the data-loader window's signal file
           "operators-4242-0.pt.trace.json.gz",      // Kineto's trace beside the document
           ".operators-4242-0.json.zst",             // a dot file
           "operators-4242.json.zst", "-4242-0.json.zst", "operators--0.json.zst", "operators-4242-.json.zst",
           "operators-+4242-0.json.zst", "operators-42 42-0.json.zst", "operators-4242-0x1.json.zst",
           "python-1234567890123456789-0.json.zst",  // 19 digits: not a pid
           ".json.zst", "operators-4242-0.json", "operators-4242-0.json.zstd"}) {
    EXPECT_EQ(ParseDetailFileName(name), std::nullopt) << name;
  }
}

TEST(DetailFileName, TheWritersNameParsesBack) {
  EXPECT_EQ(DetailWindowFileName("dataloader", 31337, 4), "dataloader-31337-4.json.zst");
  EXPECT_EQ(ParseDetailFileName(DetailWindowFileName("dataloader", 31337, 4)), (DetailFileName{"dataloader", 31337, 4}));
}

class DetailWindowFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(60);  // a FIFO or endless device that were opened would hang ctest otherwise
    ASSERT_TRUE(CreateDirectories(Detail()).ok());
  }
  void TearDown() override { alarm(0); }

  std::string Node() const { return dir_.Path("job/n"); }
  std::string Detail() const { return Node() + "/detail"; }
  store::RunNode RunNode() const { return {"node-n", Node()}; }
  void WriteDocument(const std::string& name, const std::string& json) {
    ASSERT_TRUE(testing::WriteZstdFile(Detail() + "/" + name, json));
  }

  TempDirectory dir_;
};

TEST_F(DetailWindowFilesTest, ListsWindowsByKindPidAndWindowFromTheirNamesOnly) {
  WriteDocument("python-20-10.json.zst", "not read");
  WriteDocument("python-20-2.json.zst", "not read");
  WriteDocument("operators-100-0.json.zst", "not read");
  WriteDocument("python-20-3.json.zst.tmp-20", "{}");
  ASSERT_TRUE(WriteFileAtomically(Detail() + "/dataloader-20.active", "{}").ok());
  auto files = ListDetailWindowFiles(RunNode());
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].kind, "operators");
  EXPECT_EQ((*files)[1].window, 2);  // by number, not by name
  EXPECT_EQ((*files)[2].window, 10);
  const DetailWindowFile& first = (*files)[0];
  EXPECT_EQ(first.node, "node-n");
  EXPECT_EQ(first.pid, 100);
  EXPECT_EQ(first.path, Detail() + "/operators-100-0.json.zst");
  EXPECT_EQ(first.file, "n/detail/operators-100-0.json.zst");
  struct stat st;
  ASSERT_EQ(stat(first.path.c_str(), &st), 0);
  EXPECT_EQ(first.bytes, static_cast<uint64_t>(st.st_size));
  EXPECT_TRUE(first.error.empty());
  EXPECT_FALSE(first.has_steps);
}

TEST_F(DetailWindowFilesTest, ANodeWithoutADetailDirectoryHasNoWindows) {
  ASSERT_EQ(rmdir(Detail().c_str()), 0);
  auto files = ListDetailWindowFiles(RunNode());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_TRUE(files->empty());
  EXPECT_TRUE(ReadDetailWindows({RunNode()}).empty());
}

// Regression: `<node>/detail` as a link was followed, so a copied run could make stepscope read
// (and `stepscope info` list) any directory on the machine.
TEST_F(DetailWindowFilesTest, ADetailDirectoryThatIsALinkIsRefusedNotFollowed) {
  const std::string elsewhere = dir_.Path("elsewhere");
  ASSERT_TRUE(CreateDirectories(elsewhere).ok());
  ASSERT_TRUE(testing::WriteZstdFile(elsewhere + "/python-1-0.json.zst", R"({"kind":"python"})"));
  ASSERT_EQ(rmdir(Detail().c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), Detail().c_str()), 0);

  auto files = ListDetailWindowFiles(RunNode());
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().message(),
            "'" + Detail() + "' is a symbolic link, which stepscope does not follow (a run is read only through its " +
                "own files); its detail windows are not read: replace the link with the directory itself");

  // Reported as a problem the way an unreadable file is: an entry with the error.
  const std::vector<DetailWindowFile> windows = ReadDetailWindows({RunNode()});
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].node, "node-n");
  EXPECT_EQ(windows[0].kind, "");
  EXPECT_EQ(windows[0].file, "n/detail");
  EXPECT_EQ(windows[0].path, Detail());
  EXPECT_EQ(windows[0].error, files.status().message());
}

TEST_F(DetailWindowFilesTest, ADetailFileInsteadOfADirectoryIsRefused) {
  ASSERT_EQ(rmdir(Detail().c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(Detail(), "x").ok());
  auto files = ListDetailWindowFiles(RunNode());
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("is not a directory"), std::string::npos) << files.status().message();
}

TEST_F(DetailWindowFilesTest, DescribesEachWindowFromItsDocument) {
  WriteDocument("operators-100-0.json.zst",
                R"({"format_version":1,"kind":"operators","pid":100,"window":{"index":0},"steps":[5,5],)"
                R"("step_phase":"TRAIN","start_ns":10,"end_ns":20,"complete":true,"profiler":"kineto",)"
                R"("events_total":7,"events_capped":false,"device_events_total":2,"operators":[{},{},{}]})");
  WriteDocument("python-100-2.json.zst",
                R"({"kind":"python","pid":100,"window":{"index":2},"steps":[9,11],"profiler":"cprofile",)"
                R"("profiles":[{"timer":"total_time"},{"timer":"cpu_time"}]})");
  WriteDocument("python-100-3.json.zst", R"({"kind":"python","profiler":"sampling","samples":40})");
  WriteDocument("dataloader-100-1.json.zst",
                R"({"kind":"dataloader","steps":[7,7],"batches_total":3,"workers":[{},{}],"complete":false})");
  const std::vector<DetailWindowFile> windows = ReadDetailWindows({RunNode()});
  ASSERT_EQ(windows.size(), 4u);
  const DetailWindowFile& loader = windows[0];
  EXPECT_EQ(loader.kind, "dataloader");
  EXPECT_TRUE(loader.has_steps);
  EXPECT_EQ(loader.first_step, 7);
  EXPECT_FALSE(loader.complete);
  EXPECT_EQ(loader.summary, (nlohmann::json{{"batches", 3}, {"workers", 2}}));
  const DetailWindowFile& operators = windows[1];
  EXPECT_EQ(operators.step_phase, "TRAIN");
  EXPECT_EQ(operators.start_ns, 10);
  EXPECT_EQ(operators.end_ns, 20);
  EXPECT_TRUE(operators.complete);
  EXPECT_EQ(operators.summary, (nlohmann::json{{"profiler", "kineto"}, {"events", 7}, {"events_capped", false},
                                               {"device_events", 2}, {"operators", 3}}));
  EXPECT_EQ(windows[2].first_step, 9);
  EXPECT_EQ(windows[2].last_step, 11);
  EXPECT_EQ(windows[2].summary, (nlohmann::json{{"profiler", "cprofile"}, {"profiles", 2},
                                                {"timers", {"total_time", "cpu_time"}}}));
  EXPECT_EQ(windows[3].summary, (nlohmann::json{{"profiler", "sampling"}, {"samples", 40}}));
  for (const DetailWindowFile& window : windows) EXPECT_TRUE(window.error.empty()) << window.error;
}

TEST_F(DetailWindowFilesTest, FieldsOfTheWrongTypeKeepTheNamesValues) {
  WriteDocument("python-100-2.json.zst",
                R"({"kind":7,"pid":"x","window":[1],"steps":[1,"2"],"step_phase":{},"start_ns":1.5,)"
                R"("complete":"yes","profiler":null,"profiles":{"timer":1}})");
  WriteDocument("operators-100-3.json.zst", R"({"window":{"index":"3"},"steps":[1],"operators":{"a":1}})");
  const std::vector<DetailWindowFile> windows = ReadDetailWindows({RunNode()});
  ASSERT_EQ(windows.size(), 2u);
  const DetailWindowFile& python = windows[1];
  EXPECT_TRUE(python.error.empty()) << python.error;
  EXPECT_EQ(python.kind, "python");
  EXPECT_EQ(python.pid, 100);
  EXPECT_EQ(python.window, 2);
  EXPECT_FALSE(python.has_steps);
  EXPECT_EQ(python.step_phase, "");
  EXPECT_EQ(python.start_ns, 0);
  EXPECT_FALSE(python.complete);
  EXPECT_EQ(python.summary, (nlohmann::json{{"profiler", ""}, {"profiles", 0}, {"timers", nlohmann::json::array()}}));
  EXPECT_EQ(windows[0].window, 3);
  EXPECT_EQ(windows[0].summary["operators"], 0);
}

TEST_F(DetailWindowFilesTest, AnUnreadableFileIsListedWithItsErrorAndTheOthersAreRead) {
  ASSERT_TRUE(WriteFileAtomically(Detail() + "/python-1-0.json.zst", "not zstd at all").ok());
  WriteDocument("python-1-1.json.zst", "{truncated");
  WriteDocument("python-1-2.json.zst", "[1, 2]");
  WriteDocument("python-1-3.json.zst", R"({"format_version":2,"kind":"python"})");
  ASSERT_EQ(symlink((Detail() + "/python-1-5.json.zst").c_str(), (Detail() + "/python-1-4.json.zst").c_str()), 0);
  WriteDocument("python-1-5.json.zst", R"({"format_version":1,"kind":"python","steps":[3,4]})");
  ASSERT_EQ(mkfifo((Detail() + "/python-1-6.json.zst").c_str(), 0600), 0);
  const std::vector<DetailWindowFile> windows = ReadDetailWindows({RunNode()});
  ASSERT_EQ(windows.size(), 7u);
  const std::string path = Detail() + "/python-1-";
  EXPECT_EQ(windows[0].error, "'" + path + "0.json.zst' is not a zstd file: Unknown frame descriptor");
  EXPECT_EQ(windows[1].error, "'" + path + "1.json.zst' does not hold a JSON object");
  EXPECT_EQ(windows[2].error, "'" + path + "2.json.zst' does not hold a JSON object");
  EXPECT_EQ(windows[3].error, "'" + path + "3.json.zst' has format_version 2; this stepscope reads detail documents "
                              "up to version 1 (read it with the stepscope that recorded the run)");
  EXPECT_NE(windows[4].error.find("4.json.zst' is a symbolic link"), std::string::npos) << windows[4].error;
  EXPECT_TRUE(windows[5].error.empty()) << windows[5].error;
  EXPECT_TRUE(windows[5].has_steps);
  EXPECT_NE(windows[6].error.find("6.json.zst' is a FIFO"), std::string::npos) << windows[6].error;
  for (size_t i = 0; i < windows.size(); ++i) {
    EXPECT_EQ(windows[i].window, static_cast<int64_t>(i));  // the name's fields stay
    EXPECT_EQ(windows[i].kind, "python");
  }
}

TEST_F(DetailWindowFilesTest, ReadsWindowsOfEveryNodeByNode) {
  WriteDocument("python-1-0.json.zst", R"({"kind":"python"})");
  const std::string other = dir_.Path("job/m");
  ASSERT_TRUE(CreateDirectories(other + "/detail").ok());
  ASSERT_TRUE(testing::WriteZstdFile(other + "/detail/operators-2-0.json.zst", R"({"kind":"operators"})"));
  const std::vector<DetailWindowFile> windows = ReadDetailWindows({RunNode(), {"node-m", other}});
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].node, "node-m");
  EXPECT_EQ(windows[0].file, "m/detail/operators-2-0.json.zst");
  EXPECT_EQ(windows[1].node, "node-n");
}

}  // namespace
}  // namespace stepscope::analysis
