#include "launcher/torchrun_command.h"

#include <gtest/gtest.h>

namespace stepscope::launcher {
namespace {

TEST(TorchrunCommandTest, ReadsNodesAndNodeRankInEitherSpelling) {
  TorchrunShape shape = ParseTorchrunCommand({"torchrun", "--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "4",
                                              "--rdzv-endpoint", "10.0.0.1:29400", "train.py"});
  EXPECT_EQ(shape.nodes_expected, 2);
  EXPECT_EQ(shape.node_rank, 1);
  shape = ParseTorchrunCommand({"/venv/bin/torchrun", "--nnodes=3", "--node_rank=0", "train.py"});
  EXPECT_EQ(shape.nodes_expected, 3);
  EXPECT_EQ(shape.node_rank, 0);
}

TEST(TorchrunCommandTest, ReadsThePythonModuleForms) {
  TorchrunShape shape = ParseTorchrunCommand({"python3", "-m", "torch.distributed.run", "--nnodes", "2", "t.py"});
  EXPECT_EQ(shape.nodes_expected, 2);
  EXPECT_EQ(shape.node_rank, -1);
  EXPECT_EQ(ParseTorchrunCommand({"python", "-m", "torch.distributed.launch", "--nnodes=4", "t.py"}).nodes_expected, 4);
}

TEST(TorchrunCommandTest, AnElasticRangeNeedsItsMinimum) {
  EXPECT_EQ(ParseTorchrunCommand({"torchrun", "--nnodes", "1:4", "train.py"}).nodes_expected, 1);
  EXPECT_EQ(ParseTorchrunCommand({"torchrun", "--nnodes=2:8", "train.py"}).nodes_expected, 2);
}

TEST(TorchrunCommandTest, TheScriptsOwnArgumentsAreNotTorchruns) {
  TorchrunShape shape = ParseTorchrunCommand({"torchrun", "--standalone", "train.py", "--nnodes", "9", "--node-rank", "5"});
  EXPECT_EQ(shape.nodes_expected, 0);
  EXPECT_EQ(shape.node_rank, -1);
  EXPECT_EQ(ParseTorchrunCommand({"torchrun", "-m", "pkg.train", "--nnodes", "9"}).nodes_expected, 0);
}

TEST(TorchrunCommandTest, OtherCommandsAndBadValuesHaveNoShape) {
  EXPECT_EQ(ParseTorchrunCommand({"python3", "train.py", "--nnodes", "2"}).nodes_expected, 0);
  EXPECT_EQ(ParseTorchrunCommand({"torchrun", "--nnodes", "two", "--node-rank", "-1", "t.py"}).nodes_expected, 0);
  EXPECT_EQ(ParseTorchrunCommand({"torchrun", "--nnodes"}).nodes_expected, 0);
  EXPECT_EQ(ParseTorchrunCommand({}).node_rank, -1);
}

}  // namespace
}  // namespace stepscope::launcher
