// Reading the detail-window files of a run (<node>/detail/<kind>-<pid>-<window>.json.zst,
// written by python/stepscope/torch/_detail_store.py; format in docs/detail-windows.md).
//
// Callers: `stepscope info` lists the windows captured (run_info.cc), `stepscope pyprof` shows
// the top Python functions of the python windows. Files come from disk: every field is read
// without trusting its type, and a file that does not decompress or parse is listed with its
// error instead of failing the command. Plain functions, no threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "store/run_reader.h"

namespace stepscope::cli {

inline constexpr int kPyprofSchemaVersion = 1;

// One detail file and what its document says about itself.
struct DetailWindowFile {
  std::string node;       // the node's name
  std::string path;       // the file, as found under the node directory
  std::string file;       // <node dir name>/detail/<file name>, relative to the job directory
  std::string kind;       // operators | python | dataloader
  int64_t pid = 0;
  int64_t window = 0;     // the window's index in its process
  bool has_steps = false;
  int64_t first_step = -1;
  int64_t last_step = -1;
  std::string step_phase;  // the phase the steps count
  int64_t start_ns = 0;    // Unix epoch
  int64_t end_ns = 0;
  bool complete = false;
  uint64_t bytes = 0;      // compressed, on disk
  nlohmann::json summary = nlohmann::json::object();  // per kind: events, profiles, batches, ...
  std::string error;       // not empty: the file could not be read; the fields above are from its name
};

// The decompressed contents of a zstd file; DataLoss when it is not one whole zstd frame or
// inflates past 1 GiB (no detail file is that large).
StatusOr<std::string> ReadZstdFile(const std::string& path);

// A detail file's JSON document (an object).
StatusOr<nlohmann::json> ReadDetailDocument(const std::string& path);

// The detail files of the run's nodes, by node, kind, pid and window. Files whose names are not
// <kind>-<pid>-<window>.json.zst (temporary files, the data-loader signal) are ignored.
std::vector<DetailWindowFile> ListDetailWindows(const std::vector<store::NodeInfo>& nodes);

// For `stepscope info --json`: [{"node", "kind", "pid", "window", "steps": [first, last] | null,
// "step_phase", "start_ns", "end_ns", "complete", "file", "bytes", "summary", "error"?}].
nlohmann::json DetailWindowsToJson(const std::vector<DetailWindowFile>& windows);

enum class PyprofSort { kSelf, kCumulative };

struct PyprofOptions {
  std::string run;  // a job or node directory
  int top = 20;     // rows per table, >= 1
  PyprofSort sort = PyprofSort::kSelf;
  bool json = false;
};

// One table of `stepscope pyprof`: a python window's profiles with one timer merged (or a
// sampling window's call counts), functions sorted and cut to `top`.
nlohmann::json BuildPyprofTables(const std::vector<DetailWindowFile>& windows, const PyprofOptions& options);
// Prints one stderr line per python window that was captured but cannot be read, prefixed by
// `command` ("stepscope pyprof"), so a skipped profile is never silent; returns how many.
size_t PrintCorruptPythonWindows(const std::vector<DetailWindowFile>& windows, const char* command);
std::string FormatPyprofTables(const nlohmann::json& tables);

// `stepscope pyprof RUN [--top N] [--sort self|cumulative] [--json]`; returns the exit code
// (1 when the run cannot be read or holds no readable Python profile). Every python window file
// that cannot be read is named on stderr as corrupt.
int PyprofCommand(const PyprofOptions& options);

}  // namespace stepscope::cli
