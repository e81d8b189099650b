#include "export/export_range.h"

#include <gtest/gtest.h>

#include "export/export_test_model.h"

namespace stepscope::exporting {
namespace {

using testing::kT0;

// Three TRAIN steps (0, 1, 2) of 1 s each from kT0, and one EVAL step numbered 1 after them.
analysis::Model StepsModel(bool with_train = true) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts node;
  node.name = "n1";
  builder.AddNode(node);
  auto step = [&](int64_t number, int64_t start_s, const char* phase) {
    analysis::FrameworkEvent event;
    event.start_ns = kT0 + start_s * 1'000'000'000;
    event.end_ns = event.start_ns + 1'000'000'000;
    event.name = builder.Intern(phase);
    event.phase = builder.Intern(phase);
    event.step = number;
    builder.AddEvent(event);
  };
  const char* train = with_train ? "Step:ModeKeys.TRAIN" : "Step:ModeKeys.GLOBAL";
  for (int64_t i = 0; i < 3; ++i) step(i, i, train);
  step(1, 5, "Step:ModeKeys.EVAL");
  return std::move(builder).Finish();
}

TEST(ExportRangeTest, NothingAskedIsTheWholeRun) {
  auto range = ResolveExportRange(StepsModel(), {});
  ASSERT_TRUE(range.ok());
  EXPECT_TRUE(range->whole);
  EXPECT_TRUE(range->Contains(INT64_MIN + 1));
  EXPECT_EQ(range->description, "the whole run");
}

TEST(ExportRangeTest, StepsSpanFromTheFirstStartToTheLastEndOfTrainStepsOnly) {
  auto range = ResolveExportRange(StepsModel(), {.steps = "1:2"});
  ASSERT_TRUE(range.ok()) << range.status().message();
  EXPECT_FALSE(range->whole);
  EXPECT_EQ(range->start_ns, kT0 + 1'000'000'000);
  EXPECT_EQ(range->end_ns, kT0 + 3'000'000'000);  // the EVAL step numbered 1 is not counted
  EXPECT_EQ(range->description, "TRAIN steps 1 to 2");
}

TEST(ExportRangeTest, StepsOfAnyPhaseWhenTheRunHasNoTrainStep) {
  auto range = ResolveExportRange(StepsModel(/*with_train=*/false), {.steps = "1:1"});
  ASSERT_TRUE(range.ok()) << range.status().message();
  EXPECT_EQ(range->start_ns, kT0 + 1'000'000'000);
  EXPECT_EQ(range->end_ns, kT0 + 6'000'000'000);  // GLOBAL step 1 and EVAL step 1
}

TEST(ExportRangeTest, StepsOutsideTheRunNameTheRunsNumbers) {
  auto range = ResolveExportRange(StepsModel(), {.steps = "7:9"});
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().message(), "--steps 7:9: no TRAIN steps numbered 7 to 9; the run's TRAIN steps are numbered 0 to 2");
}

TEST(ExportRangeTest, MalformedStepsSayTheForm) {
  for (const char* text : {"5", "2:1", "a:b", "-1:3", "1:", ":4", "1:2:3"}) {
    auto range = ResolveExportRange(StepsModel(), {.steps = text});
    ASSERT_FALSE(range.ok()) << text;
    EXPECT_NE(range.status().message().find("A:B"), std::string::npos) << range.status().message();
  }
}

TEST(ExportRangeTest, FromAndToAreDurationsSinceTheRunsStartOrUtcTimes) {
  auto range = ResolveExportRange(StepsModel(), {.from = "1500ms", .to = "2s"});
  ASSERT_TRUE(range.ok()) << range.status().message();
  EXPECT_EQ(range->start_ns, kT0 + 1'500'000'000);
  EXPECT_EQ(range->end_ns, kT0 + 2'000'000'000);
  EXPECT_EQ(range->description, "from 1500ms to 2s");

  auto open_end = ResolveExportRange(StepsModel(), {.from = "2s"});
  ASSERT_TRUE(open_end.ok());
  EXPECT_EQ(open_end->end_ns, INT64_MAX);
  EXPECT_EQ(open_end->description, "from 2s to the end");

  // kT0 is 2023-11-14T22:13:20Z.
  auto absolute = ResolveExportRange(StepsModel(), {.from = "2023-11-14T22:13:21.5Z"});
  ASSERT_TRUE(absolute.ok()) << absolute.status().message();
  EXPECT_EQ(absolute->start_ns, kT0 + 1'500'000'000);
}

TEST(ExportRangeTest, BadTimesAndEmptyRangesAreOneSentence) {
  auto reversed = ResolveExportRange(StepsModel(), {.from = "3s", .to = "1s"});
  ASSERT_FALSE(reversed.ok());
  EXPECT_EQ(reversed.status().message(), "--from 3s is after --to 1s; swap them");

  auto garbage = ResolveExportRange(StepsModel(), {.from = "soon"});
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("--from 'soon' is not a time since the run's start"), std::string::npos)
      << garbage.status().message();

  auto past = ResolveExportRange(StepsModel(), {.from = "1h"});
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().message(), "--from/--to select none of the run: the run's data lies 0.000s to 6.000s from the job's start");

  auto both = ResolveExportRange(StepsModel(), {.from = "1s", .steps = "0:1"});
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message(), "give either --steps or --from/--to, not both");
}

TEST(ParseUtcTimeTest, ReadsSecondsAndFractionsAndRefusesTheRest) {
  EXPECT_EQ(*ParseUtcTimeNs("1970-01-01T00:00:01Z"), 1'000'000'000);
  EXPECT_EQ(*ParseUtcTimeNs("1970-01-01T00:00:00.000000007Z"), 7);
  EXPECT_EQ(*ParseUtcTimeNs("1970-01-01T00:00:00.1234567891Z"), 123'456'789);  // past ns: dropped
  for (const char* text : {"1970-01-01T00:00:00", "1970-01-01 00:00:00Z", "1970-13-01T00:00:00Z",
                           "1970-01-01T00:00:00.Z", "1970-01-01T00:00:00+01:00", "yesterday"}) {
    EXPECT_FALSE(ParseUtcTimeNs(text).ok()) << text;
  }
}

}  // namespace
}  // namespace stepscope::exporting
