#include "run_reader_binding.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/status.h"
#include "analysis/recorded_run.h"
#include "store/run_manifest.h"
#include "store/stream_reader.h"
#include "status_exception.h"

namespace py = pybind11;

namespace stepscope::python {
namespace {

bool IsDirectoryPath(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

py::list Streams(const analysis::RecordedRun& run) {
  py::list streams;
  for (const analysis::StreamFacts& info : run.streams()) {
    py::dict stream;
    stream["node"] = run.nodes()[info.node].name;
    stream["name"] = info.name;
    stream["pid"] = info.pid;
    stream["ppid"] = info.ppid;
    stream["is_system"] = info.is_system;
    stream["dropped_events"] = info.dropped_events;
    stream["records"] = info.records;
    stream["log_bytes"] = info.log_bytes;
    stream["ring_bytes"] = info.ring_bytes;
    stream["meta"] = info.meta_json;
    streams.append(std::move(stream));
  }
  return streams;
}

py::list Events(const analysis::RecordedRun& run) {
  // One Python str per distinct name and kind, shared by all events that use it.
  std::vector<py::object> names;
  auto name_of = [&](uint32_t id) -> py::object {
    if (id >= names.size()) names.resize(id + 1);
    if (!names[id]) names[id] = py::str(std::string(run.Name(id)));
    return names[id];
  };
  std::vector<py::object> kinds;
  for (int k = 0; k < analysis::kRecordedKindCount; ++k) {
    kinds.push_back(py::str(analysis::RecordedKindName(static_cast<analysis::RecordedKind>(k))));
  }
  py::list events;
  for (const auto& [stream_index, e, args] : run.events()) {
    const analysis::StreamFacts& stream = run.streams()[stream_index];
    py::dict event;
    event["kind"] = kinds[static_cast<int>(e.kind)];
    event["name"] = name_of(e.name);
    event["start_ns"] = e.start_ns;
    event["end_ns"] = e.end_ns;
    event["value"] = e.value;
    event["step"] = e.step;
    event["phase"] = e.kind == analysis::RecordedKind::kStep ? py::object(py::str(store::PhaseName(e.phase))) : py::none();
    event["unfinished"] = e.unfinished;
    event["node"] = run.nodes()[stream.node].name;
    event["stream"] = stream_index;
    event["pid"] = stream.pid;
    event["tid"] = e.tid;
    py::dict arg_dict;
    for (const analysis::RecordedArg& arg : args) {
      switch (arg.type) {
        case analysis::RecordedArg::Type::kInt: arg_dict[name_of(arg.key)] = py::int_(arg.int_value); break;
        case analysis::RecordedArg::Type::kDouble: arg_dict[name_of(arg.key)] = py::float_(arg.double_value); break;
        case analysis::RecordedArg::Type::kString: arg_dict[name_of(arg.key)] = name_of(arg.string_value); break;
      }
    }
    event["args"] = std::move(arg_dict);
    events.append(std::move(event));
  }
  return events;
}

py::dict ReadRun(const std::string& path) {
  StatusOr<analysis::RecordedRun> read = [&] {
    py::gil_scoped_release release;
    return analysis::ReadRecordedRun(path);
  }();
  if (!read.ok()) ThrowStatus(read.status());
  const analysis::RecordedRun& run = *read;
  py::list nodes;
  for (const analysis::RecordedNode& info : run.nodes()) {
    py::dict node;
    node["name"] = info.name;
    node["directory"] = info.directory;
    node["manifest"] = info.has_manifest ? store::ManifestText(info.manifest) : std::string();
    nodes.append(std::move(node));
  }
  py::dict out;
  out["nodes"] = std::move(nodes);
  out["streams"] = Streams(run);
  out["events"] = Events(run);
  py::list problems;
  for (const std::string& problem : run.problems()) problems.append(problem);
  out["problems"] = std::move(problems);
  return out;
}

// Compacts the streams in `directory`; returns how many are compact now. A stream whose
// writer is alive is left alone (it is still being written).
StatusOr<int> CompactDirectory(const std::string& directory) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> names, store::ListStreams(directory));
  int compacted = 0;
  for (const std::string& name : names) {
    Status status = store::CompactStream(directory, name);
    if (status.code() == StatusCode::kUnavailable) continue;
    STEPSCOPE_RETURN_IF_ERROR(status);
    ++compacted;
  }
  return compacted;
}

int Compact(const std::string& path) {
  StatusOr<int> total = [&]() -> StatusOr<int> {
    py::gil_scoped_release release;
    if (!IsDirectoryPath(path)) return NotFoundError("run directory '" + path + "' does not exist");
    STEPSCOPE_ASSIGN_OR_RETURN(int count, CompactDirectory(path));
    LocalFileSystem fs;
    STEPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDirectory(path));
    for (const std::string& entry : entries) {  // a job directory: its nodes
      const std::string child = path + "/" + entry;
      if (!IsDirectoryPath(child)) continue;
      STEPSCOPE_ASSIGN_OR_RETURN(int in_child, CompactDirectory(child));
      count += in_child;
    }
    return count;
  }();
  if (!total.ok()) ThrowStatus(total.status());
  return *total;
}

}  // namespace

void BindRunReader(py::module_& module) {
  module.def("read_run", &ReadRun, py::arg("path"),
             "read_run(path) -> dict with 'nodes', 'streams', 'events' and 'problems' of a run (job or node\n"
             "directory). Each event is a dict: kind ('span', 'instant', 'counter', 'step', 'sample'), name,\n"
             "start_ns, end_ns (Unix epoch), value, step, phase (steps), unfinished, node, stream, pid, tid, args.");
  module.def("compact", &Compact, py::arg("path"),
             "compact(path) -> int: folds the rings of finished processes into their logs, in a node directory\n"
             "or in every node of a job directory. Returns the number of streams that are compact now; streams\n"
             "of live processes are left alone.");
}

}  // namespace stepscope::python
