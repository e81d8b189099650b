#include "launcher/finished_outputs.h"

#include "store/run_directory.h"
#include "store/run_manifest.h"

namespace stepscope::launcher {

FinishedOutputs PlanFinishedOutputs(const std::string& job_dir, const std::string& node) {
  FinishedOutputs plan;
  auto nodes = store::FindRunNodes(job_dir);
  if (!nodes.ok()) return plan;
  for (const store::RunNode& other : nodes->nodes) {
    if (other.name == node) continue;
    auto manifest = store::ReadRunManifest(other.path);
    // A directory without a readable manifest is no launcher's (FindRunNodes took it for its
    // streams): it cannot finish, so it neither waits for nor makes this node the last.
    if (!manifest.ok()) continue;
    plan.only_node = false;
    if (!store::IsFinal(manifest->status)) {
      plan.last_node = false;
      plan.unfinished_nodes.push_back(other.name);
    }
  }
  return plan;
}

}  // namespace stepscope::launcher
