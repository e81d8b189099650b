#include "importers/sagemaker/sagemaker_system_reader.h"

#include <cmath>
#include <cstring>
#include <regex>
#include <vector>
#include <algorithm>

#include <simdjson.h>

#include "base/file_system.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kFix = "re-copy the file from the job's profiler output, or delete it to import the rest";

// Seconds since the epoch as a double carry about 0.2 µs of precision; kept to the nearest ns,
// so the double the reference read is the nearest double to time_ns / 1e9 again (its
// bottleneck keys spell that double: SecondsKey). Whole seconds and the fraction separately:
// the fraction of a double is exact, while multiplying the whole value by 1e9 first would add a
// rounding error of its own. "" or what is wrong.
const char* TimestampToNanos(double timestamp_s, int64_t* time_ns) {
  const double seconds = std::floor(timestamp_s);
  if (!std::isfinite(seconds) || std::fabs(seconds) > 9.0e9) return "\"Timestamp\" out of range";
  const double nanos = std::round((timestamp_s - seconds) * 1e9);
  *time_ns = static_cast<int64_t>(seconds) * 1'000'000'000 + static_cast<int64_t>(nanos);
  return "";
}

// Reads one parsed record; "" on success, else what is wrong with it.
const char* ReadRecord(simdjson::dom::element element, SageMakerSystemRecordView* record) {
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) return "not a JSON object";
  bool has_type = false, has_name = false, has_value = false, has_timestamp = false;
  for (simdjson::dom::key_value_pair field : object) {
    const std::string_view key = field.key;
    if (key == "Type") {
      has_type = field.value.get_string().get(record->type) == simdjson::SUCCESS;
    } else if (key == "Name") {
      has_name = field.value.get_string().get(record->name) == simdjson::SUCCESS;
    } else if (key == "Dimension") {
      if (field.value.get_string().get(record->dimension) != simdjson::SUCCESS) record->dimension = {};
    } else if (key == "NodeId") {
      if (field.value.get_string().get(record->node_id) != simdjson::SUCCESS) record->node_id = {};
    } else if (key == "Value") {
      has_value = field.value.get_double().get(record->value) == simdjson::SUCCESS;
    } else if (key == "Timestamp") {
      has_timestamp = field.value.get_double().get(record->timestamp_s) == simdjson::SUCCESS;
    }
  }
  if (!has_type) return "no string \"Type\"";
  if (!has_name) return "no string \"Name\"";
  if (!has_value) return "no numeric \"Value\"";
  if (!has_timestamp) return "no numeric \"Timestamp\"";
  return TimestampToNanos(record->timestamp_s, &record->time_ns);
}

bool IsBlank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

// One parse per line: exact line numbers and the truncated-last-line rule. The fast path
// below hands over to it whenever a file is not plainly one valid record per line.
// `lines_before` is the number of lines of the file before `text` (for error messages).
Status VisitLineByLine(std::string_view text, std::string_view file_name, const SageMakerSystemVisitor& visit,
                       bool* truncated_last_line, int lines_before) {
  simdjson::dom::parser parser;
  size_t line_start = 0;
  int line_number = lines_before;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    const bool last = line_end == std::string_view::npos || text.find_first_not_of(" \t\r\n", line_end) == std::string_view::npos;
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string_view line = text.substr(line_start, line_end - line_start);
    ++line_number;
    line_start = line_end + 1;
    if (IsBlank(line)) continue;
    SageMakerSystemRecordView record;
    simdjson::dom::element element;
    const char* problem = parser.parse(line.data(), line.size()).get(element) == simdjson::SUCCESS
                              ? ReadRecord(element, &record)
                              : "not valid JSON";
    if (*problem == '\0') {
      visit(record);
    } else if (last) {
      *truncated_last_line = true;  // a write cut short: FORMATS.md keeps the earlier records
    } else {
      return DataLossError(std::string(file_name) + ":" + std::to_string(line_number) + ": bad system-metrics record (" +
                           problem + "); " + std::string(kFix));
    }
  }
  return OkStatus();
}

}  // namespace

namespace {

// `padded` holds `text` with simdjson's padding readable past its end.
Status VisitPadded(std::string_view text, simdjson::padded_string_view padded, std::string_view file_name,
                   const SageMakerSystemVisitor& visit, bool* truncated_last_line) {
  // Fast path: simdjson's document stream over the whole file (a 24 h job has ~2 GB of these
  // lines) instead of a parse per line. It must give exactly what the line-by-line rules give,
  // so a record is visited only once the next document shows that the record filled its line
  // alone (only whitespace from its line's end to the next document). At the first document
  // that breaks this, or any parse error, the rest of the file, from the line of the record not
  // yet visited, is read line by line, which names a bad line or drops a cut last line.
  //
  // The whole file is one batch; SageMaker writes a file a minute, ~1 MB. Larger files than
  // kMaxFastBytes go line by line rather than hold a batch that large.
  //
  // Kept per thread: the importer reads thousands of files, and a fresh parser would map (and
  // page-fault) its buffers again for each.
  static thread_local simdjson::dom::parser parser;
  simdjson::dom::document_stream stream;
  auto only_whitespace = [&](size_t from, size_t to) {
    return text.substr(from, to - from).find_first_not_of(" \t\r\n") == std::string_view::npos;
  };
  // The pending record: parsed, checked, not yet visited. Its strings are copied because the
  // stream reuses its buffers for the next document.
  struct Pending {
    std::string type, name, dimension, node_id;
    SageMakerSystemRecordView view;
    size_t start = 0;
  } pending;
  bool has_pending = false;
  bool fast = parser.parse_many(padded.data(), padded.size(), std::max<size_t>(padded.size(), simdjson::dom::MINIMAL_BATCH_SIZE)).get(stream) ==
              simdjson::SUCCESS;
  if (fast) {
    for (auto it = stream.begin(); it != stream.end(); ++it) {
      const size_t start = it.current_index();
      if (has_pending) {
        const size_t line_end = text.find('\n', pending.start);
        if (line_end == std::string_view::npos || line_end >= start || !only_whitespace(line_end, start)) {
          fast = false;
          break;
        }
        visit(pending.view);
        has_pending = false;
      }
      simdjson::dom::element element;
      SageMakerSystemRecordView record;
      if ((*it).get(element) != simdjson::SUCCESS || *ReadRecord(element, &record) != '\0') {
        fast = false;
        pending.start = start;  // the line-by-line pass starts at this record's line
        break;
      }
      pending.type.assign(record.type);
      pending.name.assign(record.name);
      pending.dimension.assign(record.dimension);
      pending.node_id.assign(record.node_id);
      pending.view = record;
      pending.view.type = pending.type;
      pending.view.name = pending.name;
      pending.view.dimension = pending.dimension;
      pending.view.node_id = pending.node_id;
      pending.start = start;
      has_pending = true;
    }
  }
  if (fast && stream.truncated_bytes() == 0) {
    if (!has_pending) return OkStatus();  // no records at all (blank file)
    const size_t line_end = text.find('\n', pending.start);
    if (line_end == std::string_view::npos || only_whitespace(line_end, text.size())) {
      visit(pending.view);
      return OkStatus();
    }
  }
  // Everything before the line of the first record not visited is done.
  const size_t resume_at = pending.start == 0 ? 0 : text.rfind('\n', pending.start - 1) + 1;
  const std::string_view done = text.substr(0, std::min(resume_at, text.size()));
  const int lines_done = static_cast<int>(std::count(done.begin(), done.end(), '\n'));
  return VisitLineByLine(text.substr(done.size()), file_name, visit, truncated_last_line, lines_done);
}

constexpr size_t kMaxFastBytes = size_t{1} << 30;

}  // namespace

Status VisitSageMakerSystemText(std::string_view text, std::string_view file_name, const SageMakerSystemVisitor& visit,
                                bool* truncated_last_line) {
  *truncated_last_line = false;
  if (text.size() > kMaxFastBytes) return VisitLineByLine(text, file_name, visit, truncated_last_line, 0);
  const simdjson::padded_string padded(text);
  return VisitPadded(text, padded, file_name, visit, truncated_last_line);
}

Status VisitSageMakerSystemText(const std::string& text, std::string_view file_name,
                                const SageMakerSystemVisitor& visit, bool* truncated_last_line) {
  if (text.size() > kMaxFastBytes || text.capacity() < text.size() + simdjson::SIMDJSON_PADDING) {
    return VisitSageMakerSystemText(std::string_view(text), file_name, visit, truncated_last_line);
  }
  *truncated_last_line = false;
  // In place: LocalFileSystem::ReadFile leaves the padding simdjson reads past the end.
  return VisitPadded(text, simdjson::padded_string_view(text.data(), text.size(), text.capacity()), file_name, visit,
                     truncated_last_line);
}

StatusOr<SageMakerSystemFile> ParseSageMakerSystemText(std::string_view text, std::string_view file_name) {
  SageMakerSystemFile file;
  STEPSCOPE_RETURN_IF_ERROR(VisitSageMakerSystemText(
      text, file_name,
      [&](const SageMakerSystemRecordView& view) {
        SageMakerSystemRecord& record = file.records.emplace_back();
        record.type.assign(view.type);
        record.name.assign(view.name);
        record.dimension.assign(view.dimension);
        record.node_id.assign(view.node_id);
        record.value = view.value;
        record.timestamp_s = view.timestamp_s;
        record.time_ns = view.time_ns;
      },
      &file.truncated_last_line));
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
