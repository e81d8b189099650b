// Expected results of shared/FORMATS.md §1 on shared/fixtures/sagemaker (system metrics).
#include "analysis/sagemaker_system_reader.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/sagemaker_importer.h"

namespace stepscope::analysis {
namespace {

const std::string kFixtures = std::string(STEPSCOPE_FIXTURES_DIR) + "/sagemaker";

std::vector<SageMakerSystemRecord> ReadAll(const std::vector<std::string>& paths) {
  std::vector<SageMakerSystemRecord> all;
  for (const std::string& path : paths) {
    auto file = ReadSageMakerSystemFile(path);
    EXPECT_TRUE(file.ok()) << file.status().message();
    if (file.ok()) all.insert(all.end(), file->records.begin(), file->records.end());
  }
  return all;
}

TEST(SageMakerSystemReaderTest, SingleFileCountsByRangeAndType) {
  auto file = ReadSageMakerSystemFile(kFixtures + "/1591160699.algo-1.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_FALSE(file->truncated_last_line);
  const auto& records = file->records;
  EXPECT_EQ(records.size(), 14u);
  EXPECT_EQ(SystemRecordsIn(records, 0, 1591170700.457).size(), 14u);
  EXPECT_EQ(SystemRecordsIn(records, 0, 1591170700.457, "cpu").size(), 4u);
  EXPECT_EQ(SystemRecordsIn(records, 0, 1591167699.9572).size(), 11u);
  auto late = SystemRecordsIn(records, 1591169699.4579, 2591167699.9572);
  ASSERT_EQ(late.size(), 2u);
  EXPECT_TRUE(std::all_of(late.begin(), late.end(), [](const auto& r) { return r.type == "gpu"; }));
  EXPECT_EQ(SystemRecordsIn(records, 0, 0, "gpu").size(), 0u);
}

TEST(SageMakerSystemReaderTest, RecordFieldsAndMicrosecondTime) {
  auto file = ReadSageMakerSystemFile(kFixtures + "/1591160699.algo-1.json");
  ASSERT_TRUE(file.ok());
  const SageMakerSystemRecord& first = file->records.front();
  EXPECT_EQ(first.type, "cpu");
  EXPECT_EQ(first.name, "cpu0");
  EXPECT_EQ(first.dimension, "CPUUtilization");
  EXPECT_EQ(first.node_id, "algo-1");
  EXPECT_DOUBLE_EQ(first.value, 4.76);
  // 1591160699.4570894 s -> rounded to whole µs.
  EXPECT_EQ(first.time_ns, 1591160699457089000);
}

TEST(SageMakerSystemReaderTest, TruncatedLastLineIsSkipped) {
  auto file = ReadSageMakerSystemFile(kFixtures + "/1591160699.algo-1.json.corrupt");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE(file->truncated_last_line);
  const auto& records = file->records;
  EXPECT_EQ(SystemRecordsIn(records, 0, 1591170700.457).size(), 13u);
  EXPECT_EQ(SystemRecordsIn(records, 0, 1591170700.457, "cpu").size(), 4u);
  EXPECT_EQ(SystemRecordsIn(records, 0, 1591167699.9572).size(), 11u);
  EXPECT_EQ(SystemRecordsIn(records, 1591169699.4579, 2591167699.9572).size(), 1u);
  EXPECT_EQ(SystemRecordsIn(records, 1591169699.4579, 2591167699.9572, "gpu").size(), 1u);
  EXPECT_EQ(SystemRecordsIn(records, 0, 0, "gpu").size(), 0u);
}

TEST(SageMakerSystemReaderTest, BadLineBeforeTheLastIsAnErrorNamingFileAndLine) {
  const std::string text =
      "{\"Type\":\"cpu\",\"Name\":\"cpu0\",\"Dimension\":\"CPUUtilization\",\"Value\":1,\"NodeId\":\"algo-1\",\"Timestamp\":1.5}\n"
      "{\"Type\":\"cpu\",\"Name\":\n"
      "{\"Type\":\"cpu\",\"Name\":\"cpu1\",\"Dimension\":\"CPUUtilization\",\"Value\":2,\"NodeId\":\"algo-1\",\"Timestamp\":1.5}\n";
  auto file = ParseSageMakerSystemText(text, "x/1591160699.algo-1.json");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(file.status().message().find("x/1591160699.algo-1.json:2: "), std::string::npos) << file.status().message();
}

TEST(SageMakerSystemReaderTest, MissingFieldIsNamed) {
  auto file = ParseSageMakerSystemText("{\"Type\":\"cpu\",\"Name\":\"cpu0\",\"Value\":1}\n{}\n", "f.json");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("f.json:1: bad system-metrics record (no numeric \"Timestamp\")"),
            std::string::npos)
      << file.status().message();
}

TEST(SageMakerSystemReaderTest, FileNamePattern) {
  EXPECT_TRUE(IsSageMakerSystemFileName("1591160699.algo-1.json"));
  EXPECT_TRUE(IsSageMakerSystemFileName("1591160699.algo-12.json"));
  EXPECT_FALSE(IsSageMakerSystemFileName("1591160699.algo-1.json.corrupt"));
  EXPECT_FALSE(IsSageMakerSystemFileName("159116069.algo-1.json"));
  EXPECT_FALSE(IsSageMakerSystemFileName("1591160699.host-1.json"));
}

TEST(SageMakerSystemReaderTest, TestTracesSystemFolder) {
  auto files = FindSageMakerFiles(kFixtures + "/test_traces");
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->system.size(), 3u);
  auto records = ReadAll(files->system);
  EXPECT_EQ(SystemRecordsIn(records, 1591100000, 1692300000).size(), 78u);
  EXPECT_EQ(SystemRecordsIn(records, 1591100000, 1692300000, "cpu").size(), 68u);
  EXPECT_EQ(SystemRecordsIn(records, 1591100000, 1591167699).size(), 10u);
  EXPECT_EQ(SystemRecordsIn(records, 1591748165, 1600000000).size(), 32u);
}

}  // namespace
}  // namespace stepscope::analysis
