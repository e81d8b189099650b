// The node directory a new `stepscope run` writes, <out>/<job>/<node>, claimed so that no two
// launchers ever write the same one: the second would overwrite the first's manifest and config
// and empty its system stream while the first still runs.
//
// The claim is the node's manifest.json, created with its first contents only if no manifest
// is there (base/file_system.h CreateFileAtomically). A directory that already holds a
// manifest belongs to another run, finished or not. With the default job name
// (<script>-<UTC second>), the same script started twice in one second would collide, so the
// later launcher takes <job>-2, <job>-3, ...; a job name the user chose is never changed, and
// its collision is an error that says what to pass.
//
// Called once by the launcher's main thread before anything else is written.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"

namespace stepscope::launcher {

struct RunDirectoryClaim {
  std::string job;       // the job name in use: the one asked for, or the default one with a suffix
  std::string node_dir;  // <out>/<job>/<node>, created and holding the manifest
};

struct RunDirectoryRequest {
  std::string out;
  std::string job;
  std::string node;
  bool job_is_default = false;  // the job name was made up, not given: it may gain a suffix
};

// `manifest_for_job` gives the manifest's first contents for the job name finally used.
StatusOr<RunDirectoryClaim> ClaimRunDirectory(const RunDirectoryRequest& request,
                                              const std::function<std::string(const std::string& job)>& manifest_for_job);

}  // namespace stepscope::launcher
