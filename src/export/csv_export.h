// Writes a run's tables (export_tables.h) as CSV, one file per table (<dir>/<table>.csv) with a
// header row and RFC 4180 quoting: a field holding a comma, quote, CR or LF is quoted and its
// quotes doubled; NULL is an empty field; lines end in CRLF. Text is valid UTF-8 and never runs
// as a spreadsheet formula (AppendCsvField). Each file is written under a
// temporary name and all are renamed into place only once every table was written.
// Callers: `stepscope export --format csv`, tests.
#pragma once

#include <string>
#include <string_view>

#include "analysis/model.h"
#include "base/status.h"
#include "export/export_tables.h"

namespace stepscope::exporting {

// Appends one RFC 4180 field to `line`, made safe for the programs that open CSV files:
// - invalid UTF-8 becomes U+FFFD (utf8_repair.h), so strict readers (Python's csv on a file
//   opened as UTF-8) accept the file;
// - a field that a spreadsheet would run as a formula (it starts with =, +, -, @, tab or CR:
//   OWASP's "CSV injection") gets a leading single quote, which spreadsheets show as text; a
//   plain number ("-12", "+3.5e-2") stays as it is, so it is still read as a number. Names come
//   from the traced job and from foreign traces, so a span named "=HYPERLINK(...)" is possible.
void AppendCsvField(std::string_view field, std::string& line);

// True for an optional sign, digits with an optional decimal point, and an optional exponent.
bool IsPlainNumber(std::string_view text);

StatusOr<ExportCounts> ExportCsv(const analysis::Model& model, const ExportRunFacts& facts, const std::string& dir);

}  // namespace stepscope::exporting
