// Writes a run's tables (export_tables.h) into a SQLite database: one transaction, one prepared
// INSERT per table, indexes and named views created after the rows (faster than maintaining
// them per insert). The file is built under a temporary name and renamed when complete.
// docs/exports.md documents the schema. Callers: `stepscope export --format sqlite`, tests.
#pragma once

#include <string>

#include "analysis/model.h"
#include "base/status.h"
#include "export/export_tables.h"

namespace stepscope::exporting {

// Indexes and views created after the tables (the schema's SQL, shown in docs/exports.md).
const char* SqliteIndexesAndViewsSql();

StatusOr<ExportCounts> ExportSqlite(const analysis::Model& model, const ExportRunFacts& facts, const std::string& path);

}  // namespace stepscope::exporting
