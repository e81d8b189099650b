// libFuzzer target for the config-file reader of `stepscope run` (src/launcher/run_config.h): a
// stepscope.toml or stepscope.json a user wrote by hand, or copied from somewhere. The first
// byte picks the format; the rest is the file's text, applied over the defaults and then
// resolved as `stepscope run` does (detail windows, the rules' parameters, the config.json the
// job's processes read).
//
// Besides "no crash, no ASan report" it traps when a property fails:
//   - a refused file is one line that names the file;
//   - an accepted file gives an interval within the allowed range, and the config the launcher
//     writes for the job is valid JSON.
#include <cstdint>
#include <string>
#include <string_view>

#include "launcher/run_config.h"
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::launcher;
  if (size == 0) return 0;
  const std::string path = data[0] & 1 ? "fuzz/stepscope.json" : "fuzz/stepscope.toml";
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  RunConfig config;
  stepscope::Status status = ApplyRunConfigText(config, text, path);
  if (status.ok()) status = ValidateRunConfigRules(config, "config file '" + path + "'");
  if (!status.ok()) {
    FUZZ_CHECK(status.message().find(path) != std::string::npos);
    FUZZ_CHECK(status.message().find('\n') == std::string::npos);
    return 0;
  }
  FUZZ_CHECK(config.interval_ns >= kMinIntervalNs && config.interval_ns <= kMaxIntervalNs);
  (void)ResolvedDetailWindows(config);
  const std::string written = RunConfigToJson(config, "job", "node").dump();
  FUZZ_CHECK(!nlohmann::json::parse(written, nullptr, /*allow_exceptions=*/false).is_discarded());
  return 0;
}
