// Reader of SageMaker Debugger system-metric files (shared/FORMATS.md §1):
// <root>/system/incremental/[<YYYYMMDDHH>/]<10-digit epoch s>.algo-<N>.json, one JSON object per
// line: {"Type","Name","Dimension","Value","NodeId","Timestamp"} with Timestamp in float seconds.
//
// A truncated last line (the writer was cut short) is skipped and the earlier records kept; a
// bad line anywhere else is an error naming the file and the line. Blank lines are skipped.
//
// Callers: sagemaker_importer.cc, tests and the fuzzer. Stateless; safe from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stepscope::analysis {

struct SageMakerSystemRecord {
  std::string type;        // "cpu", "gpu", "memory", "i/o", "network"
  std::string name;        // "cpu0", "gpu1", "MemoryUsedPercent", ...
  std::string dimension;   // "CPUUtilization", ... ("" for memory and i/o)
  std::string node_id;     // "algo-1"
  double value = 0;
  double timestamp_s = 0;  // as written: float seconds since the epoch
  int64_t time_ns = 0;     // timestamp_s * 1e9 rounded to whole microseconds (what float s resolve)
};

struct SageMakerSystemFile {
  std::vector<SageMakerSystemRecord> records;  // in file order
  bool truncated_last_line = false;            // the last line was cut short and skipped
};

// One record as parsed: the views point into the parser's buffers and are valid only during
// the visitor's call.
struct SageMakerSystemRecordView {
  std::string_view type, name, dimension, node_id;
  double value = 0;
  double timestamp_s = 0;
  int64_t time_ns = 0;
};
using SageMakerSystemVisitor = std::function<void(const SageMakerSystemRecordView&)>;

// Streams the records of `text` to `visit`, in file order, without building them: the importer
// of a 24 h job reads tens of millions. Same rules as ParseSageMakerSystemText; on an error
// some records may already have been visited. Sets *truncated_last_line.
Status VisitSageMakerSystemText(std::string_view text, std::string_view file_name, const SageMakerSystemVisitor& visit,
                                bool* truncated_last_line);
// The same, parsing in place when `text` has simdjson's padding (64 bytes) of spare capacity,
// as LocalFileSystem::ReadFile leaves it; otherwise it is copied.
Status VisitSageMakerSystemText(const std::string& text, std::string_view file_name,
                                const SageMakerSystemVisitor& visit, bool* truncated_last_line);

// `file_name` only names the file in errors.
StatusOr<SageMakerSystemFile> ParseSageMakerSystemText(std::string_view text, std::string_view file_name);
StatusOr<SageMakerSystemFile> ReadSageMakerSystemFile(const std::string& path);

// True for names of the form `<10 digits>.algo-<digits>.json` (the file's start second and node).
bool IsSageMakerSystemFileName(std::string_view file_name);

// Records with start_s <= timestamp_s <= end_s (inclusive, as the reference reader), of
// `type` when it is not empty.
std::vector<SageMakerSystemRecord> SystemRecordsIn(const std::vector<SageMakerSystemRecord>& records,
                                                   double start_s, double end_s, std::string_view type = "");

}  // namespace stepscope::analysis
