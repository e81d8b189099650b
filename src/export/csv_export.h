// Writes a run's tables (export_tables.h) as CSV, one file per table (<dir>/<table>.csv) with a
// header row and RFC 4180 quoting: a field holding a comma, quote, CR or LF is quoted and its
// quotes doubled; NULL is an empty field; lines end in CRLF. Each file is written under a
// temporary name and all are renamed into place only once every table was written.
// Callers: `stepscope export --format csv`, tests.
#pragma once

#include <string>
#include <string_view>

#include "analysis/model.h"
#include "base/status.h"
#include "export/export_tables.h"

namespace stepscope::exporting {

// Appends one RFC 4180 field to `line`.
void AppendCsvField(std::string_view field, std::string& line);

StatusOr<ExportCounts> ExportCsv(const analysis::Model& model, const ExportRunFacts& facts, const std::string& dir);

}  // namespace stepscope::exporting
