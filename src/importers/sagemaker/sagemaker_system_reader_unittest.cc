// Expected results of shared/FORMATS.md §1 on tests/fixtures/sagemaker (system metrics).
#include "importers/sagemaker/sagemaker_system_reader.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "importers/sagemaker/sagemaker_importer.h"

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

TEST(SageMakerSystemReaderTest, RecordFieldsAndNanosecondTime) {
  auto file = ReadSageMakerSystemFile(kFixtures + "/1591160699.algo-1.json");
  ASSERT_TRUE(file.ok());
  const SageMakerSystemRecord& first = file->records.front();
  EXPECT_EQ(first.type, "cpu");
  EXPECT_EQ(first.name, "cpu0");
  EXPECT_EQ(first.dimension, "CPUUtilization");
  EXPECT_EQ(first.node_id, "algo-1");
  EXPECT_DOUBLE_EQ(first.value, 4.76);
  // 1591160699.4570894 s: the double read is 1591160699.457089424..., kept to the ns so that
  // the nearest double to time_ns / 1e9 is the one the reference read (its bottleneck keys).
  EXPECT_EQ(first.time_ns, 1591160699457089424);
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

// The document-stream fast path must give exactly what one parse per line gives.
std::string Record(int value) {
  return "{\"Type\":\"cpu\",\"Name\":\"cpu" + std::to_string(value) +
         "\",\"Dimension\":\"CPUUtilization\",\"Value\":" + std::to_string(value) +
         ",\"NodeId\":\"algo-1\",\"Timestamp\":1.5}";
}

std::vector<std::string> Names(const SageMakerSystemFile& file) {
  std::vector<std::string> names;
  for (const auto& record : file.records) names.push_back(record.name);
  return names;
}

TEST(SageMakerSystemReaderTest, BlankAndCrlfLinesAreSkipped) {
  auto file = ParseSageMakerSystemText("\n" + Record(1) + "\r\n\n  \n" + Record(2) + "\n\n", "f.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(Names(*file), (std::vector<std::string>{"cpu1", "cpu2"}));
  EXPECT_FALSE(file->truncated_last_line);
}

TEST(SageMakerSystemReaderTest, TwoRecordsOnOneLineAreABadLine) {
  auto file = ParseSageMakerSystemText(Record(1) + "\n" + Record(2) + " " + Record(3) + "\n" + Record(4) + "\n", "f.json");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("f.json:2: bad system-metrics record (not valid JSON)"), std::string::npos)
      << file.status().message();
}

TEST(SageMakerSystemReaderTest, TwoRecordsOnTheLastLineAreACutLine) {
  auto file = ParseSageMakerSystemText(Record(1) + "\n" + Record(2) + Record(3) + "\n", "f.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(Names(*file), (std::vector<std::string>{"cpu1"}));
  EXPECT_TRUE(file->truncated_last_line);
}

TEST(SageMakerSystemReaderTest, ARecordOverTwoLinesIsABadLine) {
  std::string split = Record(2);
  split.insert(split.find(",\"Value\""), "\n");
  auto file = ParseSageMakerSystemText(Record(1) + "\n" + split + "\n" + Record(3) + "\n", "f.json");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("f.json:2: "), std::string::npos) << file.status().message();
}

TEST(SageMakerSystemReaderTest, CutRecordWithoutNewlineKeepsTheRest) {
  const std::string cut = Record(3).substr(0, 40);
  auto file = ParseSageMakerSystemText(Record(1) + "\n" + Record(2) + "\n" + cut, "f.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(Names(*file), (std::vector<std::string>{"cpu1", "cpu2"}));
  EXPECT_TRUE(file->truncated_last_line);
}

TEST(SageMakerSystemReaderTest, VisitorSeesRecordsInFileOrder) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += Record(i) + "\n";
  std::vector<double> values;
  bool truncated = true;
  ASSERT_TRUE(VisitSageMakerSystemText(
                  text, "f.json", [&](const SageMakerSystemRecordView& record) { values.push_back(record.value); },
                  &truncated)
                  .ok());
  EXPECT_FALSE(truncated);
  ASSERT_EQ(values.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(values[i], i);
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
