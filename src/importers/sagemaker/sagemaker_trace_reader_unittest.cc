// Expected results of shared/FORMATS.md §1 on tests/fixtures/sagemaker (framework traces),
// plus the pairing and error rules on small inline traces.
#include "importers/sagemaker/sagemaker_trace_reader.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "importers/sagemaker/sagemaker_importer.h"

namespace stepscope::analysis {
namespace {

const std::string kFixtures = std::string(STEPSCOPE_FIXTURES_DIR) + "/sagemaker";
constexpr int64_t kUsPerS = 1'000'000;

std::vector<SageMakerTraceEvent> AllPevents(const std::string& root) {
  auto events = ReadPeventsEvents(root, "", INT64_MIN / 2, INT64_MAX / 2);
  EXPECT_TRUE(events.ok()) << events.status().message();
  return events.ok() ? *events : std::vector<SageMakerTraceEvent>{};
}

TEST(SageMakerTraceReaderTest, TestTracesFrameworkFolder) {
  auto events = ReadPeventsEvents(kFixtures + "/test_traces", "", 1589930980 * kUsPerS, 1589930995 * kUsPerS);
  ASSERT_TRUE(events.ok()) << events.status().message();
  EXPECT_EQ(events->size(), 4u);
  EXPECT_EQ((*events)[0].phase, "RotationPolicyTest_file_size");
  EXPECT_EQ((*events)[0].step, 1);
  EXPECT_EQ((*events)[0].node_id, "4487");
  // 1589930987655184 + 1008335 µs.
  EXPECT_EQ((*events)[0].start_ns, 1589930988663519000);
  EXPECT_EQ((*events)[0].end_ns, 1589930989663519000);
}

TEST(SageMakerTraceReaderTest, ModelTimelineTraces) {
  auto events = ReadPeventsEvents(kFixtures + "/model_timeline_traces", "model_timeline", 1590461127873222,
                                  1590461139949971);
  ASSERT_TRUE(events.ok()) << events.status().message();
  EXPECT_EQ(events->size(), 54u);
  ASSERT_FALSE(events->empty());
  EXPECT_EQ(events->front().node_id, "0001");
}

TEST(SageMakerTraceReaderTest, HorovodTimelineTraces) {
  const std::string root = kFixtures + "/horovod_timeline_traces";
  auto in_range = ReadPeventsEvents(root, "horovod_timeline", 1593673051472800, 1593673051473100);
  ASSERT_TRUE(in_range.ok()) << in_range.status().message();
  EXPECT_EQ(in_range->size(), 15u);
  auto all = AllPevents(root);
  EXPECT_EQ(all.size(), 19u);
  auto late = ReadPeventsEvents(root, "horovod_timeline", 1593673051473000, 1593673051473228);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->size(), 12u);
  int64_t first_start = INT64_MAX, last_end = INT64_MIN;
  for (const auto& event : all) {
    first_start = std::min(first_start, event.start_us());
    last_end = std::max(last_end, event.end_us());
  }
  EXPECT_EQ(first_start, 1592860696000713);
  EXPECT_EQ(last_end, 1593673051473228);
}

TEST(SageMakerTraceReaderTest, HorovodOrphanEndEventsAreCounted) {
  auto files = FindSageMakerFiles(kFixtures + "/horovod_timeline_traces");
  ASSERT_TRUE(files.ok());
  int64_t orphans = 0, unclosed = 0;
  for (const std::string& path : files->pevents) {
    auto file = ReadPeventsFile(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    orphans += file->orphan_end_events;
    unclosed += file->unclosed_begin_events;
  }
  EXPECT_EQ(orphans, 2);
  EXPECT_EQ(unclosed, 4);
}

TEST(SageMakerTraceReaderTest, StandaloneModelTimelineFile) {
  auto file = ReadPeventsFile(kFixtures + "/1589314018481947000_1234-testhost_model_timeline.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->events.size(), 49u);
  EXPECT_EQ(file->node_id, "1234-testhost");
  EXPECT_EQ(TraceEventsOverlapping(file->events, 0, 1589314018470000).size(), 39u);
  int64_t first_start = INT64_MAX, last_end = INT64_MIN;
  for (const auto& event : file->events) {
    first_start = std::min(first_start, event.start_us());
    last_end = std::max(last_end, event.end_us());
  }
  EXPECT_EQ(first_start, 1589314018458743);
  EXPECT_EQ(last_end, 1589314018481947);
}

TEST(SageMakerTraceReaderTest, TfProfilerTraceWithMetadata) {
  auto files = FindSageMakerFiles(kFixtures + "/tfprofiler_timeline_traces");
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->tf_traces.size(), 1u);
  auto file = ReadTfProfilerTrace(files->tf_traces[0]);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->events.size(), 798u);
  const int64_t metadata_start_us = 1596659864545103;
  int64_t first_start = INT64_MAX, last_end = INT64_MIN;
  for (const auto& event : file->events) {
    first_start = std::min(first_start, event.start_us());
    last_end = std::max(last_end, event.end_us());
  }
  EXPECT_EQ(first_start - metadata_start_us, 21307);
  EXPECT_EQ(last_end - metadata_start_us, 293205);
  EXPECT_EQ(file->processes.size(), 2u);
  EXPECT_EQ(file->node_id, "80807-8c859046be41.ant.amazon.com");
  EXPECT_EQ(file->events[0].phase, "/host:CPU");
}

TEST(SageMakerTraceReaderTest, TfMetadataFileName) {
  auto metadata = ParseTfMetadataFileName("80807-8c859046be41.ant.amazon.com_1596659864545103_1596659864854168.metadata");
  ASSERT_TRUE(metadata.has_value());
  EXPECT_EQ(metadata->node_id, "80807-8c859046be41.ant.amazon.com");
  EXPECT_EQ(metadata->start_us, 1596659864545103);
  EXPECT_EQ(metadata->end_us, 1596659864854168);
  EXPECT_FALSE(ParseTfMetadataFileName("node_12_x.metadata").has_value());
  EXPECT_FALSE(ParseTfMetadataFileName("node_1_2.json").has_value());
}

TEST(SageMakerTraceReaderTest, TfProfilerTraceWithoutMetadata) {
  auto files = FindSageMakerFiles(kFixtures + "/tfprofiler_local_missing_metadata");
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->tf_traces.size(), 1u);
  auto file = ReadTfProfilerTrace(files->tf_traces[0]);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->node_id, "");
  EXPECT_EQ(file->base_us, 0);
  EXPECT_EQ(file->events.size(), 256u);
}

TEST(SageMakerTraceReaderTest, MergedTraceHoldsThePerSuffixEventsSortedByStart) {
  const std::string root = kFixtures + "/merge_traces";
  const int64_t start_us = 1594662618874598, end_us = 1594662623418701;
  auto merged = MergeSageMakerTraces(root, start_us, end_us);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  auto python = ReadPeventsEvents(root, "pythontimeline", start_us, end_us);
  auto model = ReadPeventsEvents(root, "model_timeline", start_us, end_us);
  ASSERT_TRUE(python.ok() && model.ok());
  ASSERT_EQ(merged->size(), python->size() + model->size());
  EXPECT_EQ(merged->size(), 231u);
  for (size_t i = 1; i < merged->size(); ++i) EXPECT_LE((*merged)[i - 1].start_ns, (*merged)[i].start_ns);
  // Every per-suffix event is in the merge (matched by start, end and name).
  std::multiset<std::tuple<int64_t, int64_t, std::string>> expected, got;
  for (const auto* part : {&*python, &*model}) {
    for (const auto& e : *part) expected.emplace(e.start_ns, e.end_ns, e.name);
  }
  for (const auto& e : *merged) got.emplace(e.start_ns, e.end_ns, e.name);
  EXPECT_EQ(got, expected);
}

TEST(SageMakerTraceReaderTest, NodeIdRewrite) {
  EXPECT_EQ(RewriteSageMakerNodeId("151-algo-1"), "algo-1-151");
  EXPECT_EQ(RewriteSageMakerNodeId("x-y-algo-12"), "algo-12-x-y");
  EXPECT_EQ(RewriteSageMakerNodeId("1234-testhost"), "1234-testhost");
  auto name = ParsePeventsFileName("1594662624718694_905-algo-2_pythontimeline.json");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->end_us, 1594662624718694);
  EXPECT_EQ(name->node_id, "algo-2-905");
  EXPECT_EQ(name->suffix, "pythontimeline");
  EXPECT_FALSE(ParsePeventsFileName("1594662624718694_905_other.json").has_value());
}

TEST(SageMakerTraceReaderTest, PairingOverridesAndIgnoredPhases) {
  const std::string text = R"([
    {"name":"process_name","ph":"M","pid":0,"args":{"start_time_since_epoch_in_micros":1000}},
    {"name":"process_name","ph":"M","pid":7,"args":{"name":"Step:ModeKeys.TRAIN"}},
    {"name":"outer","ph":"B","pid":7,"tid":3,"ts":10,"args":{"a":1}},
    {"name":"inner","ph":"B","pid":7,"tid":3,"ts":20},
    {"name":"","ph":"E","pid":7,"ts":25},
    {"name":"","ph":"E","pid":7,"ts":40,"args":{"b":"x"}},
    {"name":"","ph":"E","pid":7,"ts":50},
    {"name":"back","ph":"B","pid":8,"ts":30},
    {"name":"","ph":"E","pid":8,"ts":29},
    {"name":"Step:ModeKeys.TRAIN","ph":"X","pid":7,"ts":5,"dur":2.5,"args":{"pid":4242,"thread_id":99,"step_num":"12"}},
    {"name":"neg","ph":"X","pid":7,"ts":5,"dur":-1},
    {"name":"mark","ph":"i","pid":7,"ts":5},
    {"name":"ctr","ph":"C","pid":7,"ts":5,"args":{"v":1}}
  ])";
  auto file = ParsePeventsText(text, "dir/1050_151-algo-1_pythontimeline.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->node_id, "algo-1-151");
  EXPECT_EQ(file->base_us, 1000);
  ASSERT_EQ(file->events.size(), 3u);
  EXPECT_EQ(file->orphan_end_events, 1);
  EXPECT_EQ(file->negative_durations, 2);  // the E before its B, the X with dur < 0
  const auto& inner = file->events[0];
  EXPECT_EQ(inner.name, "inner");
  EXPECT_EQ(inner.start_ns, 1020000);
  EXPECT_EQ(inner.end_ns, 1025000);
  EXPECT_EQ(inner.tid, 3);
  const auto& outer = file->events[1];
  EXPECT_EQ(outer.name, "outer");
  EXPECT_EQ(outer.phase, "Step:ModeKeys.TRAIN");
  EXPECT_EQ(outer.end_ns, 1040000);
  ASSERT_EQ(outer.args.size(), 2u);
  EXPECT_EQ(outer.args[0].key, "a");
  EXPECT_EQ(outer.args[1].string_value, "x");
  const auto& step = file->events[2];
  EXPECT_EQ(step.pid, 4242);
  EXPECT_EQ(step.tid, 99);
  EXPECT_EQ(step.step, 12);
  EXPECT_EQ(step.start_ns, 1005000);
  EXPECT_EQ(step.end_ns, 1007500);
}

TEST(SageMakerTraceReaderTest, BadTracesAreErrorsNamingTheFileAndPlace) {
  auto truncated = ParsePeventsText("[{\"ph\":\"X\",\"ts\":1,", "t/1_n_pythontimeline.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("t/1_n_pythontimeline.json: invalid JSON at byte 18"), std::string::npos)
      << truncated.status().message();
  auto no_ts = ParsePeventsText("[{\"ph\":\"M\"},{\"ph\":\"X\",\"name\":\"a\"}]", "t/1_n_pythontimeline.json");
  ASSERT_FALSE(no_ts.ok());
  EXPECT_NE(no_ts.status().message().find("t/1_n_pythontimeline.json: trace event #1 (ph X) has no numeric \"ts\""),
            std::string::npos)
      << no_ts.status().message();
  auto object = ParsePeventsText("{}", "t/1_n_pythontimeline.json");
  EXPECT_FALSE(object.ok());
  auto tf = ParseTfProfilerTrace(std::string("\x1f\x8b\x08\x00garbage", 12), std::nullopt, "h.trace.json.gz");
  ASSERT_FALSE(tf.ok());
  EXPECT_NE(tf.status().message().find("h.trace.json.gz: "), std::string::npos);
}

}  // namespace
}  // namespace stepscope::analysis
