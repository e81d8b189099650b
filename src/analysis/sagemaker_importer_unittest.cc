// ImportSageMaker on tests/fixtures/sagemaker: what lands in the model.
#include "analysis/sagemaker_importer.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

const std::string kFixtures = std::string(STEPSCOPE_FIXTURES_DIR) + "/sagemaker";

TEST(SageMakerImporterTest, SystemSamplesBecomeKeyedSeries) {
  SageMakerImportStats stats;
  auto model = ImportSageMaker(kFixtures + "/test_traces", &stats);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->source(), ModelSource::kSageMaker);
  EXPECT_EQ(stats.system_files, 3);
  EXPECT_EQ(stats.system_records, 78);
  EXPECT_EQ(stats.pevents_files, 4);
  EXPECT_EQ(stats.events, 4);
  EXPECT_FALSE(stats.job_end_marker);
  size_t samples = 0;
  const SystemSeries* cpu0 = nullptr;
  for (const SystemSeries& series : model->series()) {
    samples += series.time_ns.size();
    if (model->String(series.type) == "cpu" && model->String(series.name) == "cpu0" &&
        model->String(series.dimension) == "CPUUtilization") {
      cpu0 = &series;
    }
  }
  EXPECT_EQ(samples, 78u);
  ASSERT_NE(cpu0, nullptr);
  EXPECT_EQ(model->nodes()[cpu0->node].name, "algo-1");
  ASSERT_FALSE(cpu0->time_ns.empty());
  EXPECT_EQ(cpu0->time_ns.front(), 1591160699457089000);
  EXPECT_DOUBLE_EQ(cpu0->value.front(), 4.76);
  ASSERT_EQ(model->events().size(), 4u);
  const FrameworkEvent& first = model->events().front();
  EXPECT_EQ(model->String(first.phase), "RotationPolicyTest_file_size");
  EXPECT_EQ(model->String(first.name), "event1");
  EXPECT_EQ(model->nodes()[first.node].name, "4487");
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(first.start_ns, 1589930988663519000);
  ASSERT_FALSE(model->problems().empty());
  EXPECT_NE(model->problems().back().find("training_job_end.ts"), std::string::npos);
}

TEST(SageMakerImporterTest, TfTraceEventsGetTheMetadataNode) {
  SageMakerImportStats stats;
  auto model = ImportSageMaker(kFixtures + "/tfprofiler_timeline_traces", &stats);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(stats.tf_trace_files, 1);
  ASSERT_EQ(model->events().size(), 798u);
  EXPECT_EQ(model->events().front().start_ns, (1596659864545103 + 21307) * 1000);
  EXPECT_EQ(model->nodes()[model->events().front().node].name, "80807-8c859046be41.ant.amazon.com");
  EXPECT_EQ(model->String(model->events().front().phase), "/host:CPU");
}

TEST(SageMakerImporterTest, HorovodSkipsAreListedAsProblems) {
  auto model = ImportSageMaker(kFixtures + "/horovod_timeline_traces");
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->events().size(), 19u);
  int orphan_notes = 0;
  for (const std::string& problem : model->problems()) {
    if (problem.find("skipped 2 E event(s) with no open B") != std::string::npos) ++orphan_notes;
  }
  EXPECT_EQ(orphan_notes, 1);
}

TEST(SageMakerImporterTest, NotAProfilerOutputDirectory) {
  auto model = ImportSageMaker(kFixtures + "/horovod_timeline_traces/framework");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("holds neither system/ nor framework/"), std::string::npos);
  auto missing = ImportSageMaker(kFixtures + "/no-such-dir");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("is not a directory"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::analysis
