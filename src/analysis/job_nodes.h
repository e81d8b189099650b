// Problems of a job's nodes as a whole (docs/multi-node.md), shown by the report, the dashboard,
// `stepscope info` and every command like any other problem (problem.h):
//   node_never_started    the launch command said N nodes (torchrun --nnodes) and fewer node
//                         directories hold a manifest; which node ranks are missing, when known
//   ranks_missing         processes saw WORLD_SIZE ranks and some rank recorded nothing (a node
//                         that ran without stepscope, or whose processes never started)
//   node_stopped_early    a node's launcher never finished its manifest while another node's did,
//                         and its data stops before theirs: the node was lost (killed, crashed,
//                         cut off from the storage) at that time; its data up to then is complete
//   node_clock_unaligned  in a job of several nodes, a node whose clock was not put on the
//                         reference node's time axis, and why (clock_alignment.h); info when the
//                         job recorded no alignment at all or an alignment came too late to apply
// Recomputed at every refresh of a live run: RemoveProblems(IsJobNodeProblem) first.
//
// Threading: none.
#pragma once

#include <string_view>
#include <vector>

#include "analysis/model.h"

namespace stepscope::analysis {

bool IsJobNodeProblem(std::string_view name);

void AddJobNodeProblems(const std::vector<NodeFacts>& nodes, const std::vector<StreamFacts>& streams,
                        ModelBuilder& builder);

}  // namespace stepscope::analysis
