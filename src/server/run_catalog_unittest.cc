#include "server/run_catalog.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "base/file_system.h"
#include "store/run_manifest.h"

namespace stepscope::server {
namespace {

class RunCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/run-catalog-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // A node manifest written by the real writer (store/run_manifest.h).
  void WriteNode(const std::string& job_dir, const std::string& node, store::ManifestStatus status,
                 int64_t start_ns, int64_t end_ns = 0, int exit_code = 0, const std::string& job = "") {
    store::RunManifest manifest;
    manifest.job = job.empty() ? job_dir : job;
    manifest.node = node;
    manifest.status = status;
    manifest.has_clock = true;
    manifest.clock_realtime_ns = start_ns;
    manifest.start_time_ns = start_ns;
    manifest.end_time_ns = end_ns;
    manifest.instance_type = "p3.2xlarge";
    if (status == store::ManifestStatus::kExited || status == store::ManifestStatus::kKilled) {
      manifest.exit.known = true;
      manifest.exit.exit_code = exit_code;
      manifest.exit.signaled = status == store::ManifestStatus::kKilled;
      manifest.exit.signal = manifest.exit.signaled ? 9 : 0;
    }
    const std::string dir = root_ + "/" + job_dir + "/" + node;
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(WriteFileAtomically(dir + "/manifest.json", store::ManifestText(manifest)).ok());
  }

  const RunEntry& Only(const std::vector<RunEntry>& runs, const std::string& id) {
    const RunEntry* run = FindRun(runs, id);
    EXPECT_NE(run, nullptr) << id;
    static const RunEntry kNone;
    return run ? *run : kNone;
  }

  std::string root_;
};

TEST_F(RunCatalogTest, ListsFinishedRunningAndKilledRunsFromTheirManifests) {
  WriteNode("done", "algo-1", store::ManifestStatus::kExited, 1000, 5000, 0, "train");
  WriteNode("done", "algo-2", store::ManifestStatus::kExited, 900, 6000, 0, "train");
  WriteNode("live", "algo-1", store::ManifestStatus::kRunning, 7000);
  WriteNode("crashed", "algo-1", store::ManifestStatus::kExited, 100, 200, 3);
  WriteNode("oom", "algo-1", store::ManifestStatus::kKilled, 50, 60);
  auto runs = ListRuns({root_, false});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ((*runs)[0].id, "live");  // newest first

  const RunEntry& done = Only(*runs, "done");
  EXPECT_EQ(done.job, "train");
  EXPECT_EQ(done.status, RunStatus::kCompleted);
  EXPECT_EQ(done.start_ns, 900);
  EXPECT_EQ(done.end_ns, 6000);
  EXPECT_EQ(done.nodes, (std::vector<std::string>{"algo-1", "algo-2"}));
  EXPECT_EQ(done.instance_type, "p3.2xlarge");
  EXPECT_TRUE(done.problems.empty());
  EXPECT_EQ(done.path, "done");

  EXPECT_EQ(Only(*runs, "live").status, RunStatus::kRunning);
  EXPECT_EQ(Only(*runs, "live").end_ns, 0);
  EXPECT_EQ(Only(*runs, "crashed").status, RunStatus::kFailed);
  EXPECT_EQ(Only(*runs, "oom").status, RunStatus::kKilled);

  const nlohmann::json json = RunEntryJson(done, true);
  EXPECT_EQ(json["status"], "completed");
  EXPECT_EQ(json["loaded"], true);
  EXPECT_DOUBLE_EQ(json["duration_s"].get<double>(), 5100e-9);
}

TEST_F(RunCatalogTest, OneRunningNodeKeepsTheJobRunning) {
  WriteNode("job", "algo-1", store::ManifestStatus::kExited, 10, 20);
  WriteNode("job", "algo-2", store::ManifestStatus::kRunning, 10);
  auto runs = ListRuns({root_, false});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(Only(*runs, "job").status, RunStatus::kRunning);
  EXPECT_EQ(Only(*runs, "job").end_ns, 0);
}

TEST_F(RunCatalogTest, ANodeWhoseLauncherIsGoneNoLongerKeepsTheJobRunning) {
  WriteNode("job", "algo-1", store::ManifestStatus::kExited, 10, 20);
  WriteNode("job", "algo-2", store::ManifestStatus::kRunning, 10);
  WriteNode("live", "algo-1", store::ManifestStatus::kRunning, 10);
  // Both sampler rings are there; only live's is locked, as a running launcher holds it.
  const std::string lost_ring = root_ + "/job/algo-2/system.ring";
  const std::string live_ring = root_ + "/live/algo-1/system.ring";
  ASSERT_TRUE(WriteFileAtomically(lost_ring, "ring").ok());
  ASSERT_TRUE(WriteFileAtomically(live_ring, "ring").ok());
  const int held = open(live_ring.c_str(), O_RDWR);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  auto runs = ListRuns({root_, false});
  close(held);
  ASSERT_TRUE(runs.ok());
  const RunEntry& job = Only(*runs, "job");
  EXPECT_EQ(job.status, RunStatus::kKilled);
  ASSERT_EQ(job.problems.size(), 1u);
  EXPECT_EQ(job.problems[0].name, "node_stopped_early");
  EXPECT_NE(job.problems[0].sentence.find("node 'algo-2''s launcher is gone"), std::string::npos);
  EXPECT_EQ(Only(*runs, "live").status, RunStatus::kRunning);
  EXPECT_TRUE(Only(*runs, "live").problems.empty());
}

TEST_F(RunCatalogTest, CorruptPartialForeignAndSymlinkedRunsAreEntriesWithProblems) {
  WriteNode("good", "algo-1", store::ManifestStatus::kExited, 10, 20);
  // Corrupt: the manifest is not JSON and no stream proves the node is stepscope's.
  std::filesystem::create_directories(root_ + "/corrupt/algo-1");
  ASSERT_TRUE(WriteFileAtomically(root_ + "/corrupt/algo-1/manifest.json", "{\"schema_version\": 1, trunc").ok());
  // Foreign: some other directory under the root.
  std::filesystem::create_directories(root_ + "/photos/2024");
  ASSERT_TRUE(WriteFileAtomically(root_ + "/photos/2024/cat.jpg", "JFIF").ok());
  // Partial import: its manifest is there, the model file is not.
  std::filesystem::create_directories(root_ + "/imported");
  ASSERT_TRUE(WriteFileAtomically(root_ + "/imported/manifest.json",
                                  R"({"job":"sm","source":"sagemaker","nodes":["algo-1"]})").ok());
  // Symlinked: a link to a good run is not followed.
  ASSERT_EQ(symlink((root_ + "/good").c_str(), (root_ + "/link").c_str()), 0);
  // A stray file is not a run at all.
  ASSERT_TRUE(WriteFileAtomically(root_ + "/notes.txt", "hello").ok());

  auto runs = ListRuns({root_, false});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(runs->size(), 5u);
  EXPECT_TRUE(Only(*runs, "good").problems.empty());
  for (const char* id : {"corrupt", "photos", "link"}) {
    const RunEntry& run = Only(*runs, id);
    EXPECT_EQ(run.status, RunStatus::kUnknown) << id;
    ASSERT_FALSE(run.problems.empty()) << id;
    EXPECT_EQ(run.problems[0].severity, analysis::ProblemSeverity::kError) << id;
  }
  EXPECT_EQ(Only(*runs, "link").problems[0].name, "symlinked_run");
  EXPECT_EQ(Only(*runs, "photos").problems[0].name, "not_a_run");
  const RunEntry& imported = Only(*runs, "imported");
  EXPECT_EQ(imported.job, "sm");
  EXPECT_EQ(imported.source, "sagemaker");
  EXPECT_EQ(imported.status, RunStatus::kUnknown);
  ASSERT_EQ(imported.problems.size(), 1u);
  EXPECT_EQ(imported.problems[0].name, "model_file_missing");
}

TEST_F(RunCatalogTest, AVanishedRunLeavesTheListingAndAVanishedRootIsAnError) {
  WriteNode("a", "algo-1", store::ManifestStatus::kExited, 10, 20);
  WriteNode("b", "algo-1", store::ManifestStatus::kRunning, 30);
  ASSERT_EQ(ListRuns({root_, false})->size(), 2u);
  std::filesystem::remove_all(root_ + "/b");
  auto runs = ListRuns({root_, false});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].id, "a");
  // A run whose manifest vanished while its directory stays: listed, status unknown, and why.
  std::filesystem::remove(root_ + "/a/algo-1/manifest.json");
  runs = ListRuns({root_, false});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, RunStatus::kUnknown);
  EXPECT_FALSE((*runs)[0].problems.empty());
  std::filesystem::remove_all(root_);
  auto gone = ListRuns({root_, false});
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find(root_), std::string::npos);
}

TEST_F(RunCatalogTest, IdsAreListedNamesOnlyNeverPaths) {
  WriteNode("run", "algo-1", store::ManifestStatus::kExited, 10, 20);
  auto runs = ListRuns({root_, false});
  ASSERT_TRUE(runs.ok());
  EXPECT_NE(FindRun(*runs, "run"), nullptr);
  for (const char* id : {"..", ".", "", "run/algo-1", "../run", "run/..", "/run", "RUN", "run "}) {
    EXPECT_EQ(FindRun(*runs, id), nullptr) << id;
  }
}

TEST_F(RunCatalogTest, ResolvesARootAJobDirectoryAndANodeDirectory) {
  WriteNode("job", "algo-1", store::ManifestStatus::kExited, 10, 20);
  auto root = ResolveServeRoot(root_);
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE(root->single_run);
  auto job = ResolveServeRoot(root_ + "/job");
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(job->single_run);
  auto listed = ListRuns(*job);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, "job");
  EXPECT_EQ((*listed)[0].path, ".");
  EXPECT_EQ((*listed)[0].status, RunStatus::kCompleted);
  auto node = ResolveServeRoot(root_ + "/job/algo-1");
  ASSERT_TRUE(node.ok());
  EXPECT_TRUE(node->single_run);

  auto missing = ResolveServeRoot(root_ + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
  ASSERT_TRUE(WriteFileAtomically(root_ + "/file", "x").ok());
  EXPECT_FALSE(ResolveServeRoot(root_ + "/file").ok());
}

TEST_F(RunCatalogTest, FiltersBySearchStatusAndTime) {
  RunEntry run;
  run.id = "resnet-20261121";
  run.job = "ResNet50 training";
  run.status = RunStatus::kCompleted;
  run.start_ns = 1000;
  run.end_ns = 2000;
  EXPECT_TRUE(MatchesFilter(run, {}, 0));
  EXPECT_TRUE(MatchesFilter(run, {"resnet50", std::nullopt, 0, 0}, 0));
  EXPECT_TRUE(MatchesFilter(run, {"2026", std::nullopt, 0, 0}, 0));
  EXPECT_FALSE(MatchesFilter(run, {"bert", std::nullopt, 0, 0}, 0));
  EXPECT_TRUE(MatchesFilter(run, {"", RunStatus::kCompleted, 0, 0}, 0));
  EXPECT_FALSE(MatchesFilter(run, {"", RunStatus::kRunning, 0, 0}, 0));
  EXPECT_TRUE(MatchesFilter(run, {"", std::nullopt, 1500, 3000}, 0));
  EXPECT_FALSE(MatchesFilter(run, {"", std::nullopt, 2500, 0}, 0));
  EXPECT_FALSE(MatchesFilter(run, {"", std::nullopt, 0, 500}, 0));
  run.end_ns = 0;  // still running: it lasts until now
  EXPECT_TRUE(MatchesFilter(run, {"", std::nullopt, 2500, 0}, 5000));
  run.start_ns = 0;  // when it ran is unknown: only unfiltered
  EXPECT_FALSE(MatchesFilter(run, {"", std::nullopt, 1, 0}, 5000));
  EXPECT_EQ(RunStatusFromName("killed"), RunStatus::kKilled);
  EXPECT_EQ(RunStatusFromName("KILLED"), std::nullopt);
}

}  // namespace
}  // namespace stepscope::server
