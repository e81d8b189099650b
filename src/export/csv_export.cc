#include "export/csv_export.h"

#include <charconv>
#include <memory>
#include <vector>

#include "export/output_file.h"
#include "export/utf8_repair.h"

namespace stepscope::exporting {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

class CsvTableSink final : public TableSink {
 public:
  explicit CsvTableSink(std::string dir) : dir_(std::move(dir)) {}

  Status BeginTable(const TableSchema& table) override {
    STEPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, OutputFile::Create(dir_ + "/" + table.name + ".csv"));
    files_.push_back(std::move(file));
    for (size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) buffer_ += ',';
      AppendCsvField(table.columns[i].name, buffer_);
    }
    buffer_ += "\r\n";
    return OkStatus();
  }

  Status AddRow(std::span<const Cell> row) override {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) buffer_ += ',';
      const Cell& cell = row[i];
      switch (cell.kind) {
        case Cell::Kind::kNull: break;
        case Cell::Kind::kInteger: buffer_ += std::to_string(cell.integer); break;
        case Cell::Kind::kReal: {
          char digits[32];
          auto [end, error] = std::to_chars(digits, digits + sizeof digits, cell.real);
          buffer_.append(digits, end);
          break;
        }
        case Cell::Kind::kText: AppendCsvField(cell.text, buffer_); break;
      }
    }
    buffer_ += "\r\n";
    if (buffer_.size() >= kFlushBytes) return Flush();
    return OkStatus();
  }

  Status EndTable() override { return Flush(); }

  // Renames every file into place; nothing is renamed unless every table was written.
  Status CommitAll() {
    for (auto& file : files_) STEPSCOPE_RETURN_IF_ERROR(file->Commit());
    return OkStatus();
  }

 private:
  Status Flush() {
    Status status = files_.back()->Append(buffer_);
    buffer_.clear();
    return status;
  }

  std::string dir_;
  std::vector<std::unique_ptr<OutputFile>> files_;  // temporaries, removed unless committed
  std::string buffer_;
};

}  // namespace

bool IsPlainNumber(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  const auto digits = [&] {
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - start;
  };
  size_t mantissa_digits = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    mantissa_digits += digits();
  }
  if (mantissa_digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

bool IsFormulaLike(std::string_view field) {
  if (field.empty()) return false;
  switch (field.front()) {
    case '=': case '+': case '-': case '@': case '\t': case '\r': return !IsPlainNumber(field);
    default: return false;
  }
}

void AppendCsvField(std::string_view field, std::string& line) {
  std::string repaired;
  if (!IsValidUtf8(field)) {
    repaired = ReplaceInvalidUtf8(field);
    field = repaired;
  }
  const bool neutralise = IsFormulaLike(field);
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    if (neutralise) line += '\'';
    line.append(field);
    return;
  }
  line += '"';
  if (neutralise) line += '\'';
  for (char c : field) {
    if (c == '"') line += '"';
    line += c;
  }
  line += '"';
}

StatusOr<ExportCounts> ExportCsv(const analysis::Model& model, const ExportRunFacts& facts, const std::string& dir) {
  CsvTableSink sink(dir);
  STEPSCOPE_ASSIGN_OR_RETURN(ExportCounts counts, WriteTables(model, facts, sink));
  STEPSCOPE_RETURN_IF_ERROR(sink.CommitAll());
  return counts;
}

}  // namespace stepscope::exporting
