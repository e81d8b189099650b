// libFuzzer target for the control-file reader (src/launcher/control_watcher.h): the launcher applies
// <node>/control/<sequence>.json files that `stepscope ctl` writes, but anyone who can write to
// the run directory can put any bytes there, and the launcher runs beside the training job. The
// input is written as control/1.json and one poll of a fresh watcher applies it.
//
// Besides "no crash, no ASan report" it traps when a property fails:
//   - every file handled gets exactly one manifest entry, with its sequence and the time it
//     was applied;
//   - a refused file's error is one line that names the file; a refused file changes nothing;
//   - an applied interval is within the allowed range and reaches the sampler.
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/wait_clock.h"
#include "launcher/control_watcher.h"
#include "launcher/run_config.h"
#include "fuzz_inputs.h"
#include "fuzz_scratch.h"

namespace {

std::string* g_node_dir = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Every input is written to a file.
  const std::string pattern = stepscope::fuzz::MakeScratchDirOrAbort("control");
  g_node_dir = new std::string(pattern);
  if (mkdir((pattern + "/control").c_str(), 0755) != 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope;
  const std::string path = *g_node_dir + "/control/1.json";
  fuzz::WriteFileOrAbort(path, std::string_view(reinterpret_cast<const char*>(data), size));
  constexpr int64_t kInitialIntervalNs = 500'000'000;
  std::optional<int64_t> applied_interval_ns;
  std::vector<nlohmann::json> entries;
  {
    launcher::ControlWatcher watcher(
        *g_node_dir, kInitialIntervalNs,
        [&](int64_t interval_ns) {
          applied_interval_ns = interval_ns;
          return OkStatus();
        },
        [&](const nlohmann::json& entry) { entries.push_back(entry); });
    watcher.PollOnce();
  }
  FUZZ_CHECK(entries.size() == 1);
  const nlohmann::json& entry = entries[0];
  FUZZ_CHECK(entry.value("sequence", int64_t{0}) == 1);
  FUZZ_CHECK(entry.contains("applied_at_ns"));
  const nlohmann::json& changes = entry.at("changes");
  if (entry.contains("error")) {
    const std::string error = entry.at("error").get<std::string>();
    FUZZ_CHECK(error.find(path) != std::string::npos);
    FUZZ_CHECK(error.find('\n') == std::string::npos);
    FUZZ_CHECK(changes.empty());
    FUZZ_CHECK(!applied_interval_ns);
  } else if (changes.contains("interval_ns")) {
    FUZZ_CHECK(applied_interval_ns && changes.at("interval_ns").get<int64_t>() == *applied_interval_ns);
    FUZZ_CHECK(*applied_interval_ns >= launcher::kMinIntervalNs && *applied_interval_ns <= launcher::kMaxIntervalNs);
    FUZZ_CHECK(changes.at("previous_interval_ns").get<int64_t>() == kInitialIntervalNs);
  } else {
    FUZZ_CHECK(!applied_interval_ns);
  }
  return 0;
}
