// libFuzzer target for the node manifest's readers: its one reader (src/store/run_manifest.h),
// whose clock anchor and status the run decoder (src/analysis/run_decoder.h) converts times and
// tells the streams still written with, and the stepscope loader
// (src/analysis/stepscope_loader.h, which takes the node's facts: instance, cores, GPUs,
// status). A manifest is rewritten by the launcher while the job runs and can be cut by a
// crash or edited by hand. The input is written as <job>/n1/manifest.json beside a valid,
// empty system stream, and the job is loaded as every command loads it.
//
// Besides "no crash, no ASan report" it traps when a property fails:
//   - a refused run is one line;
//   - a loaded run has the node, with counts that are not negative and GPU memory sizes that
//     are all there or absent.
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "analysis/run_loader.h"
#include "fuzz_inputs.h"
#include "fuzz_scratch.h"

namespace {

std::string* g_job_dir = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  using namespace stepscope;
  // Every input is written to a file.
  const std::string pattern = stepscope::fuzz::MakeScratchDirOrAbort("manifest");
  g_job_dir = new std::string(pattern);
  if (mkdir((pattern + "/n1").c_str(), 0755) != 0) std::abort();
  const std::string log = fuzz::BuildLog(fuzz::LogSpec(
      {{static_cast<uint8_t>(store::FrameType::kMeta),
        R"({"kind":"system","pid":7,"ticks_per_ns":1.0,"clock_anchor":{"monotonic_ns":5,"realtime_ns":9}})"},
       {static_cast<uint8_t>(store::FrameType::kStats), R"({"events_dropped":0,"compacted":true})"}}));
  fuzz::WriteFileOrAbort(pattern + "/n1/system.log", log);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope;
  fuzz::WriteFileOrAbort(*g_job_dir + "/n1/manifest.json", std::string_view(reinterpret_cast<const char*>(data), size));
  auto model = analysis::LoadRun(*g_job_dir);
  if (!model.ok()) {
    FUZZ_CHECK(model.status().message().find('\n') == std::string::npos);
    return 0;
  }
  FUZZ_CHECK(model->nodes().size() == 1);
  for (const analysis::NodeFacts& node : model->nodes()) {
    FUZZ_CHECK(node.instance_count >= 0 && node.cpu_cores >= 0 && node.gpu_count >= 0);
    FUZZ_CHECK(node.gpu_memory_bytes.empty() || node.gpu_memory_bytes.size() == static_cast<size_t>(node.gpu_count));
  }
  return 0;
}
