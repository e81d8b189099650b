// libFuzzer target: bytes -> KinetoImporter::AddBytes (PyTorch profiler traces are untrusted
// files too, STYLE.md §6). Each input is tried twice: as a whole file (JSON object, bare legacy
// array, or gzip of either), and wrapped as the body of {"traceEvents": [ ... ]} so that mutated
// events reach the event parser without the fuzzer having to rebuild the envelope.
//
// Besides "no crash, no ASan/UBSan report" it checks what the model's users rely on, and traps
// when one fails:
//   - a failed import is one line that names the input;
//   - every flow points at two real events; every event's args lie inside Model::args;
//   - spans never end before they start; instants and counters have no length;
//   - steps are events of a Step:ModeKeys phase with a step number;
//   - every event's node exists, and every problem names the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "importers/kineto/kineto_importer.h"

#define FUZZ_CHECK(condition)                                                               \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

namespace {

using namespace stepscope::analysis;

constexpr std::string_view kName = "fuzz.pt.trace.json";

void CheckModel(const Model& model) {
  const size_t event_count = model.events().size();
  for (const Flow& flow : model.flows()) {
    FUZZ_CHECK(flow.from < event_count);
    FUZZ_CHECK(flow.to < event_count);
  }
  for (const FrameworkEvent& event : model.events()) {
    FUZZ_CHECK(event.node < model.nodes().size());
    FUZZ_CHECK(event.end_ns >= event.start_ns);
    if (event.kind != EventKind::kSpan) FUZZ_CHECK(event.end_ns == event.start_ns);
    const auto args = model.Args(event);
    FUZZ_CHECK(args.size() == event.arg_count);
    for (const EventArg& arg : args) FUZZ_CHECK(arg.key < model.strings().size());
  }
  for (uint32_t index : model.steps()) {
    FUZZ_CHECK(index < event_count);
    FUZZ_CHECK(model.String(model.events()[index].phase).starts_with("Step:ModeKeys."));
    FUZZ_CHECK(model.events()[index].step >= 0);
  }
  for (const Problem& problem : model.problems()) {
    FUZZ_CHECK(!problem.name.empty() && problem.count > 0);
    FUZZ_CHECK(problem.sentence.find(kName) != std::string::npos);
    FUZZ_CHECK(problem.sentence.find('\n') == std::string::npos);
  }
}

void Import(std::string_view bytes) {
  KinetoImporter importer;
  const stepscope::Status status = importer.AddBytes(kName, bytes);
  if (!status.ok()) {
    FUZZ_CHECK(status.message().starts_with(kName));
    FUZZ_CHECK(status.message().find('\n') == std::string::npos);
    return;
  }
  const Model model = std::move(importer).Finish();
  CheckModel(model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Import(bytes);
  std::string wrapped = "{\"traceEvents\": [";
  wrapped.append(bytes);
  wrapped.append("], \"baseTimeNanoseconds\": 1700000000000000000}");
  Import(wrapped);
  return 0;
}
