// model.stepscope: one versioned binary file holding a whole analysis Model, written by
// `stepscope import` so later commands (rules, report, info) load an imported run without
// re-reading the foreign files.
//
// Layout (little-endian; docs/importers.md has the full description):
//
//   "STPSMODL" | u32 version (4) | u32 section count (9)
//   section x 9, in this order: meta, strings, nodes, series, events, args, flows, problems,
//   processes (version 1 files, still read, have the first 8: their runs load without ranks;
//   version 2 files, still read, have no bool args and no writers; meta ends with a SageMaker
//   import's file grid, origin and stop ns, only when the model has one; version 3 files, still
//   read, hold each problem as a sentence only: they load as "unclassified_problem", data loss)
//     u32 id | u32 0 | u64 raw bytes | u64 stored bytes | zstd frame (with content checksum)
//
// Inside a section, columns: varints (LEB128), zigzag for signed values, deltas for sorted
// times, 8-byte doubles. Loading validates every count, index and string id and never reads
// outside the file; any inconsistency is one DataLoss line naming the file.
//
// Callers: the import command, run loaders. Stateless; safe from any thread.
#pragma once

#include <string>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::analysis {

inline constexpr uint32_t kModelFileVersion = 4;   // written: typed problems (problem.h)
inline constexpr uint32_t kVersion3ModelFile = 3;  // also read: bool args, writers, file grid
inline constexpr uint32_t kVersion2ModelFile = 2;  // also read: processes
inline constexpr uint32_t kVersion1ModelFile = 1;  // also read

// Writes atomically (temporary file + rename).
Status SaveModelFile(const Model& model, const std::string& path);
StatusOr<Model> LoadModelFile(const std::string& path);
// Whether the regular file at `path` starts with the model file's magic (reads 8 bytes; false
// for anything unreadable).
bool HasModelFileMagic(const std::string& path);
// The same from/to bytes (tests, fuzzers); `name` names the file in errors.
std::string EncodeModelFile(const Model& model);
StatusOr<Model> DecodeModelFile(std::string_view bytes, const std::string& name);

}  // namespace stepscope::analysis
