// Model::Refresh() on a run that is still being written (a live writer holds its ring): each
// refresh must see exactly what was appended — no event twice, none lost, open spans replaced
// once they end — and end up equal to a fresh load of the same files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <string>
#include <tuple>

#include "analysis/stepscope_loader.h"
#include "analysis/test_run_writer.h"
#include "base/file_system.h"

namespace stepscope::analysis {
namespace {

using store::Phase;
using testing::TestManifest;
using testing::TestStream;

// What identifies an event for the comparison: name, times, step, whether cut short.
using EventKey = std::tuple<std::string, int64_t, int64_t, int64_t, bool>;

std::multiset<EventKey> Events(const Model& model) {
  std::multiset<EventKey> events;
  for (const FrameworkEvent& event : model.events()) {
    events.emplace(std::string(model.String(event.name)), event.start_ns, event.end_ns, event.step, event.unfinished);
  }
  return events;
}

size_t SampleCount(const Model& model) {
  size_t samples = 0;
  for (const SystemSeries& series : model.series()) samples += series.time_ns.size();
  return samples;
}

class ModelRefreshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = ::testing::TempDir() + "/model-refresh-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    node_ = job_ + "/algo-1";
    ASSERT_TRUE(CreateDirectories(node_).ok());
    WriteManifest("running");
  }
  void WriteManifest(const std::string& status) {
    ASSERT_TRUE(WriteFileAtomically(node_ + "/manifest.json", TestManifest("algo-1", status)).ok());
  }
  // A fresh load of the same files, for comparison.
  Model Fresh() {
    auto model = LoadStepscopeRun(job_);
    EXPECT_TRUE(model.ok()) << model.status().message();
    return std::move(*model);
  }

  std::string job_;
  std::string node_;
};

TEST_F(ModelRefreshTest, RefreshSeesExactlyWhatWasAppended) {
  TestStream proc(node_, "proc-200-abcd", 200, false);
  TestStream system(node_, "system", 100, true);
  ASSERT_TRUE(proc.ok() && system.ok());
  proc.StepBegin(1, 1'000, Phase::kTrain, 0);
  proc.Begin(1, 1'100, "forward");
  proc.End(1, 1'900, "forward");
  proc.StepEnd(1, 2'000, Phase::kTrain, 0);
  proc.StepBegin(1, 2'000, Phase::kTrain, 1);
  proc.Begin(1, 2'100, "forward");  // still open when the model is built
  system.Sample(1'500, "cpu/0/util_pct", 50);

  auto loaded = LoadStepscopeRun(job_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Model model = std::move(*loaded);
  ASSERT_TRUE(model.CanGrow());
  EXPECT_EQ(Events(model), Events(Fresh()));
  EXPECT_EQ(model.events().size(), 4u);  // step 0, its forward, and the open step 1 and forward
  EXPECT_EQ(model.provisional().size(), 2u);  // the open step 1 and its forward
  EXPECT_EQ(SampleCount(model), 1u);

  // Nothing appended: nothing new, the same events.
  auto idle = model.Refresh();
  ASSERT_TRUE(idle.ok()) << idle.status().message();
  EXPECT_EQ(idle->new_events, 0u);
  EXPECT_EQ(idle->new_samples, 0u);
  EXPECT_EQ(Events(model), Events(Fresh()));

  // The open span and step end, an instant and a sample follow.
  proc.End(1, 2'900, "forward");
  proc.StepEnd(1, 3'000, Phase::kTrain, 1);
  proc.Instant(1, 3'100, "checkpoint");
  system.Sample(3'500, "cpu/0/util_pct", 70);
  auto grown = model.Refresh();
  ASSERT_TRUE(grown.ok()) << grown.status().message();
  EXPECT_EQ(grown->new_events, 1u);  // the instant; the span and step were there, cut short
  EXPECT_EQ(grown->new_samples, 1u);
  EXPECT_EQ(Events(model), Events(Fresh()));
  size_t unfinished = 0;
  for (const FrameworkEvent& event : model.events()) unfinished += event.unfinished;
  EXPECT_EQ(unfinished, 0u);
  EXPECT_EQ(model.steps().size(), 2u);
  EXPECT_EQ(SampleCount(model), 2u);
  EXPECT_TRUE(std::is_sorted(model.events().begin(), model.events().end(),
                             [](const FrameworkEvent& a, const FrameworkEvent& b) { return a.start_ns < b.start_ns; }));

  // The job ends: its writers go, the manifest is final, and the model stops following.
  proc.Close();
  system.Close();
  WriteManifest("exited");
  auto last = model.Refresh();
  ASSERT_TRUE(last.ok()) << last.status().message();
  EXPECT_EQ(last->new_events, 0u);
  EXPECT_FALSE(model.CanGrow());
  EXPECT_TRUE(model.provisional().empty());
  EXPECT_EQ(Events(model), Events(Fresh()));
  EXPECT_EQ(model.nodes()[0].manifest.status, store::ManifestStatus::kExited);
}

TEST_F(ModelRefreshTest, AProcessThatStartsLaterIsFoundByTheNextRefresh) {
  TestStream first(node_, "proc-200-abcd", 200, false);
  first.Instant(1, 1'000, "hello");
  auto loaded = LoadStepscopeRun(job_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Model model = std::move(*loaded);
  EXPECT_EQ(model.streams().size(), 1u);

  TestStream second(node_, "proc-300-efgh", 300, false);
  second.Begin(7, 2'000, "load");
  second.End(7, 2'500, "load");
  auto refreshed = model.Refresh();
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().message();
  EXPECT_EQ(refreshed->new_events, 1u);
  EXPECT_EQ(model.streams().size(), 2u);
  ASSERT_NE(model.FindProcess(0, 300), nullptr);
  EXPECT_EQ(Events(model), Events(Fresh()));
}

TEST_F(ModelRefreshTest, ADetailWindowThatClosesWhileTheJobRunsIsAddedOnce) {
  TestStream proc(node_, "proc-200-abcd", 200, false);
  proc.Instant(1, 1'000, "hello");
  auto loaded = LoadStepscopeRun(job_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Model model = std::move(*loaded);
  ASSERT_TRUE(model.CanGrow());

  // The window's file appears whole (renamed into place) while the job still runs.
  ASSERT_TRUE(CreateDirectories(node_ + "/detail").ok());
  const int64_t start = model.events()[0].start_ns;
  const std::string doc = R"({"format_version":1,"kind":"operators","pid":200,"events":[)"
                          R"({"name":"aten::linear","tid":1,"start_ns":)" + std::to_string(start + 100) +
                          R"(,"end_ns":)" + std::to_string(start + 200) + "}]}";
  ASSERT_TRUE(testing::WriteZstdFile(node_ + "/detail/operators-200-0.json.zst", doc));
  auto refreshed = model.Refresh();
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().message();
  size_t linear = 0;
  for (const FrameworkEvent& event : model.events()) linear += model.String(event.name) == "aten::linear";
  EXPECT_EQ(linear, 1u);
  EXPECT_EQ(Events(model), Events(Fresh()));

  // Read once: later refreshes do not add the same window again.
  proc.Instant(1, 3'000, "later");
  ASSERT_TRUE(model.Refresh().ok());
  EXPECT_EQ(Events(model), Events(Fresh()));
  EXPECT_EQ(model.events().size(), 3u);
  for (const Problem& problem : model.problems()) EXPECT_FALSE(problem.name.starts_with("detail_")) << problem.sentence;
}

TEST_F(ModelRefreshTest, AFinishedRunDoesNotFollow) {
  {
    TestStream proc(node_, "proc-200-abcd", 200, false);
    proc.Instant(1, 1'000, "hello");
  }
  WriteManifest("exited");
  Model model = Fresh();
  EXPECT_FALSE(model.CanGrow());
  auto refreshed = model.Refresh();
  ASSERT_TRUE(refreshed.ok());
  EXPECT_EQ(refreshed->new_events, 0u);
  EXPECT_EQ(model.events().size(), 1u);
}

}  // namespace
}  // namespace stepscope::analysis
