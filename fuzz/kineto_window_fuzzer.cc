// libFuzzer target: bytes -> ConvertKinetoWindow (the trace an operators detail window saves is
// read back by stepscope's own C++, src/importers/kineto/kineto_window_converter.h). Each input is
// tried as a whole trace and wrapped as the body of {"traceEvents": [ ... ]}, as
// kineto_importer_fuzzer does, so mutated events reach the converter without rebuilding the
// envelope.
//
// Besides "no crash, no ASan/UBSan report" it traps when a property the document's readers rely
// on fails:
//   - a failed conversion is one line that names the input;
//   - events are ordered by (start, -end), end >= start, cpu_ns = end - start,
//     0 <= self_cpu_ns <= cpu_ns, 0 <= self_device_ns <= device_ns; at most max_events kept;
//   - every host event is counted once in the operators table (python functions aside);
//   - the payload is valid JSON, escapes and shapes included.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "importers/kineto/kineto_window_converter.h"
#include "importers/kineto/kineto_window_writer.h"

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
constexpr size_t kMaxEvents = 64;

void Convert(std::string bytes) {
  const size_t size = bytes.size();
  bytes.reserve(size + simdjson::SIMDJSON_PADDING);
  // A clock that moves the trace by a little over a day: conversions near the int64 edges
  // must skip events, not wrap.
  const KinetoWindowClock clock{1'000'000'000, 1'000'000'000 + 90'000'000'000'000};
  auto window = ConvertKinetoWindow(kName, simdjson::padded_string_view(bytes.data(), size, bytes.capacity()), clock,
                                    kMaxEvents);
  if (!window.ok()) {
    FUZZ_CHECK(window.status().message().starts_with(kName));
    FUZZ_CHECK(window.status().message().find('\n') == std::string::npos);
    return;
  }
  FUZZ_CHECK(window->events.size() <= kMaxEvents);
  FUZZ_CHECK(window->device_events.size() <= kMaxEvents);
  FUZZ_CHECK(static_cast<int64_t>(window->events.size()) <= window->events_total);
  for (size_t i = 0; i < window->events.size(); ++i) {
    const WindowHostEvent& event = window->events[i];
    FUZZ_CHECK(event.end_ns >= event.start_ns);
    FUZZ_CHECK(event.cpu_ns == event.end_ns - event.start_ns);
    FUZZ_CHECK(event.self_cpu_ns >= 0 && event.self_cpu_ns <= event.cpu_ns);
    FUZZ_CHECK(event.self_device_ns >= 0 && event.self_device_ns <= event.device_ns);
    if (i > 0) {
      const WindowHostEvent& before = window->events[i - 1];
      FUZZ_CHECK(before.start_ns < event.start_ns ||
                 (before.start_ns == event.start_ns && before.end_ns >= event.end_ns));
    }
  }
  int64_t calls = 0;
  for (const WindowOperatorRow& row : window->operators) {
    FUZZ_CHECK(row.calls > 0 && row.self_cpu_ns >= 0 && row.self_device_ns >= 0);
    calls += row.calls;
  }
  FUZZ_CHECK(calls <= window->events_total + window->device_events_total);
  const nlohmann::json payload =
      nlohmann::json::parse("{" + OperatorsPayloadJson(*window) + "}", nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!payload.is_discarded());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Convert(std::string(bytes));
  std::string wrapped = "{\"traceEvents\": [";
  wrapped.append(bytes);
  wrapped.append("], \"baseTimeNanoseconds\": 1700000000000000000}");
  Convert(std::move(wrapped));
  return 0;
}
