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

// One field as AppendCsvField writes it.
std::string field(std::string_view text) {
  std::string line;
  AppendCsvField(text, line);
  return line;
}

TEST(CsvFieldTest, QuotesOnlyWhatRfc4180Requires) {
  EXPECT_EQ(field("plain"), "plain");
  EXPECT_EQ(field(""), "");
  EXPECT_EQ(field("a,b"), "\"a,b\"");
  EXPECT_EQ(field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(field("cr\r"), "\"cr\r\"");
}

TEST(CsvFieldTest, FormulaLikeTextStartsWithAQuoteButNumbersStayNumbers) {
  // OWASP "CSV injection": what a spreadsheet would evaluate.
  EXPECT_EQ(field("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(field("=1+2"), "'=1+2");
  EXPECT_EQ(field("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
  EXPECT_EQ(field("-2+3"), "'-2+3");
  EXPECT_EQ(field("@SUM(A1:A2)"), "'@SUM(A1:A2)");
  EXPECT_EQ(field("\t=1"), "'\t=1");
  EXPECT_EQ(field("\r=1"), "\"'\r=1\"");
  EXPECT_EQ(field("-"), "'-");
  EXPECT_EQ(field("-inf"), "'-inf");
  EXPECT_EQ(field("=a,b"), "\"'=a,b\"");
  // Plain numbers are data, not formulas.
  EXPECT_EQ(field("-12"), "-12");
  EXPECT_EQ(field("+3.5e-2"), "+3.5e-2");
  EXPECT_EQ(field("-.5"), "-.5");
  EXPECT_EQ(field("-1E+09"), "-1E+09");
  // Only the first character matters; text that merely contains one is left alone.
  EXPECT_EQ(field("a=b"), "a=b");
  EXPECT_EQ(field("aten::add_"), "aten::add_");
}

TEST(CsvFieldTest, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(field("bad\xFF\xFEname"), "bad\xEF\xBF\xBD\xEF\xBF\xBDname");
  EXPECT_EQ(field("cut\xE2\x82"), "cut\xEF\xBF\xBD");
  EXPECT_EQ(field("caf\xC3\xA9"), "caf\xC3\xA9");
  // Repaired first, then quoted and neutralised like any other text.
  EXPECT_EQ(field("=\xC0,x"), "\"'=\xEF\xBF\xBD,x\"");
}

TEST(CsvFieldTest, PlainNumbersAreSignDigitsPointAndExponentOnly) {
  for (const char* yes : {"0", "-0", "+1", "12.", ".5", "1e5", "1.5E-3", "-7e+2"}) EXPECT_TRUE(IsPlainNumber(yes)) << yes;
  for (const char* no : {"", "-", "+", ".", "e5", "1e", "1e+", "--1", "1-2", "0x10", "-inf", "nan", " 1", "1 "}) {
    EXPECT_FALSE(IsPlainNumber(no)) << no;
  }
}

TEST(CsvExportTest, HostileNamesAreNeutralisedInTheWrittenTables) {
  const std::string dir = ::testing::TempDir() + "/csv-hostile-" + std::to_string(::getpid()) + "/csv";
  std::filesystem::remove_all(dir);
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts node;
  node.name = "=cmd|' /C calc'!A0";
  builder.AddNode(node);
  analysis::FrameworkEvent event;
  event.start_ns = testing::kT0;
  event.end_ns = testing::kT0 + 10;
  event.name = builder.Intern("@evil\xFF");
  event.phase = builder.Intern("-1");
  builder.AddEvent(event);
  auto counts = ExportCsv(std::move(builder).Finish(), ExportRunFacts{}, dir);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  const std::string nodes = ReadFile(dir + "/nodes.csv");
  EXPECT_NE(nodes.find("\r\n0,'=cmd|' /C calc'!A0,"), std::string::npos) << nodes;
  const std::string strings = ReadFile(dir + "/strings.csv");
  EXPECT_NE(strings.find(",'@evil\xEF\xBF\xBD\r\n"), std::string::npos) << strings;
  EXPECT_NE(strings.find(",-1\r\n"), std::string::npos) << strings;
  EXPECT_EQ(strings.find('\xFF'), std::string::npos) << strings;
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
