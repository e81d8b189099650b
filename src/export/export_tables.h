// The relational view of a run that the SQLite and CSV exports write (docs/exports.md holds the
// schema with every column's meaning and unit). One walk over the Model feeds a TableSink table
// by table, row by row, so neither export holds more than one row at a time.
//
//   runs, nodes, processes, threads, strings, spans, steps, metrics, samples, flows, rules, findings
//
// Names of framework events are ids into `strings` (a long run repeats a few thousand names
// millions of times); system samples point at `metrics` (node, type, name, dimension).
// Findings come from a rules.json document (profiler_report.h RulesJson()) chosen by the caller.
// Callers: sqlite_export.h, csv_export.h. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::exporting {

inline constexpr int kExportSchemaVersion = 1;

enum class ColumnType : uint8_t { kInteger, kReal, kText };

struct Column {
  const char* name;
  ColumnType type;
  const char* constraint;  // "PRIMARY KEY", "NOT NULL", "" (SQLite only)
};

struct TableSchema {
  const char* name;
  std::span<const Column> columns;
};

// One value of a row. Text views stay valid only during the AddRow call.
struct Cell {
  enum class Kind : uint8_t { kNull, kInteger, kReal, kText } kind = Kind::kNull;
  int64_t integer = 0;
  double real = 0;
  std::string_view text;

  static Cell Null() { return {}; }
  static Cell Int(int64_t value) { return {Kind::kInteger, value, 0, {}}; }
  static Cell Real(double value) { return {Kind::kReal, 0, value, {}}; }
  static Cell Text(std::string_view value) { return {Kind::kText, 0, 0, value}; }
};

class TableSink {
 public:
  virtual ~TableSink() = default;
  virtual Status BeginTable(const TableSchema& table) = 0;
  // `row` has one cell per column of the current table, in order.
  virtual Status AddRow(std::span<const Cell> row) = 0;
  virtual Status EndTable() = 0;
};

// Every table, in the order they are written.
std::span<const TableSchema> ExportSchema();

// "CREATE TABLE spans (span_id INTEGER PRIMARY KEY, ...)" for one table.
std::string CreateTableSql(const TableSchema& table);

struct ExportRunFacts {
  std::string run_path;        // as given on the command line
  std::string job;             // the run's name
  nlohmann::json rules;        // a rules.json document; null when there is none
  std::string findings_origin; // "rules.json", "evaluated" (the rules driver ran), "none"
};

struct ExportCounts {
  uint64_t spans = 0;    // rows of `spans` (all framework events)
  uint64_t steps = 0;
  uint64_t samples = 0;
  uint64_t findings = 0;
};

StatusOr<ExportCounts> WriteTables(const analysis::Model& model, const ExportRunFacts& facts, TableSink& sink);

}  // namespace stepscope::exporting
