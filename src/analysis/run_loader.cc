#include "analysis/run_loader.h"

#include <sys/stat.h>

#include "analysis/model_file.h"
#include "analysis/stepscope_loader.h"
#include "base/file_system.h"
#include "store/run_directory.h"

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

}  // namespace

StatusOr<Model> LoadRun(const std::string& path) {
  switch (KindOf(path)) {
    case PathKind::kMissing:
      return NotFoundError("'" + path + "' does not exist; pass the run directory that `stepscope run` or " +
                           "`stepscope import` printed (<out>/<job>)");
    case PathKind::kFile:
      // model.stepscope given directly; any other file (a manifest.json, a stream) is a slip.
      if (!HasModelFileMagic(path)) return store::NotARunDirectoryError(path, /*regular_file=*/true);
      return LoadModelFile(path);
    case PathKind::kOther:
      return store::NotARunDirectoryError(path, /*regular_file=*/false);
    case PathKind::kDirectory:
      break;
  }
  // Inside the run, only the run's own regular file: not a link out of it, not a FIFO.
  const std::string model_file = path + "/" + kModelFileName;
  struct stat st;
  if (lstat(model_file.c_str(), &st) == 0) {
    STEPSCOPE_RETURN_IF_ERROR(OpenRegularFile(model_file, Symlinks::kRefuse).status());
    return LoadModelFile(model_file);
  }
  // The store decides what is a stepscope run, and refuses what is not (store/run_directory.h).
  return LoadStepscopeRun(path);
}

std::string RunDirectoryOf(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return path;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace stepscope::analysis
