// The shape of a multi-node job as its launch command says it: `torchrun --nnodes 2
// --node-rank 1 train.py` (or `python -m torch.distributed.run` / `.launch`) needs two nodes and
// this launcher runs the second. The launcher records it in the node manifest, so that a node
// that never started is a problem the report names (analysis/job_nodes.h) even when no process
// of the job ever ran on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope::launcher {

struct TorchrunShape {
  int32_t nodes_expected = 0;  // 0: not a torchrun command, or no fixed node count
  int32_t node_rank = -1;      // -1: not given
};

// Reads torchrun's --nnodes (N, or MIN:MAX: MIN nodes are needed) and --node-rank / --node_rank
// from the options before the training script (the first argument ending in ".py", or after
// -m / --module). Anything else: the default shape.
TorchrunShape ParseTorchrunCommand(const std::vector<std::string>& command);

}  // namespace stepscope::launcher
