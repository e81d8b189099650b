// Imports PyTorch profiler traces into the analysis model (model.h): Kineto Chrome traces
// (*.pt.trace.json, plain or gzip, one file per rank) and the legacy autograd-profiler JSON
// array that torch without Kineto exports (shared/FORMATS.md §2). Called by the CLI
// (`stepscope import kineto`), the Python readers, the fuzzer and the ingest benchmark.
//
// Mapping (docs/importers.md, "PyTorch profiler traces"): one node per file, "rank-<N>" from
// distributedInfo.rank, else the file stem (with a rank, every host process of the file gets
// ProcessFacts with that rank and distributedInfo.world_size); X events become spans with phase cpu_functions,
// gpu_functions-dev:<device>, cuda_runtime, python_function, user_annotation, or their own cat;
// ProfilerStep#N becomes the step event "Step:ModeKeys.TRAIN" (step N); i -> instants, C ->
// counters (one event per series, args series/value); s/f -> flows; M -> the node's
// manifest_json (process and thread names). Times: ts/dur are µs text, read exactly to ns, plus
// baseTimeNanoseconds when the trace's ts are relative to it (all fixtures with the field are).
//
// Single-threaded; one importer builds one model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/model.h"
#include "base/status.h"
#include "importers/kineto/kineto_file_parser.h"

namespace stepscope::analysis {

class KinetoImporter {
 public:
  KinetoImporter();

  // Reads `path` (gzip or plain). Errors name the file and the byte offset.
  Status AddFile(const std::string& path);
  // The same from memory (fuzzer, benchmark, tests); `name` labels the node and errors the way
  // a path would. `bytes` may be gzip.
  Status AddBytes(std::string_view name, std::string_view bytes);
  // Plain (not gzip) JSON text the caller hands over: parsed in place, without AddBytes' copy.
  Status AddText(std::string_view name, std::string text);

  // The model of everything added; the importer is spent afterwards.
  Model Finish() &&;

 private:
  Status AddDecoded(std::string_view name, std::string& bytes, bool truncated);
  void Place(KinetoFile& file);
  std::string NodeName(const KinetoFile& file);

  ModelBuilder builder_;
  KinetoFileParser parser_;
  StringId ac2g_;
  StringId legacy_ac2g_;
  std::vector<std::string> node_names_;
};

// Imports `files` into one model (ModelSource::kKineto). Fails on the first file that cannot be
// read; a truncated file keeps its complete events and says so in Model::problems().
StatusOr<Model> ImportKineto(const std::vector<std::string>& files);

}  // namespace stepscope::analysis
