#include "analysis/detail_operators.h"

#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/detail_window_files.h"
#include "base/json_fields.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kOperatorsKind = "operators";

// Kineto's category for a device-side event, from its name (the documents keep only the name):
// "Memcpy HtoD (Pageable -> Device)", "Memset (Device)", otherwise a kernel.
std::string_view DeviceCategory(std::string_view name) {
  if (name.starts_with("Memcpy")) return "gpu_memcpy";
  if (name.starts_with("Memset")) return "gpu_memset";
  return "kernel";
}

// Input shapes as compact JSON text ("[[4,8],[16,8],[]]"). Written by hand rather than with
// json::dump(), which recurses: a hostile document nesting arrays a million deep must not
// overflow the stack. Shapes are lists of lists of integers; anything else reads "?".
std::string ShapesText(const nlohmann::json& shapes) {
  std::string text = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) text += ',';
    const nlohmann::json& shape = shapes[i];
    if (!shape.is_array()) {
      text += '?';
      continue;
    }
    text += '[';
    for (size_t j = 0; j < shape.size(); ++j) {
      if (j > 0) text += ',';
      text += shape[j].is_number_integer() ? std::to_string(shape[j].get<int64_t>()) : "?";
    }
    text += ']';
  }
  return text + "]";
}

}  // namespace

StatusOr<size_t> AddOperatorsDocument(const std::string& path, uint32_t node, ModelBuilder& builder) {
  STEPSCOPE_ASSIGN_OR_RETURN(const nlohmann::json doc, ReadDetailDocument(path));
  if (JsonString(doc, "kind") != kOperatorsKind) {
    return DataLossError("'" + path + "' is a '" + JsonString(doc, "kind") +
                         "' detail document, not an operators one");
  }
  const int32_t pid = static_cast<int32_t>(JsonInt(doc, "pid", -1));
  const StringId cpu_phase = builder.Intern("cpu_functions");
  const StringId cpu_category = builder.Intern("cpu_op");
  const StringId ac2g = builder.Intern("ac2g");  // Kineto's name for launch -> device work
  size_t added = 0, skipped = 0;
  std::vector<EventArg> args;
  // Launches by their id (the document's `correlation`), for the launch -> device work flows.
  std::unordered_map<int64_t, uint32_t> launch_by_correlation;

  // Host operators.
  const nlohmann::json* events = JsonField(doc, "events");
  if (events != nullptr && events->is_array()) {
    for (const nlohmann::json& item : *events) {
      const std::string name = JsonString(item, "name");
      const int64_t start_ns = JsonInt(item, "start_ns", -1);
      const int64_t end_ns = JsonInt(item, "end_ns", -1);
      if (name.empty() || start_ns < 0 || end_ns < start_ns) {
        ++skipped;
        continue;
      }
      FrameworkEvent event;
      event.start_ns = start_ns;
      event.end_ns = end_ns;
      event.tid = JsonInt(item, "tid", 0);
      event.pid = pid;
      event.node = node;
      event.phase = cpu_phase;
      event.name = builder.Intern(name);
      event.category = cpu_category;
      args.clear();
      for (const char* key : {"cpu_ns", "self_cpu_ns", "device_ns", "self_device_ns"}) {
        const nlohmann::json* value = JsonField(item, key);
        if (value != nullptr && value->is_number_integer()) args.push_back(builder.IntArg(key, value->get<int64_t>()));
      }
      if (const nlohmann::json* shapes = JsonField(item, "shapes"); shapes != nullptr && shapes->is_array()) {
        args.push_back(builder.StringArg("shapes", ShapesText(*shapes)));
      }
      if (JsonBool(item, "async", false)) args.push_back(builder.IntArg("async", 1));
      const int64_t correlation = JsonInt(item, "correlation", -1);
      if (correlation >= 0) args.push_back(builder.IntArg("correlation", correlation));
      const uint32_t index = builder.AddEvent(event, args);
      if (correlation >= 0) launch_by_correlation.emplace(correlation, index);
      ++added;
    }
  }

  // Device-side work (Kineto only, with CUDA).
  const nlohmann::json* device_events = JsonField(doc, "device_events");
  if (device_events != nullptr && device_events->is_array()) {
    for (const nlohmann::json& item : *device_events) {
      const std::string name = JsonString(item, "name");
      const int64_t start_ns = JsonInt(item, "start_ns", -1);
      const int64_t end_ns = JsonInt(item, "end_ns", -1);
      const int64_t device = JsonInt(item, "device", -1);
      if (name.empty() || start_ns < 0 || end_ns < start_ns || device < 0 || device > INT32_MAX) {
        ++skipped;
        continue;
      }
      FrameworkEvent event;
      event.start_ns = start_ns;
      event.end_ns = end_ns;
      event.pid = pid;
      event.device = static_cast<int32_t>(device);
      event.tid = JsonInt(item, "stream", 0);  // a device's tracks are its streams, as in Kineto's traces
      event.node = node;
      event.phase = builder.Intern("gpu_functions-dev:" + std::to_string(device));
      event.name = builder.Intern(name);
      event.category = builder.Intern(DeviceCategory(name));
      const int64_t correlation = JsonInt(item, "correlation", -1);
      args.clear();
      if (correlation >= 0) args.push_back(builder.IntArg("correlation", correlation));
      const uint32_t index = builder.AddEvent(event, args);
      if (auto launch = launch_by_correlation.find(correlation); correlation >= 0 && launch != launch_by_correlation.end()) {
        builder.AddFlow(launch->second, index, ac2g, correlation);
      }
      ++added;
    }
  }
  if (skipped > 0) {
    builder.AddProblem("detail_operators_skipped", ProblemSeverity::kDataLoss,
                       "'" + path + "': " + std::to_string(skipped) +
                           " operator events without a name or with bad times were skipped",
                       static_cast<uint64_t>(skipped));
  }
  return added;
}

void AddNewOperatorsDetail(const std::string& node_directory, uint32_t node, OperatorsDetailCursor& cursor,
                           ModelBuilder& builder) {
  if (cursor.directory_refused) return;
  StatusOr<std::vector<DetailWindowFile>> files = ListDetailWindowFiles({.name = "", .path = node_directory});
  if (!files.ok()) {
    builder.AddProblem("detail_directory_unreadable", ProblemSeverity::kDataLoss, files.status().message());
    cursor.directory_refused = true;
    return;
  }
  for (const DetailWindowFile& file : *files) {
    if (file.kind != kOperatorsKind || !cursor.files_done.insert(file.file).second) continue;
    auto added = AddOperatorsDocument(file.path, node, builder);
    if (!added.ok()) {
      builder.AddProblem("detail_operators_unreadable", ProblemSeverity::kDataLoss,
                         added.status().message() + "; its operators are left out");
    }
  }
}

}  // namespace stepscope::analysis
