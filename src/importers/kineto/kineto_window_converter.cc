#include "importers/kineto/kineto_window_converter.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/model.h"
#include "importers/kineto/kineto_file_parser.h"
#include "importers/kineto/kineto_flow_linker.h"

namespace stepscope::analysis {
namespace {

constexpr int32_t kNone = -1;
constexpr int kMaxShapeDepth = 4;  // shapes of a tensor list are two levels; leave some room

// profiler_util._filter_name: utility ops torch leaves out of FunctionEvents.
constexpr std::string_view kHiddenNames[] = {
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
};

enum class Role : uint8_t {
  kSkip,
  kOperator,  // cpu_op, user_annotation (and the legacy array's uncategorised events): own kernels
  kHost,      // other host work: cuda_runtime, cuda_driver, python_function, overhead, ...
  kDevice,    // device-side events without a launch: gpu_user_annotation, cuda_sync, cuda_profiler_range
  kLaunched,  // kernel, gpu_memcpy, gpu_memset: launched by a runtime call
};

Role RoleOf(std::string_view category) {
  if (category.empty() || category == "cpu_op" || category == "user_annotation") return Role::kOperator;
  if (category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset") return Role::kLaunched;
  if (category == "gpu_user_annotation" || category == "cuda_sync" || category == "cuda_profiler_range") {
    return Role::kDevice;  // on the device's tracks (pid = device, tid = stream)
  }
  if (category == "Trace") return Role::kSkip;  // Kineto's span of the whole session
  return Role::kHost;
}

// One host event while the tree is built.
struct Node {
  uint32_t file_index = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t start_ns = 0;  // Unix
  int64_t end_ns = 0;
  StringId key = 0;      // the name torch aggregates by (ProfilerStep#N -> ProfilerStep*)
  bool is_operator = false;
  bool user_annotation = false;
  bool python_function = false;
  bool removed = false;  // folded into its same-named parent
  int32_t parent = kNone;
  std::vector<uint32_t> children;  // indices into the node vector
  std::vector<uint32_t> kernels;   // indices into the device vector
  int64_t device_ns = 0;
  int64_t correlation = -1;        // a launch: the id of its ac2g flow, which its device work carries
};

struct Device {
  uint32_t file_index = 0;
  int64_t device = 0;
  int64_t stream = 0;
  int64_t correlation = -1;  // the ac2g flow that launched it
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  StringId name = 0;
  bool user_annotation = false;
};

bool Earlier(const Node& a, const Node& b) {
  return std::tie(a.start_ns, b.end_ns, a.file_index) < std::tie(b.start_ns, a.end_ns, b.file_index);
}

// EventList._populate_cpu_children over `order` (one thread's nodes, sorted by Earlier): a stack
// of open parents; an event that starts at or after the top's end, or ends after it, pops it.
void BuildThreadTree(std::vector<Node>& nodes, const std::vector<uint32_t>& order) {
  std::vector<uint32_t> open;
  for (uint32_t index : order) {
    Node& node = nodes[index];
    while (!open.empty()) {
      const Node& parent = nodes[open.back()];
      if (node.start_ns >= parent.end_ns || node.end_ns > parent.end_ns) {
        open.pop_back();
        continue;
      }
      node.parent = static_cast<int32_t>(open.back());
      nodes[open.back()].children.push_back(index);
      break;
    }
    open.push_back(index);
  }
}

// EventList._remove_dup_nodes: while some event has a parent of the same name whose only child
// it is, the parent takes over its children and kernels and the event goes. Each pass decides
// on the state left by the events before it in the pass, as torch's loop does.
void RemoveDuplicateNodes(std::vector<Node>& nodes, const std::vector<uint32_t>& order) {
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<uint32_t> removed_now;
    for (uint32_t index : order) {
      Node& node = nodes[index];
      if (node.removed || node.parent == kNone) continue;
      Node& parent = nodes[node.parent];
      if (parent.key != node.key || parent.children.size() != 1) continue;
      parent.children = node.children;
      parent.kernels = node.kernels;  // torch replaces the parent's kernels with the child's
      for (uint32_t child : node.children) nodes[child].parent = node.parent;
      removed_now.push_back(index);
    }
    for (uint32_t index : removed_now) nodes[index].removed = true;
    changed = !removed_now.empty();
  }
}

int64_t FloorAtZero(int64_t value) { return value < 0 ? 0 : value; }

}  // namespace

bool NormalizeShapes(std::string_view in, std::string* out) {
  enum class Expect : uint8_t { kValueOrClose, kValue, kCommaOrClose };
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  std::string result;
  result.reserve(in.size());
  size_t i = 0;
  const size_t n = in.size();
  auto skip_spaces = [&] {
    while (i < n && is_space(in[i])) ++i;
  };
  skip_spaces();
  if (i >= n || in[i] != '[') return false;
  result += '[';
  ++i;
  int depth = 1;
  Expect expect = Expect::kValueOrClose;
  while (depth > 0) {
    skip_spaces();
    if (i >= n) return false;
    const char c = in[i];
    if (expect == Expect::kCommaOrClose) {
      if (c == ',') {
        expect = Expect::kValue;
      } else if (c == ']') {
        --depth;
      } else {
        return false;
      }
      result += c;
      ++i;
      continue;
    }
    if (c == ']' && expect == Expect::kValueOrClose) {
      result += c;
      ++i;
      --depth;
      expect = Expect::kCommaOrClose;
      continue;
    }
    if (c == '[') {
      if (++depth > kMaxShapeDepth) return false;
      result += c;
      ++i;
      expect = Expect::kValueOrClose;
      continue;
    }
    // An integer as JSON writes it: -?(0|[1-9][0-9]*), at most 19 digits (int64).
    const size_t begin = i;
    if (c == '-') ++i;
    const size_t digits = i;
    while (i < n && in[i] >= '0' && in[i] <= '9') ++i;
    const size_t count = i - digits;
    if (count == 0 || count > 19 || (count > 1 && in[digits] == '0')) return false;
    result.append(in.substr(begin, i - begin));
    expect = Expect::kCommaOrClose;
  }
  skip_spaces();
  if (i != n) return false;
  *out = std::move(result);
  return true;
}

StatusOr<OperatorsWindow> ConvertKinetoWindow(std::string_view name, simdjson::padded_string_view trace,
                                              const KinetoWindowClock& clock, size_t max_events) {
  // The parser interns through a builder; the builder's model is used for its strings only.
  ModelBuilder builder(ModelSource::kKineto);
  const StringId ac2g = builder.Intern("ac2g");
  const StringId legacy_ac2g = builder.Intern("async_cpu_to_gpu");
  const StringId step_key = builder.Intern("ProfilerStep*");
  KinetoFile file;
  {
    KinetoFileParser parser(builder);
    STEPSCOPE_RETURN_IF_ERROR(parser.Parse(name, trace, /*input_truncated=*/false, &file));
  }
  if (file.truncated) {
    return DataLossError(std::string(name) + ": the trace ends early (cut short after " +
                         std::to_string(file.parsed_bytes) + " bytes); torch's profiler did not finish saving it");
  }
  FlowLinkStats flow_stats;
  const std::vector<StagedFlow> flows = LinkKinetoFlows(file, ac2g, legacy_ac2g, &flow_stats);
  const Model strings = std::move(builder).Finish();

  OperatorsWindow window;
  window.has_distributed_info = !file.distributed_info_json.empty();
  for (Problem& problem : file.problems) window.problems.push_back(std::move(problem.sentence));

  // Trace time -> Unix: the importer's rule for baseTimeNanoseconds (kineto_importer.cc), then
  // the profiler's trace start onto the Unix clock.
  int64_t min_start_ns = INT64_MAX;
  for (const StagedEvent& staged : file.events) min_start_ns = std::min(min_start_ns, staged.event.start_ns);
  const int64_t base_ns = file.has_base_time && min_start_ns < file.base_time_ns ? file.base_time_ns : 0;
  int64_t offset_ns = 0;
  if (__builtin_sub_overflow(clock.unix_start_ns, clock.trace_start_ns, &offset_ns) ||
      __builtin_add_overflow(offset_ns, base_ns, &offset_ns)) {
    return InvalidArgumentError(std::string(name) + ": trace start " + std::to_string(clock.trace_start_ns) +
                                " ns and Unix start " + std::to_string(clock.unix_start_ns) +
                                " ns are too far apart to convert between");
  }

  const StringId input_dims = strings.FindString("Input Dims");
  const StringId step_phase = strings.FindString("Step:ModeKeys.TRAIN");
  const StringId python_function = strings.FindString("python_function");
  std::vector<StringId> hidden;
  for (std::string_view hidden_name : kHiddenNames) {
    if (StringId id = strings.FindString(hidden_name); id != kEmptyString) hidden.push_back(id);
  }

  std::vector<Node> nodes;
  std::vector<Device> devices;
  std::vector<int32_t> node_of_file(file.events.size(), kNone);
  std::vector<int32_t> device_of_file(file.events.size(), kNone);
  int64_t out_of_range = 0;
  for (uint32_t i = 0; i < file.events.size(); ++i) {
    const FrameworkEvent& event = file.events[i].event;
    if (event.kind != EventKind::kSpan) continue;
    const std::string_view category = strings.String(event.category);
    const Role role = RoleOf(category);
    if (role == Role::kSkip) continue;
    int64_t start_ns = 0, end_ns = 0;
    if (__builtin_add_overflow(event.start_ns, offset_ns, &start_ns) ||
        __builtin_add_overflow(event.end_ns, offset_ns, &end_ns)) {
      ++out_of_range;
      continue;
    }
    if (role == Role::kLaunched || role == Role::kDevice) {
      Device device;
      device.file_index = i;
      device.device = event.device >= 0 ? event.device : 0;
      device.stream = event.tid;
      device.start_ns = start_ns;
      device.end_ns = end_ns;
      device.name = event.name;
      device.user_annotation = category == "gpu_user_annotation";
      device_of_file[i] = static_cast<int32_t>(devices.size());
      devices.push_back(device);
      continue;
    }
    if (file.events[i].track_pid < 0) continue;  // a named track ("Spans"): not a host thread
    if (std::find(hidden.begin(), hidden.end(), event.name) != hidden.end()) continue;
    Node node;
    node.file_index = i;
    node.pid = file.events[i].track_pid;
    node.tid = event.tid;
    node.start_ns = start_ns;
    node.end_ns = end_ns;
    node.key = event.name;
    if (event.phase == step_phase && step_phase != kEmptyString) {
      // The parser renames ProfilerStep#N to the step vocabulary; torch shows it as ProfilerStep*.
      node.key = step_key;
    } else if (strings.String(event.name).starts_with("ProfilerStep#")) {
      node.key = step_key;
    }
    node.is_operator = role == Role::kOperator;
    node.user_annotation = category == "user_annotation";
    node.python_function = python_function != kEmptyString && event.category == python_function;
    node_of_file[i] = static_cast<int32_t>(nodes.size());
    nodes.push_back(std::move(node));
  }
  if (out_of_range > 0) {
    window.problems.push_back(std::string(name) + ": " + std::to_string(out_of_range) +
                              " events whose times leave the int64 ns range on the Unix clock were skipped");
  }

  // The tree, one thread at a time.
  std::vector<uint32_t> by_thread(nodes.size());
  for (uint32_t i = 0; i < by_thread.size(); ++i) by_thread[i] = i;
  std::sort(by_thread.begin(), by_thread.end(), [&](uint32_t a, uint32_t b) {
    const Node& x = nodes[a];
    const Node& y = nodes[b];
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.tid != y.tid) return x.tid < y.tid;
    return Earlier(x, y);
  });
  std::vector<uint32_t> thread;
  for (size_t begin = 0; begin < by_thread.size();) {
    size_t end = begin;
    thread.clear();
    while (end < by_thread.size() && nodes[by_thread[end]].pid == nodes[by_thread[begin]].pid &&
           nodes[by_thread[end]].tid == nodes[by_thread[begin]].tid) {
      thread.push_back(by_thread[end++]);
    }
    BuildThreadTree(nodes, thread);
    begin = end;
  }

  // Kernels onto the operator around their launch.
  int64_t unattributed = 0;
  for (const StagedFlow& flow : flows) {
    if (flow.category != ac2g && flow.category != legacy_ac2g) continue;
    const int32_t device = device_of_file[flow.to];
    if (device == kNone || RoleOf(strings.String(file.events[flow.to].event.category)) != Role::kLaunched) continue;
    int32_t owner = node_of_file[flow.from];
    if (owner == kNone) {
      ++unattributed;
      continue;
    }
    // The launch and its device work keep the flow's id, so a reader can draw launch -> kernel.
    nodes[owner].correlation = flow.id;
    devices[device].correlation = flow.id;
    int32_t op = owner;
    while (op != kNone && !nodes[op].is_operator) op = nodes[op].parent;
    nodes[op != kNone ? op : owner].kernels.push_back(static_cast<uint32_t>(device));
  }
  if (unattributed > 0) {
    window.problems.push_back(std::string(name) + ": " + std::to_string(unattributed) +
                              " device operations launched from outside the host events were left unattributed");
  }

  std::vector<uint32_t> order(nodes.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return Earlier(nodes[a], nodes[b]); });
  RemoveDuplicateNodes(nodes, order);

  // Device time bottom-up: children come after their parents in `order`.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node& node = nodes[*it];
    if (node.removed) continue;
    int64_t total = 0;
    for (uint32_t kernel : node.kernels) total += devices[kernel].end_ns - devices[kernel].start_ns;
    for (uint32_t child : node.children) total += nodes[child].device_ns;
    node.device_ns = total;
  }

  struct RowKey {
    StringId name;
    bool device;
    bool user_annotation;
    bool operator<(const RowKey& other) const {
      return std::tie(name, device, user_annotation) < std::tie(other.name, other.device, other.user_annotation);
    }
  };
  std::map<RowKey, WindowOperatorRow> rows;
  int64_t bad_shapes = 0;
  for (uint32_t index : order) {
    const Node& node = nodes[index];
    if (node.removed) continue;
    const FrameworkEvent& event = file.events[node.file_index].event;
    int64_t children_cpu_ns = 0, children_device_ns = 0;
    for (uint32_t child : node.children) {
      children_cpu_ns += nodes[child].end_ns - nodes[child].start_ns;
      children_device_ns += nodes[child].device_ns;
    }
    const int64_t cpu_ns = node.end_ns - node.start_ns;
    const int64_t self_cpu_ns = cpu_ns - children_cpu_ns;
    const int64_t self_device_ns = node.device_ns - children_device_ns;
    ++window.events_total;
    if (!node.python_function) {
      WindowOperatorRow& row = rows[RowKey{node.key, false, node.user_annotation}];
      ++row.calls;
      row.cpu_ns += cpu_ns;
      row.self_cpu_ns += self_cpu_ns;
      row.device_ns += node.device_ns;
      row.self_device_ns += self_device_ns;
    }
    if (window.events.size() >= max_events) continue;
    WindowHostEvent out;
    out.name = strings.String(node.key);
    out.tid = node.tid;
    out.start_ns = node.start_ns;
    out.end_ns = node.end_ns;
    out.cpu_ns = cpu_ns;
    out.self_cpu_ns = FloorAtZero(self_cpu_ns);
    out.correlation = node.correlation;
    if (input_dims != kEmptyString) {
      for (uint16_t a = 0; a < event.arg_count; ++a) {
        const EventArg& arg = file.args[event.first_arg + a];
        if (arg.key != input_dims || arg.type != EventArg::Type::kString) continue;
        if (!NormalizeShapes(strings.String(arg.string_value), &out.shapes_json)) ++bad_shapes;
        break;
      }
    }
    if (node.device_ns != 0 || !node.kernels.empty()) {
      out.has_device_time = true;
      out.device_ns = node.device_ns;
      out.self_device_ns = FloorAtZero(self_device_ns);
      for (uint32_t kernel : node.kernels) {
        const Device& device = devices[kernel];
        out.kernels.push_back(WindowKernel{std::string(strings.String(device.name)), device.device,
                                           device.end_ns - device.start_ns});
      }
    }
    window.events.push_back(std::move(out));
  }
  if (bad_shapes > 0) {
    window.problems.push_back(std::string(name) + ": " + std::to_string(bad_shapes) +
                              " events whose Input Dims are not lists of integers were given no shapes");
  }

  std::sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) {
    return std::tie(a.start_ns, a.file_index) < std::tie(b.start_ns, b.file_index);
  });
  window.device_events_total = static_cast<int64_t>(devices.size());
  for (const Device& device : devices) {
    const int64_t duration_ns = device.end_ns - device.start_ns;
    WindowOperatorRow& row = rows[RowKey{device.name, true, device.user_annotation}];
    ++row.calls;
    row.device_ns += duration_ns;
    row.self_device_ns += duration_ns;
    if (window.device_events.size() < max_events) {
      window.device_events.push_back(
          WindowDeviceEvent{std::string(strings.String(device.name)), device.device, device.stream, device.start_ns,
                            device.end_ns, device.correlation});
    }
  }

  window.operators.reserve(rows.size());
  for (auto& [key, row] : rows) {
    row.name = strings.String(key.name);
    row.self_cpu_ns = FloorAtZero(row.self_cpu_ns);
    row.self_device_ns = FloorAtZero(row.self_device_ns);
    row.has_device_time = row.device_ns != 0;
    window.operators.push_back(std::move(row));
  }
  std::stable_sort(window.operators.begin(), window.operators.end(), [](const WindowOperatorRow& a, const WindowOperatorRow& b) {
    return std::tie(b.self_cpu_ns, a.name) < std::tie(a.self_cpu_ns, b.name);
  });
  return window;
}

}  // namespace stepscope::analysis
