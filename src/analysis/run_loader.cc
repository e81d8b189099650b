#include "analysis/run_loader.h"

#include <sys/stat.h>

#include "analysis/model_file.h"
#include "analysis/stepscope_loader.h"
#include "base/file_system.h"
#include "store/stream_reader.h"

namespace stepscope::analysis {
namespace {

enum class PathKind { kMissing, kFile, kDirectory, kOther };

PathKind KindOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return PathKind::kMissing;
  if (S_ISREG(st.st_mode)) return PathKind::kFile;
  if (S_ISDIR(st.st_mode)) return PathKind::kDirectory;
  return PathKind::kOther;
}

// What RunReader accepts: a node directory (manifest.json or stream files) or a job directory
// with at least one such node directory.
bool LooksLikeNode(const std::string& directory) {
  if (KindOf(directory + "/manifest.json") == PathKind::kFile) return true;
  auto streams = store::ListStreams(directory);
  return streams.ok() && !streams->empty();
}

bool LooksLikeStepscopeRun(const std::string& directory) {
  if (LooksLikeNode(directory)) return true;
  LocalFileSystem fs;
  auto entries = fs.ListDirectory(directory);
  if (!entries.ok()) return false;
  for (const std::string& entry : *entries) {
    const std::string child = directory + "/" + entry;
    if (KindOf(child) == PathKind::kDirectory && LooksLikeNode(child)) return true;
  }
  return false;
}

}  // namespace

StatusOr<Model> LoadRun(const std::string& path) {
  switch (KindOf(path)) {
    case PathKind::kMissing:
      return NotFoundError("'" + path + "' does not exist; pass the run directory that `stepscope run` or " +
                           "`stepscope import` printed (<out>/<job>)");
    case PathKind::kFile:
      return LoadModelFile(path);  // model.stepscope given directly
    case PathKind::kOther:
      return InvalidArgumentError("'" + path + "' is neither a directory nor a file; pass <out>/<job>");
    case PathKind::kDirectory:
      break;
  }
  const std::string model_file = path + "/" + kModelFileName;
  if (KindOf(model_file) == PathKind::kFile) return LoadModelFile(model_file);
  if (!LooksLikeStepscopeRun(path)) {
    return NotFoundError("'" + path + "' is not a stepscope run (no manifest.json or streams, and no " +
                         kModelFileName + "); pass <out>/<job>");
  }
  return LoadStepscopeRun(path);
}

}  // namespace stepscope::analysis
