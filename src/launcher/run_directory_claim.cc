#include "launcher/run_directory_claim.h"

#include "base/file_system.h"

namespace stepscope::launcher {
namespace {

// How many suffixes a default job name tries: far more launchers of one script than start
// within one second of each other.
constexpr int kMaxDefaultJobSuffix = 99;

}  // namespace

StatusOr<RunDirectoryClaim> ClaimRunDirectory(const RunDirectoryRequest& request,
                                              const std::function<std::string(const std::string& job)>& manifest_for_job) {
  const int attempts = request.job_is_default ? kMaxDefaultJobSuffix : 1;
  std::string first_taken;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    RunDirectoryClaim claim;
    claim.job = attempt == 1 ? request.job : request.job + "-" + std::to_string(attempt);
    claim.node_dir = request.out + "/" + claim.job + "/" + request.node;
    if (Status created = CreateDirectories(claim.node_dir); !created.ok()) {
      return IoError(created.message() + "; choose a writable --out");
    }
    auto claimed = CreateFileAtomically(claim.node_dir + "/manifest.json", manifest_for_job(claim.job));
    if (!claimed.ok()) return IoError(claimed.status().message() + "; choose a writable --out with free space");
    if (*claimed) return claim;
    if (first_taken.empty()) first_taken = claim.node_dir;
  }
  if (!request.job_is_default) {
    return InvalidArgumentError("'" + first_taken + "' already holds a run (it has a manifest.json), and two runs " +
                                "never share a directory; pass another --job NAME or --out DIR");
  }
  return InvalidArgumentError("'" + first_taken + "' and " + std::to_string(kMaxDefaultJobSuffix - 1) +
                              " numbered variants of it already hold runs; pass --job NAME or --out DIR");
}

}  // namespace stepscope::launcher
