// Which end-of-run outputs a node's launcher writes, so that the nodes of one job on shared
// storage never write the same file and need no lock across machines (docs/formats.md, "Run
// directory"):
//   - a job with one node: the node's outputs are the job's, <job>/rules/ and <job>/report.html;
//   - a job with several: each launcher writes <job>/<node>/rules/ (live) and
//     <job>/<node>/report.html, and the launcher that finishes last — every other node's manifest
//     already final when its own is — also writes the job's, over every node's data.
// Each launcher decides after writing its own final manifest, so of two that finish together
// at least one sees the other final; both writing the job's outputs is harmless (each file is
// replaced whole, by rename, with the same content).
//
// Callers: launcher/run_job.cc at the job's end. Threading: none; reads manifests only.
#pragma once

#include <string>
#include <vector>

namespace stepscope::launcher {

struct FinishedOutputs {
  bool only_node = true;   // no other node directory in the job (yet)
  bool last_node = true;   // every other node's manifest is final (true when only_node)
  std::vector<std::string> unfinished_nodes;  // other nodes still starting or running
};

// `job_dir` holds `node`'s directory, whose final manifest is written.
FinishedOutputs PlanFinishedOutputs(const std::string& job_dir, const std::string& node);

}  // namespace stepscope::launcher
