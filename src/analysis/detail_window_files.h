// The detail-window files of a stepscope run (docs/detail-windows.md): the one owner of their
// names and the one reader of their bytes.
//
//   <node>/detail/<kind>-<pid>-<window>.json.zst     one zstd-compressed JSON document per
//                                                    window and process
//
// Written by the Python package when a window closes (python/stepscope/torch/_detail_store.py,
// which takes the name and the format version from here through stepscope._core; operators
// windows of torch 2.x through importers/kineto/kineto_window_writer.h). Read through this
// file only: `stepscope info` and `stepscope pyprof` (cli/detail_summary.h), the analysis
// loader (detail_operators.h: operator profiles into the model), stepscope._core's readers.
//
// A run may come from anywhere, so nothing here trusts it: `<node>/detail` is listed only when
// it is a directory itself (a symbolic link there is refused, not followed), files are read as
// regular files only and never through a link (base/file_system.h), their inflated size is
// bounded, and every field of a document is read without trusting its type. A file that cannot
// be read is described with its error, for the caller to report; it never fails a command.
//
// Threading: plain functions over files; no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"
#include "store/run_directory.h"

namespace stepscope::analysis {

// The layout of the documents the writers write (`format_version`), and the newest this reader
// reads. python/stepscope/torch/_detail_store.py's FORMAT_VERSION is this one.
inline constexpr int kDetailFormatVersion = 1;
// <node>/<kDetailDirectoryName>/ holds a node's detail files.
inline constexpr const char* kDetailDirectoryName = "detail";
// No detail document comes near this (operator events are capped at 200 000); a larger one is
// not stepscope's. Bounds both the file and what it inflates to.
inline constexpr uint64_t kMaxDetailDocumentBytes = uint64_t{1} << 30;

// The parts of a detail file's name.
struct DetailFileName {
  std::string kind;  // operators | python | dataloader (any name not starting with '.')
  int64_t pid = 0;
  int64_t window = 0;  // the window's index in its process
  bool operator==(const DetailFileName&) const = default;
};

// "<kind>-<pid>-<window>.json.zst" -> its parts. Any other name is not a window's document:
// nullopt for temporary files ("....json.zst.tmp-<pid>"), dot files (the data-loader's
// ".dataloader-...jsonl"), signal files ("dataloader-<pid>.active"), Kineto's traces
// ("...pt.trace.json.gz"), numbers with signs or more than 18 digits.
std::optional<DetailFileName> ParseDetailFileName(std::string_view name);
// The file name of a window's document: the inverse of ParseDetailFileName. The Python writer
// names its files with this (stepscope._core.detail_window_file_name).
std::string DetailWindowFileName(std::string_view kind, int64_t pid, int64_t window);

// One detail file and what its document says about itself.
struct DetailWindowFile {
  std::string node;       // the node's name
  std::string path;       // the file, as found under the node directory
  std::string file;       // <node dir name>/detail/<file name>, relative to the job directory
  std::string kind;       // operators | python | dataloader; "" for a detail directory refused
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
  std::string error;       // not empty: could not be read; the fields above are from its name
};

// The detail files of one node (`node.name` names it in the result, `node.path` is its
// directory), by kind, pid and window, described by their names only (kind, pid, window, path,
// file, bytes); documents are not read. Empty when the node has no detail directory. An error
// (one line naming the directory) when <node>/detail is a symbolic link (not followed: a run is
// read only through its own files), is not a directory, or cannot be listed.
StatusOr<std::vector<DetailWindowFile>> ListDetailWindowFiles(const store::RunNode& node);

// The inflated bytes of one detail document (its JSON text), at most kMaxDetailDocumentBytes.
// A symbolic link, a FIFO or a device is refused, not followed or waited on. Errors name the file.
StatusOr<std::string> ReadDetailFile(const std::string& path);

// ReadDetailFile's text as a JSON object. DataLoss when it does not parse or is not an object;
// Unimplemented when a newer stepscope wrote it (format_version > kDetailFormatVersion).
StatusOr<nlohmann::json> ReadDetailDocument(const std::string& path);

// Fills `window`'s fields from its document (kind, pid and window index where the document
// states them, steps, phase, times, completeness, the per-kind summary); a field of the wrong
// type keeps the name's value or its default.
void DescribeDetailWindow(const nlohmann::json& document, DetailWindowFile& window);

// Every detail window of `nodes`, each read and described, by node, kind, pid and window. A
// file that cannot be read keeps its name's fields and its error; a node whose detail directory
// is refused (ListDetailWindowFiles' error) is one entry with kind "", `file` <node>/detail and
// the error.
std::vector<DetailWindowFile> ReadDetailWindows(const std::vector<store::RunNode>& nodes);

// The same for a loaded run's node directories (NodeFacts::directory); none for an imported run.
std::vector<DetailWindowFile> ReadDetailWindows(const Model& model);

}  // namespace stepscope::analysis
