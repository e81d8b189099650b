#include "export/sqlite_export.h"

#include <sqlite3.h>

#include <cstdio>
#include <memory>

#include "export/output_file.h"

namespace stepscope::exporting {
namespace {

constexpr const char* kIndexesAndViews = R"sql(
CREATE INDEX spans_by_thread ON spans(thread_id, start_ns);
CREATE INDEX spans_by_name ON spans(name_id);
CREATE INDEX steps_by_phase ON steps(node_id, phase, step);
CREATE INDEX samples_by_metric ON samples(metric_id, time_ns);
CREATE VIEW spans_named AS
  SELECT s.span_id, s.thread_id, s.node_id, s.kind, s.start_ns, s.end_ns, s.duration_ns,
         p.value AS phase, n.value AS name, c.value AS category, s.step, s.unfinished, s.args
  FROM spans s JOIN strings p ON p.string_id = s.phase_id JOIN strings n ON n.string_id = s.name_id
       JOIN strings c ON c.string_id = s.category_id;
CREATE VIEW samples_named AS
  SELECT n.name AS node, m.metric, m.type, m.name, m.dimension, s.time_ns, s.value
  FROM samples s JOIN metrics m ON m.metric_id = s.metric_id JOIN nodes n ON n.node_id = s.node_id;
)sql";

struct DatabaseCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};

class SqliteTableSink final : public TableSink {
 public:
  SqliteTableSink(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteTableSink() override { sqlite3_finalize(insert_); }

  Status Exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      Status status = Error(message != nullptr ? message : sqlite3_errmsg(db_));
      sqlite3_free(message);
      return status;
    }
    return OkStatus();
  }

  Status BeginTable(const TableSchema& table) override {
    STEPSCOPE_RETURN_IF_ERROR(Exec(CreateTableSql(table)));
    std::string sql = std::string("INSERT INTO ") + table.name + " VALUES (";
    for (size_t i = 0; i < table.columns.size(); ++i) sql += i == 0 ? "?" : ",?";
    sql += ")";
    sqlite3_finalize(insert_);
    insert_ = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &insert_, nullptr) != SQLITE_OK) return Error(sqlite3_errmsg(db_));
    columns_ = table.columns.size();
    return OkStatus();
  }

  Status AddRow(std::span<const Cell> row) override {
    if (row.size() != columns_) return InternalError("export row of " + std::to_string(row.size()) + " cells for " +
                                                     std::to_string(columns_) + " columns");
    for (size_t i = 0; i < row.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      const Cell& cell = row[i];
      int rc = SQLITE_OK;
      switch (cell.kind) {
        case Cell::Kind::kNull: rc = sqlite3_bind_null(insert_, index); break;
        case Cell::Kind::kInteger: rc = sqlite3_bind_int64(insert_, index, cell.integer); break;
        case Cell::Kind::kReal: rc = sqlite3_bind_double(insert_, index, cell.real); break;
        // SQLITE_STATIC: the text outlives the step below, and every row rebinds every column.
        case Cell::Kind::kText:
          rc = sqlite3_bind_text64(insert_, index, cell.text.data(), cell.text.size(), SQLITE_STATIC, SQLITE_UTF8);
          break;
      }
      if (rc != SQLITE_OK) return Error(sqlite3_errmsg(db_));
    }
    const int rc = sqlite3_step(insert_);
    sqlite3_reset(insert_);
    if (rc != SQLITE_DONE) return Error(sqlite3_errmsg(db_));
    return OkStatus();
  }

  Status EndTable() override {
    sqlite3_finalize(insert_);
    insert_ = nullptr;
    return OkStatus();
  }

 private:
  Status Error(std::string_view message) const {
    const int code = sqlite3_extended_errcode(db_);
    const bool full = (code & 0xff) == SQLITE_FULL;
    return IoError("cannot write " + path_ + ": " + std::string(message) +
                   (full ? "; free disk space or pass -o on another disk" : "; pass -o with a writable location"));
  }

  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* insert_ = nullptr;
  size_t columns_ = 0;
};

// Everything but the rename; the caller removes the temporary file on error.
StatusOr<ExportCounts> WriteDatabase(const analysis::Model& model, const ExportRunFacts& facts,
                                     const std::string& temp_path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(temp_path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, DatabaseCloser> db(raw);
  if (rc != SQLITE_OK) {
    return IoError("cannot create " + temp_path + ": " + (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)) +
                   "; pass -o with a writable location");
  }
  SqliteTableSink sink(db.get(), temp_path);
  // No journal, no syncs: the file is private until it is renamed, and a failed export is
  // deleted rather than recovered.
  STEPSCOPE_RETURN_IF_ERROR(sink.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=65536;"));
  STEPSCOPE_RETURN_IF_ERROR(sink.Exec("BEGIN"));
  STEPSCOPE_ASSIGN_OR_RETURN(ExportCounts counts, WriteTables(model, facts, sink));
  STEPSCOPE_RETURN_IF_ERROR(sink.Exec(kIndexesAndViews));
  STEPSCOPE_RETURN_IF_ERROR(sink.Exec("COMMIT"));
  db.reset();
  return counts;
}

}  // namespace

const char* SqliteIndexesAndViewsSql() { return kIndexesAndViews; }

StatusOr<ExportCounts> ExportSqlite(const analysis::Model& model, const ExportRunFacts& facts, const std::string& path) {
  STEPSCOPE_RETURN_IF_ERROR(CreateParentDirectories(path));
  const std::string temp_path = TempPathFor(path);
  std::remove(temp_path.c_str());  // a leftover of a killed export would be appended to
  StatusOr<ExportCounts> counts = WriteDatabase(model, facts, temp_path);
  if (!counts.ok()) {
    std::remove(temp_path.c_str());
    return counts.status();
  }
  STEPSCOPE_RETURN_IF_ERROR(RenameInto(temp_path, path));
  return counts;
}

}  // namespace stepscope::exporting
