#include "analysis/sagemaker_system_reader.h"

#include <cmath>
#include <regex>

#include <nlohmann/json.hpp>

#include "base/file_system.h"
#include "store/json_fields.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kFix = "re-copy the file from the job's profiler output, or delete it to import the rest";

// Parses one line; an empty string on success, else what is wrong with it.
std::string ParseLine(std::string_view line, SageMakerSystemRecord* record) {
  nlohmann::json object = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return "not valid JSON";
  if (!object.is_object()) return "not a JSON object";
  const nlohmann::json* type = store::JsonField(object, "Type");
  const nlohmann::json* name = store::JsonField(object, "Name");
  const nlohmann::json* value = store::JsonField(object, "Value");
  const nlohmann::json* timestamp = store::JsonField(object, "Timestamp");
  if (type == nullptr || !type->is_string()) return "no string \"Type\"";
  if (name == nullptr || !name->is_string()) return "no string \"Name\"";
  if (value == nullptr || !value->is_number()) return "no numeric \"Value\"";
  if (timestamp == nullptr || !timestamp->is_number()) return "no numeric \"Timestamp\"";
  record->type = type->get<std::string>();
  record->name = name->get<std::string>();
  record->dimension = store::JsonString(object, "Dimension");
  record->node_id = store::JsonString(object, "NodeId");
  record->value = value->get<double>();
  record->timestamp_s = timestamp->get<double>();
  // Seconds since the epoch as a double carry about 0.2 µs of precision: round to whole µs so
  // 1591160699.4570894 becomes ...457089000 ns, not a float artefact.
  // Whole seconds and the fraction separately: the fraction of a double is exact, while
  // multiplying the whole value by 1e6 first would add a rounding error of its own.
  const double seconds = std::floor(record->timestamp_s);
  if (!std::isfinite(seconds) || std::fabs(seconds) > 9.0e9) return "\"Timestamp\" out of range";
  const double micros = std::round((record->timestamp_s - seconds) * 1e6);
  record->time_ns = (static_cast<int64_t>(seconds) * 1'000'000 + static_cast<int64_t>(micros)) * 1000;
  return "";
}

}  // namespace

StatusOr<SageMakerSystemFile> ParseSageMakerSystemText(std::string_view text, std::string_view file_name) {
  SageMakerSystemFile file;
  size_t line_start = 0;
  int line_number = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    const bool last = line_end == std::string_view::npos || text.find_first_not_of(" \t\r\n", line_end) == std::string_view::npos;
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    ++line_number;
    line_start = line_end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    SageMakerSystemRecord record;
    std::string problem = ParseLine(line, &record);
    if (problem.empty()) {
      file.records.push_back(std::move(record));
    } else if (last) {
      file.truncated_last_line = true;  // a write cut short: FORMATS.md keeps the earlier records
    } else {
      return DataLossError(std::string(file_name) + ":" + std::to_string(line_number) + ": bad system-metrics record (" +
                           problem + "); " + std::string(kFix));
    }
  }
  return file;
}

StatusOr<SageMakerSystemFile> ReadSageMakerSystemFile(const std::string& path) {
  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return ParseSageMakerSystemText(text, path);
}

bool IsSageMakerSystemFileName(std::string_view file_name) {
  static const std::regex kPattern(R"(^\d{10}\.algo-\d+\.json$)");
  return std::regex_match(file_name.begin(), file_name.end(), kPattern);
}

std::vector<SageMakerSystemRecord> SystemRecordsIn(const std::vector<SageMakerSystemRecord>& records,
                                                   double start_s, double end_s, std::string_view type) {
  std::vector<SageMakerSystemRecord> found;
  for (const SageMakerSystemRecord& record : records) {
    if (record.timestamp_s < start_s || record.timestamp_s > end_s) continue;
    if (!type.empty() && record.type != type) continue;
    found.push_back(record);
  }
  return found;
}

}  // namespace stepscope::analysis
