// libFuzzer target for the model-file decoder (src/analysis/model_file.h): the file `stepscope
// import` writes and rules, report and info load later. A copied, cut or damaged file is
// untrusted bytes like any other. Inputs are raw files or "built" ones (fuzz/model_file_input.h)
// whose sections the harness compresses, so mutations reach the column decoders.
//
// Besides "no crash, no ASan report" it traps when a property the analysis relies on fails:
//   - a failed load is one line that names the file;
//   - a loaded model only holds indices that exist: events' nodes and strings, args, flows,
//     steps, series; events are ordered (start, -end); series times ascend;
//   - what loads encodes again, and that encoding decodes and re-encodes to the same bytes.
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/model_file.h"
#include "model_file_input.h"

namespace {

using namespace stepscope::analysis;

const std::string kName = "fuzz/model.stepscope";

void CheckModel(const Model& model) {
  const size_t event_count = model.events().size();
  const size_t string_count = model.strings().size();
  for (size_t i = 0; i < event_count; ++i) {
    const FrameworkEvent& event = model.events()[i];
    FUZZ_CHECK(event.node < model.nodes().size());
    FUZZ_CHECK(event.name < string_count && event.phase < string_count);
    FUZZ_CHECK(event.end_ns >= event.start_ns);
    if (i > 0) {
      const FrameworkEvent& before = model.events()[i - 1];
      FUZZ_CHECK(before.start_ns < event.start_ns ||
                 (before.start_ns == event.start_ns && before.end_ns >= event.end_ns));
    }
    const auto args = model.Args(event);
    FUZZ_CHECK(args.size() == event.arg_count);
    for (const EventArg& arg : args) FUZZ_CHECK(arg.key < string_count);
  }
  for (const Flow& flow : model.flows()) FUZZ_CHECK(flow.from < event_count && flow.to < event_count);
  for (uint32_t index : model.steps()) FUZZ_CHECK(index < event_count);
  for (const SystemSeries& series : model.series()) {
    FUZZ_CHECK(series.node < model.nodes().size());
    FUZZ_CHECK(series.time_ns.size() == series.value.size());
    for (size_t i = 1; i < series.time_ns.size(); ++i) FUZZ_CHECK(series.time_ns[i - 1] <= series.time_ns[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::fuzz;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string file = data[0] & kRawModelFile ? std::string(rest) : BuildModelFile(rest);
  auto model = DecodeModelFile(file, kName);
  if (!model.ok()) {
    FUZZ_CHECK(model.status().message().starts_with(kName));
    FUZZ_CHECK(model.status().message().find('\n') == std::string::npos);
    return 0;
  }
  CheckModel(*model);
  const std::string encoded = EncodeModelFile(*model);
  auto again = DecodeModelFile(encoded, kName);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(EncodeModelFile(*again) == encoded);
  return 0;
}
