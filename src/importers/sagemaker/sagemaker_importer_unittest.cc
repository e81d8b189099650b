// ImportSageMaker on tests/fixtures/sagemaker: what lands in the model.
#include "importers/sagemaker/sagemaker_importer.h"

#include <filesystem>
#include <fstream>

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
  EXPECT_EQ(cpu0->time_ns.front(), 1591160699457089424);
  EXPECT_DOUBLE_EQ(cpu0->value.front(), 4.76);
  ASSERT_EQ(model->events().size(), 4u);
  const FrameworkEvent& first = model->events().front();
  EXPECT_EQ(model->String(first.phase), "RotationPolicyTest_file_size");
  EXPECT_EQ(model->String(first.name), "event1");
  EXPECT_EQ(model->nodes()[first.node].name, "4487");
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(first.start_ns, 1589930988663519000);
  ASSERT_FALSE(model->problems().empty());
  EXPECT_NE(model->problems().back().sentence.find("training_job_end.ts"), std::string::npos);
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
  for (const Problem& problem : model->problems()) {
    if (problem.sentence.find("skipped 2 E event(s) with no open B") != std::string::npos) ++orphan_notes;
  }
  EXPECT_EQ(orphan_notes, 1);
}

// A rank's timeline ("0-algo-1") belongs to the node whose system metrics it shares, and keeps
// its writer for the rules that key by it; the file names give the reference's window grid.
TEST(SageMakerImporterTest, RankTimelinesJoinTheirNodeAndFileNamesGiveTheGrid) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() / "sagemaker_importer_rank_test";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "system/incremental/2023111422");
  std::filesystem::create_directories(root / "framework/pevents/2023111422");
  auto write = [](const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; };
  const std::string record = R"({"Type":"cpu","Name":"cpu0","Dimension":"CPUUtilization","Value":5,"NodeId":"algo-1","Timestamp":)";
  write(root / "system/incremental/2023111422/1700000040.algo-1.json", record + "1700000057.25}\n");
  write(root / "system/incremental/2023111422/1700000100.algo-1.json", record + "1700000101.5}\n");
  write(root / "framework/pevents/2023111422/1700000061000000_0-algo-1_pythontimeline.json",
        R"([{"name":"process_name","ph":"M","pid":0,"args":{"start_time_since_epoch_in_micros":1700000040000000}},
            {"name":"process_name","ph":"M","pid":1,"args":{"name":"Step:ModeKeys.TRAIN"}},
            {"name":"Step:ModeKeys.TRAIN","ph":"X","ts":20000000,"dur":1000000,"pid":1,"tid":1,
             "args":{"pid":5000,"step_num":"0"}},
            {"name":"process_name","ph":"M","pid":2,"args":{"name":"DataLoaderIterInitialize"}},
            {"name":"DataLoaderIterInitialize","ph":"X","ts":19000000,"dur":10,"pid":2,"tid":1,
             "args":{"pin_memory":true}}])");
  auto model = ImportSageMaker(root.string());
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->nodes().size(), 1u);
  EXPECT_EQ(model->nodes()[0].name, "algo-1");
  ASSERT_EQ(model->events().size(), 2u);
  const FrameworkEvent& init = model->events()[0];
  const FrameworkEvent& step = model->events()[1];
  EXPECT_EQ(step.node, 0u);
  EXPECT_EQ(model->WriterOf(step), "algo-1-0");
  const EventArg* pin = model->FindArg(init, "pin_memory");
  ASSERT_NE(pin, nullptr);
  EXPECT_EQ(pin->type, EventArg::Type::kBool);
  EXPECT_EQ(pin->int_value, 1);
  ASSERT_TRUE(model->file_grid().known);
  EXPECT_EQ(model->file_grid().origin_ns, 1700000040LL * 1'000'000'000);  // the first file's minute
  EXPECT_EQ(model->file_grid().stop_ns, 1700000061LL * 1'000'000'000);    // min(100 s file, 61 s file)
  std::filesystem::remove_all(root);
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
