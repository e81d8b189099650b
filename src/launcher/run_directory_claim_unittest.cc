#include "launcher/run_directory_claim.h"

#include <gtest/gtest.h>

#include "base/file_system.h"
#include "base/test/temp_directory.h"

namespace stepscope::launcher {
namespace {

std::string ManifestOf(const std::string& job) { return "{\"job\": \"" + job + "\"}\n"; }

std::string ReadManifest(const std::string& node_dir) {
  auto text = ReadRegularFile(node_dir + "/manifest.json", Symlinks::kRefuse);
  return text.ok() ? *text : text.status().message();
}

TEST(ClaimRunDirectory, CreatesTheNodeDirectoryWithItsFirstManifest) {
  TempDirectory out;
  auto claim = ClaimRunDirectory({out.Path("runs"), "train", "algo-1", false}, ManifestOf);
  ASSERT_TRUE(claim.ok()) << claim.status().message();
  EXPECT_EQ(claim->job, "train");
  EXPECT_EQ(claim->node_dir, out.Path("runs/train/algo-1"));
  EXPECT_EQ(ReadManifest(claim->node_dir), ManifestOf("train"));
}

TEST(ClaimRunDirectory, TheSameDefaultJobNameTwiceGivesTheSecondLauncherItsOwnDirectory) {
  TempDirectory out;
  const RunDirectoryRequest request{out.path(), "train-20261121T101500Z", "algo-1", /*job_is_default=*/true};
  auto first = ClaimRunDirectory(request, ManifestOf);
  auto second = ClaimRunDirectory(request, ManifestOf);
  auto third = ClaimRunDirectory(request, ManifestOf);
  ASSERT_TRUE(first.ok() && second.ok() && third.ok());
  EXPECT_EQ(first->job, "train-20261121T101500Z");
  EXPECT_EQ(second->job, "train-20261121T101500Z-2");
  EXPECT_EQ(third->job, "train-20261121T101500Z-3");
  // Each manifest names its own job, and the first is untouched.
  EXPECT_EQ(ReadManifest(first->node_dir), ManifestOf("train-20261121T101500Z"));
  EXPECT_EQ(ReadManifest(second->node_dir), ManifestOf("train-20261121T101500Z-2"));
}

TEST(ClaimRunDirectory, AJobNameTheUserChoseIsNeverReusedNorChanged) {
  TempDirectory out;
  const RunDirectoryRequest request{out.path(), "exp1", "n", /*job_is_default=*/false};
  ASSERT_TRUE(ClaimRunDirectory(request, ManifestOf).ok());
  auto second = ClaimRunDirectory(request, [](const std::string&) { return std::string("{\"job\": \"other\"}\n"); });
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "'" + out.Path("exp1/n") +
                                           "' already holds a run (it has a manifest.json), and two runs never share "
                                           "a directory; pass another --job NAME or --out DIR");
  EXPECT_EQ(ReadManifest(out.Path("exp1/n")), ManifestOf("exp1"));
}

TEST(ClaimRunDirectory, OtherNodesOfAJobClaimTheirOwnDirectories) {
  TempDirectory out;
  ASSERT_TRUE(ClaimRunDirectory({out.path(), "multi", "algo-1", false}, ManifestOf).ok());
  auto second_node = ClaimRunDirectory({out.path(), "multi", "algo-2", false}, ManifestOf);
  ASSERT_TRUE(second_node.ok()) << second_node.status().message();
  EXPECT_EQ(second_node->node_dir, out.Path("multi/algo-2"));
}

TEST(ClaimRunDirectory, AnUnwritableOutputDirectorySaysToChooseAnother) {
  TempDirectory out;
  ASSERT_TRUE(WriteFileAtomically(out.Path("file"), "not a directory").ok());
  auto claim = ClaimRunDirectory({out.Path("file/runs"), "j", "n", true}, ManifestOf);
  ASSERT_FALSE(claim.ok());
  EXPECT_NE(claim.status().message().find("choose a writable --out"), std::string::npos) << claim.status().message();
}

}  // namespace
}  // namespace stepscope::launcher
