// Converts the trace of one operators detail window — the Chrome trace JSON that torch 2.x's
// `kineto_results.save()` (= `export_chrome_trace`) writes — into the operators payload of the
// window's detail document (docs/detail-windows.md, "operators"), reading the profile the way
// torch's own FunctionEvents and `key_averages()` do, so no Python walks the events:
//
//   - host events: the trace's X events on host threads (cpu_op, user_annotation, cuda_runtime,
//     cuda_driver, python_function, ...), without Kineto's own "Trace" span and the utility ops
//     torch hides (profiler_util._filter_name: aten::is_leaf, aten::output_nr, ...);
//   - the tree: per (pid, tid), an event's parent is the innermost event that contains it
//     (EventList._populate_cpu_children), then a child named as its parent that is the parent's
//     only child is folded into it (EventList._remove_dup_nodes);
//   - kernels (kernel, gpu_memcpy, gpu_memset) belong to the innermost operator (cpu_op,
//     user_annotation) around the runtime call that launched them: the launch comes from the
//     ac2g flows, else args.correlation (kineto_flow_linker.h). torch links them through the
//     operator's correlation id, which names that same operator. A launch outside any operator
//     keeps its kernels on the runtime call;
//   - cpu_ns = duration, self_cpu_ns = duration - children's; device_ns = own kernels +
//     children's device_ns, self_device_ns = own kernels; self times floored at 0;
//   - operators = key_averages(): per (name, host or device, user annotation), python_function
//     events left out (torch's default), by self CPU time.
// Differences from FunctionEvents: `tid` is the trace's (the OS thread id, not torch's small
// thread number), and `async` is never set (the trace does not say).
//
// Times become Unix-epoch ns: trace time (ts, plus baseTimeNanoseconds when ts is relative to
// it) - clock.trace_start_ns + clock.unix_start_ns.
//
// A pure function of its input, safe on any thread. Callers: kineto_window_writer.cc, its tests,
// fuzz/kineto_window_fuzzer.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "base/status.h"

namespace stepscope::analysis {

// Where the trace's clock lies on the Unix clock: the profiler's trace start, as the trace
// clock (kineto_results.trace_start_ns()) and as Unix ns (python/stepscope/torch/_operators.py
// chooses it: the same value, or a bracket around __enter__ when the clocks differ).
struct KinetoWindowClock {
  int64_t trace_start_ns = 0;
  int64_t unix_start_ns = 0;
};

struct WindowKernel {
  std::string name;
  int64_t device = 0;
  int64_t duration_ns = 0;
};

struct WindowHostEvent {
  std::string name;
  int64_t tid = 0;
  int64_t start_ns = 0;  // Unix
  int64_t end_ns = 0;
  int64_t cpu_ns = 0;
  int64_t self_cpu_ns = 0;
  std::string shapes_json = "[]";  // args "Input Dims", compact: "[[4,8],[16,8],[16]]"
  int64_t correlation = -1;        // a runtime call that launched device work: the launch's id
  bool has_device_time = false;    // device_ns != 0 or kernels: the document's device fields
  int64_t device_ns = 0;
  int64_t self_device_ns = 0;
  std::vector<WindowKernel> kernels;
};

struct WindowDeviceEvent {
  std::string name;
  int64_t device = 0;
  int64_t stream = 0;
  int64_t start_ns = 0;  // Unix
  int64_t end_ns = 0;
  int64_t correlation = -1;  // the launch's id (WindowHostEvent::correlation); -1 when unlinked
};

struct WindowOperatorRow {
  std::string name;
  int64_t calls = 0;
  int64_t cpu_ns = 0;
  int64_t self_cpu_ns = 0;
  bool has_device_time = false;  // device_ns != 0
  int64_t device_ns = 0;
  int64_t self_device_ns = 0;
};

struct OperatorsWindow {
  std::vector<WindowHostEvent> events;          // by (start, -end); the earliest max_events
  int64_t events_total = 0;
  std::vector<WindowDeviceEvent> device_events;  // by start; the earliest max_events
  int64_t device_events_total = 0;
  std::vector<WindowOperatorRow> operators;     // every event, not only the kept ones
  bool has_distributed_info = false;            // the trace names its rank (distributedInfo)
  std::vector<std::string> problems;            // what was skipped, one line each
};

// `trace` must have simdjson::SIMDJSON_PADDING readable bytes past its end; `name` labels
// errors. Errors: DataLoss for bytes that are not a whole JSON trace (cut short, corrupt),
// InvalidArgument for JSON that is not a Kineto trace.
StatusOr<OperatorsWindow> ConvertKinetoWindow(std::string_view name, simdjson::padded_string_view trace,
                                              const KinetoWindowClock& clock, size_t max_events);

// Input Dims as written ("[[4, 8], [16, 8], []]") -> compact JSON of nested integer lists
// ("[[4,8],[16,8],[]]"); false (and `out` untouched) for anything else or nesting past 4 levels.
bool NormalizeShapes(std::string_view input_dims, std::string* out);

}  // namespace stepscope::analysis
