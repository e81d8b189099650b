// Writes small runs with the real store writer (test_run_writer.h) and reads them back as one
// list of events: how begin/end records pair into spans and steps, where arguments attach, what
// a process that died (or still runs) leaves open, and the clock conversion to Unix time.
#include "analysis/recorded_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/test_run_writer.h"
#include "base/file_system.h"

namespace stepscope::analysis {
namespace {

using store::Phase;
using testing::kTestEpochNs;
using testing::TestManifest;
using testing::TestStream;

constexpr int64_t T = kTestEpochNs;

class RecordedRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = ::testing::TempDir() + "/recorded-run-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    node_ = job_ + "/algo-1";
    ASSERT_TRUE(CreateDirectories(node_).ok());
  }
  void WriteManifest(const std::string& status) {
    ASSERT_TRUE(WriteFileAtomically(node_ + "/manifest.json", TestManifest("algo-1", status)).ok());
  }

  std::string job_;
  std::string node_;
};

// (name, start, end, unfinished) relative to kTestEpochNs, of the events of `kind`, by start.
using Shape = std::tuple<std::string, int64_t, int64_t, bool>;
std::vector<Shape> ShapesOf(const RecordedRun& run, RecordedKind kind) {
  std::vector<Shape> shapes;
  for (const RecordedRun::Event& e : run.events()) {
    if (e.event.kind != kind) continue;
    shapes.emplace_back(std::string(run.Name(e.event.name)), e.event.start_ns - T, e.event.end_ns - T,
                        e.event.unfinished);
  }
  return shapes;
}

const RecordedRun::Event* Find(const RecordedRun& run, RecordedKind kind, std::string_view name) {
  for (const RecordedRun::Event& e : run.events()) {
    if (e.event.kind == kind && run.Name(e.event.name) == name) return &e;
  }
  return nullptr;
}

TEST_F(RecordedRunTest, NestedSpansPairPerThreadAndComeSortedByStart) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-7-a", 7, false);
    ASSERT_TRUE(proc.ok());
    proc.Begin(1, 100, "outer");
    proc.Begin(2, 105, "other-thread");  // thread 2's begin does not pair with thread 1's end
    proc.Begin(1, 110, "inner");
    proc.End(1, 200, "inner");
    proc.Begin(1, 210, "inner");
    proc.End(1, 250, "inner");
    proc.End(2, 260, "other-thread");
    proc.End(1, 300, "outer");
    proc.Instant(1, 310, "tick");
    proc.Counter(1, 320, "loss", 2.5);
  }
  auto read = ReadRecordedRun(job_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RecordedRun& run = *read;
  EXPECT_TRUE(run.problems().empty()) << run.problems()[0];
  EXPECT_EQ(ShapesOf(run, RecordedKind::kSpan), (std::vector<Shape>{{"outer", 100, 300, false},
                                                                     {"other-thread", 105, 260, false},
                                                                     {"inner", 110, 200, false},
                                                                     {"inner", 210, 250, false}}));
  EXPECT_TRUE(std::is_sorted(run.events().begin(), run.events().end(), [](const auto& a, const auto& b) {
    return a.event.start_ns < b.event.start_ns;
  }));
  const RecordedRun::Event* other = Find(run, RecordedKind::kSpan, "other-thread");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->event.tid, 2u);
  const RecordedRun::Event* loss = Find(run, RecordedKind::kCounter, "loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->event.value, 2.5);
  EXPECT_EQ(loss->event.start_ns, loss->event.end_ns);
  EXPECT_NE(Find(run, RecordedKind::kInstant, "tick"), nullptr);
  // Per thread, as a caller filters: thread 2 holds one event.
  EXPECT_EQ(std::count_if(run.events().begin(), run.events().end(), [](const auto& e) { return e.event.tid == 2; }), 1);
}

TEST_F(RecordedRunTest, AnEndClosingAnOuterSpanEndsTheUnclosedInnerOnesAsUnfinished) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-7-a", 7, false);
    proc.Begin(1, 100, "outer");
    proc.Begin(1, 110, "inner");
    proc.Begin(1, 120, "innermost");
    proc.End(1, 200, "outer");  // "inner" and "innermost" never end
    proc.Instant(1, 900, "later");
  }
  auto read = ReadRecordedRun(job_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RecordedRun& run = *read;
  EXPECT_EQ(ShapesOf(run, RecordedKind::kSpan), (std::vector<Shape>{{"outer", 100, 200, false},
                                                                     {"inner", 110, 200, true},
                                                                     {"innermost", 120, 200, true}}));
  EXPECT_TRUE(run.problems().empty()) << run.problems()[0];
}

TEST_F(RecordedRunTest, ArgumentsAttachToTheThreadsLatestEventAndAfterAnEndToTheEndedSpan) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-7-a", 7, false);
    proc.Begin(1, 100, "forward");
    proc.IntArg(1, "batch", 64);  // to the open span
    proc.Begin(1, 110, "layer");
    proc.End(1, 150, "layer");
    proc.StringArg(1, "kernel", "gemm");  // after layer's end: to layer, not to forward
    proc.End(1, 200, "forward");
    proc.DoubleArg(1, "lr", 0.5);  // after forward's end: to forward
    proc.StepBegin(1, 300, Phase::kTrain, 0);
    proc.IntArg(1, "samples", 32);  // to the open step
    proc.StepEnd(1, 400, Phase::kTrain, 0);
    proc.Instant(1, 500, "tick");
    proc.IntArg(1, "n", 3);
  }
  auto read = ReadRecordedRun(job_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RecordedRun& run = *read;
  auto args_of = [&](RecordedKind kind, std::string_view name) {
    std::vector<std::string> args;
    const RecordedRun::Event* e = Find(run, kind, name);
    if (e == nullptr) return args;
    for (const RecordedArg& arg : e->args) {
      std::string value;
      switch (arg.type) {
        case RecordedArg::Type::kInt: value = std::to_string(arg.int_value); break;
        case RecordedArg::Type::kDouble: value = std::to_string(arg.double_value); break;
        case RecordedArg::Type::kString: value = std::string(run.Name(arg.string_value)); break;
      }
      args.push_back(std::string(run.Name(arg.key)) + "=" + value);
    }
    return args;
  };
  EXPECT_EQ(args_of(RecordedKind::kSpan, "forward"), (std::vector<std::string>{"batch=64", "lr=0.500000"}));
  EXPECT_EQ(args_of(RecordedKind::kSpan, "layer"), (std::vector<std::string>{"kernel=gemm"}));
  EXPECT_EQ(args_of(RecordedKind::kStep, "Step:ModeKeys.TRAIN"), (std::vector<std::string>{"samples=32"}));
  EXPECT_EQ(args_of(RecordedKind::kInstant, "tick"), (std::vector<std::string>{"n=3"}));
}

TEST_F(RecordedRunTest, StepEndsCloseTheirPhaseAndDeferredStepsTakeTheEndsPhaseAndNumber) {
  constexpr int64_t kDeferred = -2, kCancelled = -3;  // STEPSCOPE_DEFERRED_STEP, STEPSCOPE_CANCELLED_STEP
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-7-a", 7, false);
    proc.StepBegin(1, 100, Phase::kTrain, 0);
    proc.StepBegin(1, 110, Phase::kEval, 4);   // nested in TRAIN 0
    proc.StepEnd(1, 150, Phase::kTrain, 0);   // closes TRAIN 0, not the innermost EVAL 4
    proc.StepEnd(1, 160, Phase::kEval, 4);
    proc.StepBegin(1, 200, Phase::kGlobal, kDeferred);
    proc.StepEnd(1, 300, Phase::kTrain, 1);
    proc.StepBegin(1, 300, Phase::kGlobal, kDeferred);  // withdrawn: not a step
    proc.IntArg(1, "dropped", 1);
    proc.StepEnd(1, 350, Phase::kGlobal, kCancelled);
    proc.StepBegin(1, 400, Phase::kGlobal, kDeferred);  // cut short: never learns its number
    proc.Instant(1, 450, "last");
  }
  auto read = ReadRecordedRun(job_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RecordedRun& run = *read;
  std::vector<std::tuple<std::string, Phase, int64_t, int64_t, int64_t, bool>> steps;
  for (const RecordedRun::Event& e : run.events()) {
    if (e.event.kind != RecordedKind::kStep) continue;
    steps.emplace_back(std::string(run.Name(e.event.name)), e.event.phase, e.event.step, e.event.start_ns - T,
                       e.event.end_ns - T, e.event.unfinished);
    EXPECT_TRUE(e.args.empty());
  }
  EXPECT_EQ(steps, (std::vector<std::tuple<std::string, Phase, int64_t, int64_t, int64_t, bool>>{
                       {"Step:ModeKeys.TRAIN", Phase::kTrain, 0, 100, 150, false},
                       {"Step:ModeKeys.EVAL", Phase::kEval, 4, 110, 160, false},
                       {"Step:ModeKeys.TRAIN", Phase::kTrain, 1, 200, 300, false},
                       {"Step:ModeKeys.GLOBAL", Phase::kGlobal, -1, 400, 450, true}}));
  EXPECT_TRUE(run.problems().empty()) << run.problems()[0];
}

TEST_F(RecordedRunTest, EndsWithoutABeginAreCountedAsOneProblemPerStream) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-7-a", 7, false);
    proc.End(1, 100, "never-begun");
    proc.Begin(1, 110, "a");
    proc.End(1, 120, "b");  // no open span named b
    proc.End(1, 130, "a");
    proc.StepEnd(1, 140, Phase::kEval, 0);  // no open step at all
  }
  auto read = ReadRecordedRun(job_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RecordedRun& run = *read;
  EXPECT_EQ(ShapesOf(run, RecordedKind::kSpan), (std::vector<Shape>{{"a", 110, 130, false}}));
  EXPECT_EQ(run.problems(), std::vector<std::string>{"stream 'proc-7-a': 3 end records had no matching begin"});
}

// A worker that died while the job runs on: its lock is free, so its stream is read to the end.
TEST_F(RecordedRunTest, AProcessThatDiedMidSpanLeavesItUnfinishedAtItsLastRecord) {
  WriteManifest("running");
  TestStream proc(node_, "proc-7-a", 7, false);
  proc.StepBegin(1, 100, Phase::kTrain, 0);
  proc.Begin(1, 110, "forward");
  proc.Begin(1, 120, "layer");
  proc.End(1, 130, "layer");
  proc.Instant(2, 500, "heartbeat");  // another thread's record is the stream's last
  proc.Close();                       // died: its ring stays, nobody holds its lock
  auto read = ReadRecordedRun(job_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RecordedRun& run = *read;
  EXPECT_EQ(ShapesOf(run, RecordedKind::kSpan), (std::vector<Shape>{{"forward", 110, 500, true},
                                                                     {"layer", 120, 130, false}}));
  EXPECT_EQ(ShapesOf(run, RecordedKind::kStep), (std::vector<Shape>{{"Step:ModeKeys.TRAIN", 100, 500, true}}));
  ASSERT_EQ(run.streams().size(), 1u);
  EXPECT_TRUE(run.streams()[0].writer_gone);
}

TEST_F(RecordedRunTest, ARunStillBeingWrittenIsReadAsItIsNow) {
  WriteManifest("running");
  TestStream proc(node_, "proc-7-a", 7, false);  // alive: holds its ring's lock
  proc.Begin(1, 100, "forward");
  proc.Begin(1, 110, "layer");
  proc.End(1, 130, "layer");
  proc.IntArg(1, "late", 1);
  auto first_read = ReadRecordedRun(job_);
  ASSERT_TRUE(first_read.ok()) << first_read.status().message();
  const RecordedRun& first = *first_read;
  EXPECT_EQ(ShapesOf(first, RecordedKind::kSpan), (std::vector<Shape>{{"forward", 100, 130, true},
                                                                       {"layer", 110, 130, false}}));
  ASSERT_NE(Find(first, RecordedKind::kSpan, "layer"), nullptr);
  EXPECT_EQ(Find(first, RecordedKind::kSpan, "layer")->args.size(), 1u);
  EXPECT_FALSE(first.streams()[0].writer_gone);
  proc.End(1, 200, "forward");
  auto second_read = ReadRecordedRun(job_);
  ASSERT_TRUE(second_read.ok()) << second_read.status().message();
  const RecordedRun& second = *second_read;
  EXPECT_EQ(ShapesOf(second, RecordedKind::kSpan), (std::vector<Shape>{{"forward", 100, 200, false},
                                                                        {"layer", 110, 130, false}}));
}

TEST_F(RecordedRunTest, TicksBecomeUnixTimeThroughTheAnchorAndSamplesAreEvents) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-4242-a", 4242, false);
    proc.Instant(3, 100, "tick");
    TestStream system(node_, "system", 99, true);
    system.Sample(50, "cpu/total/util_pct", 42);
  }
  auto read = ReadRecordedRun(job_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RecordedRun& run = *read;
  ASSERT_EQ(run.nodes().size(), 1u);
  EXPECT_EQ(run.nodes()[0].name, "algo-1");
  EXPECT_TRUE(run.nodes()[0].has_manifest);
  ASSERT_EQ(run.streams().size(), 2u);
  ASSERT_EQ(run.events().size(), 2u);
  const RecordedRun::Event& sample = run.events()[0];
  EXPECT_EQ(sample.event.kind, RecordedKind::kSample);
  EXPECT_EQ(run.Name(sample.event.name), "cpu/total/util_pct");
  EXPECT_EQ(sample.event.value, 42);
  EXPECT_EQ(sample.event.start_ns, T + 50);
  EXPECT_TRUE(run.streams()[sample.stream].is_system);
  const RecordedRun::Event& tick = run.events()[1];
  EXPECT_EQ(tick.event.start_ns, T + 100);
  EXPECT_EQ(tick.event.tid, 3u);
  EXPECT_EQ(run.streams()[tick.stream].pid, 4242);
  EXPECT_EQ(run.streams()[tick.stream].node, 0u);
}

TEST(ReadRecordedRun, ExplainsAMissingOrEmptyDirectory) {
  auto missing = ReadRecordedRun("/nonexistent/stepscope-run");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("stepscope run"), std::string::npos) << missing.status().message();
  const std::string empty = ::testing::TempDir() + "/recorded-run-empty-" + std::to_string(getpid());
  ASSERT_TRUE(CreateDirectories(empty).ok());
  auto nothing = ReadRecordedRun(empty);
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("no stepscope run"), std::string::npos) << nothing.status().message();
}

}  // namespace
}  // namespace stepscope::analysis
