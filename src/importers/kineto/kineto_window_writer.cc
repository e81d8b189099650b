#include "importers/kineto/kineto_window_writer.h"

#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <chrono>
#include <string_view>

#include "base/file_system.h"
#include "importers/common/gzip_text.h"

namespace stepscope::analysis {
namespace {

// gzip level 1: the trace is written on a thread of the training process, which shares its
// cores with training; level 6 is ~3x the CPU time for files ~25 % smaller.
constexpr int kGzipLevel = 1;
constexpr int kZstdLevel = 3;  // as the other detail documents (_detail_store.write_window)

static_assert(kReadFileSlackBytes >= simdjson::SIMDJSON_PADDING,
              "LocalFileSystem::ReadFile must leave simdjson's padding for the parse in place");

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Names come out of simdjson, which validated their UTF-8: only quotes, backslashes and control
// characters need escaping.
void AppendString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

void AppendMember(std::string& out, std::string_view key, int64_t value) {
  out += '"';
  out += key;
  out += "\":";
  out += std::to_string(value);
}

void AppendMember(std::string& out, std::string_view key, bool value) {
  out += '"';
  out += key;
  out += "\":";
  out += value ? "true" : "false";
}

void AppendHostEvent(std::string& out, const WindowHostEvent& event) {
  out += "{\"name\":";
  AppendString(out, event.name);
  out += ',';
  AppendMember(out, "tid", event.tid);
  out += ',';
  AppendMember(out, "start_ns", event.start_ns);
  out += ',';
  AppendMember(out, "end_ns", event.end_ns);
  out += ',';
  AppendMember(out, "cpu_ns", event.cpu_ns);
  out += ',';
  AppendMember(out, "self_cpu_ns", event.self_cpu_ns);
  out += ",\"shapes\":";
  out += event.shapes_json;
  if (event.correlation >= 0) {
    out += ',';
    AppendMember(out, "correlation", event.correlation);
  }
  if (event.has_device_time) {
    out += ',';
    AppendMember(out, "device_ns", event.device_ns);
    out += ',';
    AppendMember(out, "self_device_ns", event.self_device_ns);
    out += ",\"kernels\":[";
    for (size_t i = 0; i < event.kernels.size(); ++i) {
      if (i > 0) out += ',';
      out += "{\"name\":";
      AppendString(out, event.kernels[i].name);
      out += ',';
      AppendMember(out, "device", event.kernels[i].device);
      out += ',';
      AppendMember(out, "duration_ns", event.kernels[i].duration_ns);
      out += '}';
    }
    out += ']';
  }
  out += '}';
}

void AppendDeviceEvent(std::string& out, const WindowDeviceEvent& event) {
  // Kineto's device events come from CUPTI (or ROCm's tracer, which torch also calls CUDA).
  out += "{\"name\":";
  AppendString(out, event.name);
  out += ",\"device_type\":\"cuda\",";
  AppendMember(out, "device", event.device);
  out += ',';
  AppendMember(out, "stream", event.stream);
  out += ',';
  AppendMember(out, "start_ns", event.start_ns);
  out += ',';
  AppendMember(out, "end_ns", event.end_ns);
  if (event.correlation >= 0) {
    out += ',';
    AppendMember(out, "correlation", event.correlation);
  }
  out += '}';
}

void AppendOperatorRow(std::string& out, const WindowOperatorRow& row) {
  out += "{\"name\":";
  AppendString(out, row.name);
  out += ',';
  AppendMember(out, "calls", row.calls);
  out += ',';
  AppendMember(out, "cpu_ns", row.cpu_ns);
  out += ',';
  AppendMember(out, "self_cpu_ns", row.self_cpu_ns);
  if (row.has_device_time) {
    out += ',';
    AppendMember(out, "device_ns", row.device_ns);
    out += ',';
    AppendMember(out, "self_device_ns", row.self_device_ns);
  }
  out += '}';
}

StatusOr<std::string> ZstdText(std::string_view text, const std::string& path) {
  std::string compressed(ZSTD_compressBound(text.size()), '\0');
  const size_t size = ZSTD_compress(compressed.data(), compressed.size(), text.data(), text.size(), kZstdLevel);
  if (ZSTD_isError(size)) return InternalError("zstd cannot compress '" + path + "': " + ZSTD_getErrorName(size));
  compressed.resize(size);
  return compressed;
}

// The document: the caller's members, the payload, finish_ns.
StatusOr<std::string> DocumentText(std::string_view members, const OperatorsWindow& window, int64_t finish_ns,
                                   const std::string& path) {
  while (!members.empty() && (members.back() == ' ' || members.back() == '\n')) members.remove_suffix(1);
  if (members.size() < 2 || members.front() != '{' || members.back() != '}') {
    return InvalidArgumentError("the members of '" + path + "' must be one JSON object, not '" +
                                std::string(members.substr(0, 40)) + "'");
  }
  members.remove_suffix(1);
  std::string text(members);
  const bool empty = members.find_first_not_of(" \n\t\r", 1) == std::string_view::npos;
  if (!empty) text += ',';
  text += OperatorsPayloadJson(window);
  text += ',';
  AppendMember(text, "finish_ns", finish_ns);
  text += '}';
  return text;
}

}  // namespace

std::string OperatorsPayloadJson(const OperatorsWindow& window) {
  std::string out;
  out.reserve(256 + window.events.size() * 160 + window.device_events.size() * 120 + window.operators.size() * 100);
  out += "\"events\":[";
  for (size_t i = 0; i < window.events.size(); ++i) {
    if (i > 0) out += ',';
    AppendHostEvent(out, window.events[i]);
  }
  out += "],";
  AppendMember(out, "events_total", window.events_total);
  out += ',';
  AppendMember(out, "events_capped", window.events_total > static_cast<int64_t>(window.events.size()));
  out += ",\"device_events\":[";
  for (size_t i = 0; i < window.device_events.size(); ++i) {
    if (i > 0) out += ',';
    AppendDeviceEvent(out, window.device_events[i]);
  }
  out += "],";
  AppendMember(out, "device_events_total", window.device_events_total);
  out += ',';
  AppendMember(out, "device_events_capped",
               window.device_events_total > static_cast<int64_t>(window.device_events.size()));
  out += ",\"operators\":[";
  for (size_t i = 0; i < window.operators.size(); ++i) {
    if (i > 0) out += ',';
    AppendOperatorRow(out, window.operators[i]);
  }
  out += ']';
  if (!window.problems.empty()) {
    out += ",\"conversion_problems\":[";
    for (size_t i = 0; i < window.problems.size(); ++i) {
      if (i > 0) out += ',';
      AppendString(out, window.problems[i]);
    }
    out += ']';
  }
  return out;
}

std::string WithDistributedInfo(std::string trace, const OperatorsWindow& window, int64_t rank, int64_t world_size) {
  const size_t open = trace.find_first_not_of(" \n\t\r");
  if (window.has_distributed_info || open == std::string::npos || trace[open] != '{') return trace;
  // HTA finds a trace's rank by scanning its lines for the regex "rank":\s+(\d+) (note the
  // space json.dumps writes, which torch's own distributedInfo has) and takes rank 0, with a
  // warning, for a trace without it; first in the file, so no event's args are matched first.
  const std::string info = "\n  \"distributedInfo\": {\"rank\": " + std::to_string(rank) +
                           ", \"world_size\": " + std::to_string(world_size) + "},";
  trace.insert(open + 1, info);
  return trace;
}

StatusOr<KinetoWindowWritten> WriteKinetoWindow(const KinetoWindowRequest& request) {
  const int64_t began_ns = SteadyNowNs();
  struct RemoveSaved {
    const std::string& path;
    ~RemoveSaved() { ::unlink(path.c_str()); }
  } remove_saved{request.saved_trace_path};

  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string trace, fs.ReadFile(request.saved_trace_path));
  STEPSCOPE_ASSIGN_OR_RETURN(
      OperatorsWindow window,
      ConvertKinetoWindow(request.saved_trace_path,
                          simdjson::padded_string_view(trace.data(), trace.size(), trace.capacity()), request.clock,
                          request.max_events));
  KinetoWindowWritten written;
  written.finish_ns = request.elapsed_ns + (SteadyNowNs() - began_ns);
  written.events_total = window.events_total;
  written.device_events_total = window.device_events_total;

  // The document first: a request it cannot take leaves no trace file without a document.
  STEPSCOPE_ASSIGN_OR_RETURN(std::string document,
                             DocumentText(request.document_json, window, written.finish_ns, request.document_path));
  STEPSCOPE_ASSIGN_OR_RETURN(std::string compressed, ZstdText(document, request.document_path));
  document = std::string();

  STEPSCOPE_ASSIGN_OR_RETURN(
      std::string gzip,
      GzipText(WithDistributedInfo(std::move(trace), window, request.rank, request.world_size), request.trace_path,
               kGzipLevel));
  STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(request.trace_path, gzip));
  written.trace_bytes = gzip.size();

  STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(request.document_path, compressed));
  written.document_bytes = compressed.size();
  return written;
}

}  // namespace stepscope::analysis
