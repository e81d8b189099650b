#include "export/csv_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "export/export_test_model.h"

namespace stepscope::exporting {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(CsvFieldTest, QuotesOnlyWhatRfc4180Requires) {
  auto field = [](std::string_view text) {
    std::string line;
    AppendCsvField(text, line);
    return line;
  };
  EXPECT_EQ(field("plain"), "plain");
  EXPECT_EQ(field(""), "");
  EXPECT_EQ(field("a,b"), "\"a,b\"");
  EXPECT_EQ(field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(field("cr\r"), "\"cr\r\"");
}

TEST(CsvExportTest, OneFilePerTableWithHeaderAndExactRows) {
  const std::string dir = ::testing::TempDir() + "/csv-export-" + std::to_string(::getpid()) + "/csv";
  std::filesystem::remove_all(dir);
  ExportRunFacts facts;
  facts.job = "job,1";
  facts.findings_origin = "none";
  auto counts = ExportCsv(testing::MakeExportTestModel(), facts, dir);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts->samples, 4u);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().extension(), ".csv") << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 12u);
  EXPECT_EQ(ReadFile(dir + "/samples.csv"),
            "metric_id,node_id,time_ns,value\r\n"
            "0,0,1700000000000001000,50.5\r\n"
            "0,0,1700000000000002000,75.25\r\n"
            "0,0,1700000000000003000,\r\n"
            "1,1,1700000000000001500,12\r\n");
  EXPECT_EQ(ReadFile(dir + "/steps.csv"),
            "step_id,span_id,node_id,phase,step,start_ns,end_ns,duration_ns\r\n"
            "0,0,0,TRAIN,0,1700000000000001000,1700000000000009000,8000\r\n");
  const std::string runs = ReadFile(dir + "/runs.csv");
  EXPECT_NE(runs.find(",\"job,1\",stepscope,"), std::string::npos) << runs;
  const std::string spans = ReadFile(dir + "/spans.csv");
  EXPECT_NE(spans.find(",\"{\"\"correlation\"\":77,\"\"note\"\":\"\"say \\\"\"hi\\\"\", ok\"\"}\"\r\n"), std::string::npos)
      << spans;
  EXPECT_EQ(ReadFile(dir + "/findings.csv"),
            "finding_id,rule,severity,title,recommendation,next_step,estimated_saving,saving_basis,node,start_ns,"
            "end_ns,evidence\r\n");
}

TEST(CsvExportTest, UnwritableDirectoryIsAnError) {
  auto counts = ExportCsv(testing::MakeExportTestModel(), ExportRunFacts{}, "/proc/stepscope-no/csv");
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("/proc/stepscope-no"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::exporting
