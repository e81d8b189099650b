#include "export/sqlite_export.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "export/export_test_model.h"
#include "export/output_file.h"

namespace stepscope::exporting {
namespace {

std::string TempDir(const char* name) {
  std::string dir = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

ExportRunFacts FactsWithFindings() {
  ExportRunFacts facts;
  facts.run_path = "runs/job-1";
  facts.job = "job-1";
  facts.findings_origin = "rules.json";
  facts.rules = nlohmann::json::parse(R"({"format_version":1,"rules":[
    {"Rule":"StepOutlier","RuleTriggered":2,"Violations":3,"Datapoints":40,"RuleParameters":"threshold:3",
     "description":"d","recommendation":"r","last_trigger_ns":123,"reporting":false,"Details":{"a":1},
     "findings":[{"id":"StepOutlier/n1/TRAIN","rule":"StepOutlier","severity":"warning","title":"slow steps",
                  "recommendation":"look","next_step":"open the trace","estimated_saving":0.25,"saving_basis":"b",
                  "evidence":[{"node":"n1","start_ns":1000,"end_ns":9000,"steps":[0]}]}]},
    {"Rule":"CPUBottleneck","RuleTriggered":0,"Violations":0,"Datapoints":41,"RuleParameters":"","findings":[]}]})",
                                      nullptr, false);
  return facts;
}

class Database {
 public:
  explicit Database(const std::string& path) { EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK); }
  ~Database() { sqlite3_close(db_); }
  // The first column of the first row as text ("NULL" for NULL), "ERROR: ..." on failure.
  std::string Query(const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      return std::string("ERROR: ") + sqlite3_errmsg(db_);
    }
    std::string out = "NO ROW";
    if (sqlite3_step(statement) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(statement, 0);
      out = text == nullptr ? "NULL" : reinterpret_cast<const char*>(text);
    }
    sqlite3_finalize(statement);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST(SqliteExportTest, WritesEveryTableWithExactRows) {
  const std::string path = TempDir("sqlite-export") + "/out/job-1.sqlite";
  auto counts = ExportSqlite(testing::MakeExportTestModel(), FactsWithFindings(), path);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts->spans, 7u);
  EXPECT_EQ(counts->steps, 1u);
  EXPECT_EQ(counts->samples, 4u);
  EXPECT_EQ(counts->findings, 1u);
  EXPECT_FALSE(std::filesystem::exists(TempPathFor(path)));

  Database db(path);
  EXPECT_EQ(db.Query("SELECT job || '|' || source || '|' || first_ns || '|' || findings_origin FROM runs"),
            "job-1|stepscope|1700000000000001000|rules.json");
  EXPECT_EQ(db.Query("SELECT group_concat(name, ',') FROM nodes"), "n1,n2");
  EXPECT_EQ(db.Query("SELECT cpu_cores FROM nodes WHERE name = 'n1'"), "4");
  EXPECT_EQ(db.Query("SELECT count(*) FROM processes"), "2");
  EXPECT_EQ(db.Query("SELECT name FROM threads WHERE device = 0"), "stream 7");
  EXPECT_EQ(db.Query("SELECT count(*) FROM spans WHERE kind = 'span'"), "6");
  EXPECT_EQ(db.Query("SELECT count(*) FROM spans WHERE kind = 'instant'"), "1");
  EXPECT_EQ(db.Query("SELECT (start_ns - 1700000000000000000) || ',' || duration_ns || ',' || phase FROM spans_named "
                     "WHERE name = 'forward'"),
            "2000,3000,Forward");
  EXPECT_EQ(db.Query("SELECT args FROM spans_named WHERE name = 'cudaLaunchKernel'"),
            R"({"correlation":77,"note":"say \"hi\", ok"})");
  EXPECT_EQ(db.Query("SELECT args FROM spans_named WHERE name = 'forward'"), "NULL");
  EXPECT_EQ(db.Query("SELECT count(*) FROM spans WHERE step IS NOT NULL"), "1");
  EXPECT_EQ(db.Query("SELECT phase || ' ' || step || ' ' || duration_ns FROM steps"), "TRAIN 0 8000");
  EXPECT_EQ(db.Query("SELECT s.name FROM steps JOIN spans_named s USING (span_id)"), "Step:ModeKeys.TRAIN");
  EXPECT_EQ(db.Query("SELECT metric || ' ' || samples FROM metrics WHERE node_id = 0"), "cpu/cpu0/CPUUtilization 3");
  EXPECT_EQ(db.Query("SELECT group_concat(coalesce(value, 'null'), ',') FROM samples_named WHERE node = 'n1'"),
            "50.5,75.25,null");
  EXPECT_EQ(db.Query("SELECT value FROM samples_named WHERE node = 'n2'"), "12.0");
  EXPECT_EQ(db.Query("SELECT f.correlation_id || ' ' || a.name || ' -> ' || b.name FROM flows f "
                     "JOIN spans_named a ON a.span_id = f.from_span_id JOIN spans_named b ON b.span_id = f.to_span_id"),
            "77 cudaLaunchKernel -> gemm_kernel");
  EXPECT_EQ(db.Query("SELECT group_concat(rule || ':' || triggered || ':' || coalesce(last_trigger_ns, '-'), ',') "
                     "FROM rules"),
            "StepOutlier:2:123,CPUBottleneck:0:-");
  EXPECT_EQ(db.Query("SELECT finding_id || '|' || severity || '|' || estimated_saving || '|' || node || '|' || end_ns "
                     "FROM findings"),
            "StepOutlier/n1/TRAIN|warning|0.25|n1|9000");
}

TEST(SqliteExportTest, NoRulesDocumentLeavesFindingsEmpty) {
  const std::string path = TempDir("sqlite-export-empty") + "/empty.sqlite";
  ExportRunFacts facts;
  facts.findings_origin = "none";
  auto counts = ExportSqlite(testing::MakeExportTestModel(), facts, path);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  Database db(path);
  EXPECT_EQ(db.Query("SELECT count(*) FROM findings"), "0");
  EXPECT_EQ(db.Query("SELECT count(*) FROM rules"), "0");
}

TEST(SqliteExportTest, ReplacesAnExistingFile) {
  const std::string path = TempDir("sqlite-export-replace") + "/x.sqlite";
  { std::FILE* file = std::fopen(path.c_str(), "w"); std::fputs("not a database", file); std::fclose(file); }
  ASSERT_TRUE(ExportSqlite(testing::MakeExportTestModel(), ExportRunFacts{}, path).ok());
  Database db(path);
  EXPECT_EQ(db.Query("SELECT count(*) FROM spans"), "7");
}

TEST(SqliteExportTest, UnwritableDirectoryIsAnErrorAndLeavesNothing) {
  auto counts = ExportSqlite(testing::MakeExportTestModel(), ExportRunFacts{}, "/proc/stepscope-no/x.sqlite");
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("/proc/stepscope-no"), std::string::npos) << counts.status().message();
  EXPECT_EQ(counts.status().message().find('\n'), std::string::npos);
}

TEST(SqliteExportTest, SchemaSqlNamesColumnsAndTypes) {
  const auto schema = ExportSchema();
  ASSERT_EQ(schema.size(), 12u);
  EXPECT_EQ(CreateTableSql(schema[2]),
            "CREATE TABLE processes (process_id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL, pid INTEGER NOT NULL)");
}

}  // namespace
}  // namespace stepscope::exporting
