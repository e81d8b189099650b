#include "detail_binding.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/detail_window_files.h"
#include "base/status.h"
#include "importers/kineto/kineto_window_writer.h"
#include "name_cache.h"
#include "recorder/recorder.h"
#include "status_exception.h"
#include "store/format.h"

namespace py = pybind11;

namespace stepscope::python {
namespace {

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write '" + path + "'", errno);
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return OkStatus();
}

// Compresses `data` into `path` through a temporary file and a rename, so a reader (stepscope
// info while the job runs) sees either no file or a whole one.
StatusOr<size_t> WriteZstdFile(const std::string& path, std::string_view data, int level) {
  std::string compressed(ZSTD_compressBound(data.size()), '\0');
  size_t size = ZSTD_compress(compressed.data(), compressed.size(), data.data(), data.size(), level);
  if (ZSTD_isError(size)) {
    return InternalError(std::string("zstd cannot compress '") + path + "': " + ZSTD_getErrorName(size));
  }
  compressed.resize(size);
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create '" + temporary + "'", errno);
  Status status = WriteAll(fd, compressed, temporary);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("close '" + temporary + "'", errno);
  if (status.ok() && ::rename(temporary.c_str(), path.c_str()) != 0) {
    status = ErrnoError("rename to '" + path + "'", errno);
  }
  if (!status.ok()) {
    ::unlink(temporary.c_str());
    return status;
  }
  return size;
}

// Records a whole span after the fact. A window's span is recorded when the window closes, as
// a begin and an end back to back: windows of different kinds overlap without nesting, and spans
// begun and ended live on one thread would cut each other (and any user span) short.
void SpanAt(const py::str& name, uint64_t begin_ticks, uint64_t end_ticks) {
  if (!stepscope_enabled_fast()) return;
  uint32_t id = ResolveName(name.ptr());
  if (id == 0) return;
  recorder::RecordAt(begin_ticks, store::RecordKind::kBegin, id, 0, 0);
  recorder::RecordAt(end_ticks, store::RecordKind::kEnd, id, 0, 0);
}

}  // namespace

void BindDetail(py::module_& module) {
  module.def("span_at", &SpanAt, py::arg("name"), py::arg("begin_ticks"), py::arg("end_ticks"),
             "span_at(name, begin_ticks, end_ticks): records a finished span with timestamps from now();\n"
             "args() afterwards attach to it.");
  module.def(
      "write_zstd_file",
      [](const std::string& path, const py::bytes& data, int level) {
        std::string_view view = data;  // the bytes object stays alive for the call
        StatusOr<size_t> written = [&] {
          py::gil_scoped_release release;
          return WriteZstdFile(path, view, level);
        }();
        if (!written.ok()) ThrowStatus(written.status());
        return *written;
      },
      py::arg("path"), py::arg("data"), py::arg("level") = 3,
      "write_zstd_file(path, data, level=3) -> int: compresses the bytes `data` into the file `path`\n"
      "(replaced atomically: written to a temporary file, then renamed) and returns the compressed size.");
  module.def(
      "write_kineto_window",
      [](const std::string& saved_trace_path, const std::string& trace_path, const std::string& document_path,
         const std::string& document_json, int64_t trace_start_ns, int64_t unix_start_ns, size_t max_events,
         int64_t rank, int64_t world_size, int64_t elapsed_ns) {
        analysis::KinetoWindowRequest request;
        request.saved_trace_path = saved_trace_path;
        request.trace_path = trace_path;
        request.document_path = document_path;
        request.document_json = document_json;
        request.clock = {trace_start_ns, unix_start_ns};
        request.max_events = max_events;
        request.rank = rank;
        request.world_size = world_size;
        request.elapsed_ns = elapsed_ns;
        StatusOr<analysis::KinetoWindowWritten> written = [&] {
          py::gil_scoped_release release;  // reading, converting, compressing: the training thread runs on
          return analysis::WriteKinetoWindow(request);
        }();
        if (!written.ok()) ThrowStatus(written.status());
        py::dict result;
        result["trace_bytes"] = written->trace_bytes;
        result["document_bytes"] = written->document_bytes;
        result["finish_ns"] = written->finish_ns;
        result["events_total"] = written->events_total;
        result["device_events_total"] = written->device_events_total;
        return result;
      },
      py::arg("saved_trace_path"), py::arg("trace_path"), py::arg("document_path"), py::arg("document_json"),
      py::arg("trace_start_ns"), py::arg("unix_start_ns"), py::arg("max_events"), py::arg("rank") = 0,
      py::arg("world_size") = 1, py::arg("elapsed_ns") = 0,
      "write_kineto_window(saved_trace_path, trace_path, document_path, document_json, trace_start_ns,\n"
      "unix_start_ns, max_events, rank=0, world_size=1, elapsed_ns=0) -> dict: an operators window recorded\n"
      "with Kineto, from the Chrome trace torch saved at saved_trace_path (deleted afterwards): writes the\n"
      "trace, gzip, to trace_path (distributedInfo {rank, world_size} added when torch wrote none) and the\n"
      "detail document to document_path (zstd): document_json's members (a JSON object) plus the operators\n"
      "payload converted in C++ and finish_ns (elapsed_ns + reading and converting). Times: trace clock -\n"
      "trace_start_ns + unix_start_ns. Both files appear atomically. Runs without the GIL. Returns\n"
      "{trace_bytes, document_bytes, finish_ns, events_total, device_events_total}. Raises ValueError for a\n"
      "trace that is not whole JSON, OSError when a file cannot be read or written (src/analysis/kineto_window_writer.h).");
  module.def(
      "read_zstd_file",
      [](const std::string& path) {
        StatusOr<std::string> bytes = [&] {
          py::gil_scoped_release release;
          return analysis::ReadDetailFile(path);
        }();
        if (!bytes.ok()) ThrowStatus(bytes.status());
        return py::bytes(*bytes);
      },
      py::arg("path"),
      "read_zstd_file(path) -> bytes: the decompressed contents of a detail file (a zstd file, at most 1 GiB\n"
      "inflated; src/analysis/detail_window_files.h). Raises OSError when it cannot be read, ValueError when\n"
      "it is not a whole zstd file, is too large, or is a link, FIFO or device.");
  module.attr("DETAIL_FORMAT_VERSION") = analysis::kDetailFormatVersion;
  module.def(
      "detail_window_file_name",
      [](const std::string& kind, int64_t pid, int64_t window) {
        return analysis::DetailWindowFileName(kind, pid, window);
      },
      py::arg("kind"), py::arg("pid"), py::arg("window"),
      "detail_window_file_name(kind, pid, window) -> str: the name of a window's document in <node>/detail,\n"
      "'<kind>-<pid>-<window>.json.zst' (the name the readers list).");
  module.def(
      "detail_window_files",
      [](const std::string& node_directory) {
        StatusOr<std::vector<analysis::DetailWindowFile>> files = [&] {
          py::gil_scoped_release release;
          return analysis::ListDetailWindowFiles({.name = "", .path = node_directory});
        }();
        if (!files.ok()) ThrowStatus(files.status());
        py::list result;
        for (const analysis::DetailWindowFile& file : *files) {
          py::dict entry;
          entry["kind"] = file.kind;
          entry["pid"] = file.pid;
          entry["window"] = file.window;
          entry["path"] = file.path;
          entry["file"] = file.file;
          entry["bytes"] = file.bytes;
          result.append(std::move(entry));
        }
        return result;
      },
      py::arg("node_directory"),
      "detail_window_files(node_directory) -> list[dict]: the window documents in <node_directory>/detail as\n"
      "`stepscope info` lists them, by kind, pid and window: [{kind, pid, window, path, file, bytes}], from\n"
      "their names (documents are not read; temporary and other files are left out). [] without a detail\n"
      "directory; ValueError when it is a symbolic link (not followed) or not a directory.");
}

}  // namespace stepscope::python
