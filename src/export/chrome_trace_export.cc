#include "export/chrome_trace_export.h"

#include <charconv>
#include <cmath>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/thread_tracks.h"

namespace stepscope::exporting {
namespace {

using analysis::EventArg;
using analysis::EventKind;
using analysis::FrameworkEvent;
using analysis::Model;

constexpr size_t kFlushBytes = 1 << 20;

// JSON text of a string: quotes and escapes by nlohmann::json; invalid UTF-8 (names from foreign
// traces) is replaced rather than thrown on.
std::string Quote(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Appends JSON text to a buffer and hands it to the sink in large pieces. The first sink error
// sticks; later writes are dropped and status() reports it.
class JsonStream {
 public:
  JsonStream(const Model& model, TextSink& sink) : model_(model), sink_(sink), quoted_(model.strings().size()) {
    buffer_.reserve(kFlushBytes + 4096);
  }

  JsonStream& Raw(std::string_view text) {
    buffer_.append(text);
    return *this;
  }
  JsonStream& Int(int64_t value) {
    char digits[24];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
    buffer_.append(digits, end);
    return *this;
  }
  JsonStream& Micros(int64_t ns) {
    buffer_.append(MicrosFromNanos(ns));
    return *this;
  }
  // Shortest text that reads back as `value`; null for NaN and infinities (not JSON numbers).
  JsonStream& Double(double value) {
    if (!std::isfinite(value)) return Raw("null");
    char digits[32];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
    buffer_.append(digits, end);
    return *this;
  }
  JsonStream& Text(std::string_view text) {
    buffer_.append(Quote(text));
    return *this;
  }
  // Interned strings are quoted once each: names repeat millions of times in a long run.
  JsonStream& Interned(analysis::StringId id) {
    if (id >= quoted_.size()) return Text(model_.String(id));
    std::string& quoted = quoted_[id];
    if (quoted.empty()) quoted = Quote(model_.String(id));
    buffer_.append(quoted);
    return *this;
  }

  // Called after each event: flushes when the buffer is full.
  void EndEvent() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    if (status_.ok() && !buffer_.empty()) status_ = sink_.Append(buffer_);
    buffer_.clear();
  }
  const Status& status() const { return status_; }

 private:
  const Model& model_;
  TextSink& sink_;
  std::string buffer_;
  std::vector<std::string> quoted_;
  Status status_;
};

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const Model& model, TextSink& sink)
      : model_(model), out_(model, sink), layout_(LayoutTracks(model)), origin_ns_(model.first_ns()) {}

  StatusOr<ChromeTraceStats> Write() {
    out_.Raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"stepscope export\",\"source\":")
        .Text(analysis::ModelSourceName(model_.source()))
        .Raw(",\"time_origin_unix_ns\":")
        .Int(origin_ns_)
        .Raw(",\"time_unit\":\"microseconds since time_origin_unix_ns\"},\"traceEvents\":[\n");
    WriteMetadata();
    WriteEvents();
    WriteSystemCounters();
    WriteFlows();
    out_.Raw("\n]}\n");
    out_.Flush();
    if (!out_.status().ok()) return out_.status();
    return stats_;
  }

 private:
  // Events are separated by ",\n" so the file is line-oriented (grep, head) yet one document.
  void BeginEvent() {
    if (!first_event_) out_.Raw(",\n");
    first_event_ = false;
  }
  JsonStream& Header(char phase, uint32_t node) {
    BeginEvent();
    out_.Raw("{\"ph\":\"").Raw(std::string_view(&phase, 1)).Raw("\",\"pid\":").Int(int64_t{node} + 1);
    return out_;
  }
  int64_t ChromeTid(uint32_t track) const { return int64_t{track} + 1; }

  void WriteMetadata() {
    for (uint32_t node = 0; node < model_.nodes().size(); ++node) {
      Header('M', node).Raw(",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":")
          .Text(model_.nodes()[node].name).Raw("}}");
      Header('M', node).Raw(",\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":")
          .Int(node).Raw("}}");
    }
    for (uint32_t track = 0; track < layout_.tracks.size(); ++track) {
      const ThreadKey& thread = layout_.threads[layout_.tracks[track].thread];
      Header('M', thread.node).Raw(",\"tid\":").Int(ChromeTid(track)).Raw(",\"name\":\"thread_name\",\"args\":{\"name\":")
          .Text(TrackName(thread, layout_.tracks[track].lane)).Raw("}}");
      Header('M', thread.node).Raw(",\"tid\":").Int(ChromeTid(track))
          .Raw(",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":").Int(track).Raw("}}");
      out_.EndEvent();
    }
  }

  // The event's own args, then phase, step and unfinished unless an own arg has that name.
  void WriteArgs(const FrameworkEvent& event, bool is_step) {
    out_.Raw(",\"args\":{");
    bool first = true;
    auto key = [&](std::string_view name) -> JsonStream& {
      if (!first) out_.Raw(",");
      first = false;
      return out_.Text(name).Raw(":");
    };
    const auto args = model_.Args(event);
    for (const EventArg& arg : args) {
      key(model_.String(arg.key));
      switch (arg.type) {
        case EventArg::Type::kInt: out_.Int(arg.int_value); break;
        case EventArg::Type::kDouble: out_.Double(arg.double_value); break;
        case EventArg::Type::kString: out_.Interned(arg.string_value); break;
        case EventArg::Type::kBool: out_.Raw(arg.int_value != 0 ? "true" : "false"); break;
      }
    }
    auto own = [&](std::string_view name) {
      for (const EventArg& arg : args) {
        if (model_.String(arg.key) == name) return false;
      }
      return true;
    };
    if (event.phase != analysis::kEmptyString && own("phase")) key("phase").Interned(event.phase);
    if (is_step && own("step")) key("step").Int(event.step);
    if (event.unfinished && own("unfinished")) key("unfinished").Raw("true");
    out_.Raw("}");
  }

  void WriteEvents() {
    const auto& events = model_.events();
    std::vector<bool> is_step(events.size(), false);
    for (uint32_t index : model_.steps()) is_step[index] = true;
    const analysis::StringId value_key = model_.FindString("value");
    for (size_t i = 0; i < events.size(); ++i) {
      const FrameworkEvent& event = events[i];
      const uint32_t track = layout_.event_track[i];
      switch (event.kind) {
        case EventKind::kSpan:
          Header('X', event.node).Raw(",\"tid\":").Int(ChromeTid(track)).Raw(",\"ts\":").Micros(event.start_ns - origin_ns_)
              .Raw(",\"dur\":").Micros(std::max<int64_t>(0, event.end_ns - event.start_ns));
          ++stats_.slices;
          if (layout_.tracks[track].lane > 0) ++stats_.overflow_slices;
          break;
        case EventKind::kInstant:
          Header('i', event.node).Raw(",\"tid\":").Int(ChromeTid(track)).Raw(",\"s\":\"t\",\"ts\":")
              .Micros(event.start_ns - origin_ns_);
          ++stats_.instants;
          break;
        case EventKind::kCounter: {
          // Trace viewers draw C events per process and name: one counter track per name.
          const EventArg* value = value_key == analysis::kEmptyString ? nullptr : model_.FindArg(event, "value");
          double number = 0;
          if (value != nullptr) {
            number = value->type == EventArg::Type::kInt ? static_cast<double>(value->int_value) : value->double_value;
          }
          if (!std::isfinite(number)) {
            ++stats_.skipped_samples;
            continue;
          }
          Header('C', event.node).Raw(",\"ts\":").Micros(event.start_ns - origin_ns_).Raw(",\"name\":")
              .Interned(event.name).Raw(",\"args\":{\"value\":").Double(number).Raw("}}");
          ++stats_.counter_events;
          out_.EndEvent();
          continue;
        }
      }
      out_.Raw(",\"name\":").Interned(event.name);
      out_.Raw(",\"cat\":").Interned(event.category != analysis::kEmptyString ? event.category : event.phase);
      WriteArgs(event, is_step[i]);
      out_.Raw("}");
      out_.EndEvent();
    }
  }

  // "cpu/cpu0/CPUUtilization"; a part equal to the one before it is left out
  // ("memory/MemoryUsedPercent" rather than ".../MemoryUsedPercent/MemoryUsedPercent").
  std::string SeriesName(const analysis::SystemSeries& series) const {
    std::string name;
    std::string_view previous;
    for (analysis::StringId id : {series.type, series.name, series.dimension}) {
      const std::string_view part = model_.String(id);
      if (part.empty() || part == previous) continue;
      if (!name.empty()) name += '/';
      name += part;
      previous = part;
    }
    return name;
  }

  void WriteSystemCounters() {
    for (const analysis::SystemSeries& series : model_.series()) {
      const std::string name = Quote(SeriesName(series));
      for (size_t i = 0; i < series.time_ns.size(); ++i) {
        if (!std::isfinite(series.value[i])) {
          ++stats_.skipped_samples;
          continue;
        }
        Header('C', series.node).Raw(",\"ts\":").Micros(series.time_ns[i] - origin_ns_).Raw(",\"name\":").Raw(name)
            .Raw(",\"args\":{\"value\":").Double(series.value[i]).Raw("}}");
        ++stats_.counter_events;
        out_.EndEvent();
      }
    }
  }

  // Flow ids are the flow's index, unique across nodes (trace correlation ids repeat per rank);
  // the trace's own id is kept in args. Both ends bind to the slice enclosing their timestamp.
  void WriteFlows() {
    const auto& events = model_.events();
    for (size_t i = 0; i < model_.flows().size(); ++i) {
      const analysis::Flow& flow = model_.flows()[i];
      if (flow.from >= events.size() || flow.to >= events.size() || events[flow.from].kind != EventKind::kSpan ||
          events[flow.to].kind != EventKind::kSpan) {
        ++stats_.skipped_flows;
        continue;
      }
      const std::string_view category = flow.category != analysis::kEmptyString ? model_.String(flow.category) : "flow";
      for (const bool start : {true, false}) {
        const uint32_t index = start ? flow.from : flow.to;
        const FrameworkEvent& event = events[index];
        Header(start ? 's' : 'f', event.node).Raw(",\"tid\":").Int(ChromeTid(layout_.event_track[index]));
        if (!start) out_.Raw(",\"bp\":\"e\"");
        out_.Raw(",\"ts\":").Micros(event.start_ns - origin_ns_).Raw(",\"id\":").Int(static_cast<int64_t>(i) + 1)
            .Raw(",\"name\":").Text(category).Raw(",\"cat\":").Text(category)
            .Raw(",\"args\":{\"correlation\":").Int(flow.id).Raw("}}");
      }
      ++stats_.flows;
      out_.EndEvent();
    }
  }

  const Model& model_;
  JsonStream out_;
  TrackLayout layout_;
  int64_t origin_ns_ = 0;
  bool first_event_ = true;
  ChromeTraceStats stats_;
};

}  // namespace

std::string MicrosFromNanos(int64_t ns) {
  const bool negative = ns < 0;
  // Magnitude as unsigned: INT64_MIN has no positive int64 counterpart.
  const uint64_t magnitude = negative ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string text = negative ? "-" : "";
  text += std::to_string(magnitude / 1000);
  const unsigned fraction = static_cast<unsigned>(magnitude % 1000);
  text += '.';
  text += static_cast<char>('0' + fraction / 100);
  text += static_cast<char>('0' + fraction / 10 % 10);
  text += static_cast<char>('0' + fraction % 10);
  return text;
}

StatusOr<ChromeTraceStats> WriteChromeTrace(const Model& model, TextSink& sink) {
  return ChromeTraceWriter(model, sink).Write();
}

StatusOr<ChromeTraceStats> ExportChromeTrace(const Model& model, const std::string& path) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, OutputFile::Create(path));
  STEPSCOPE_ASSIGN_OR_RETURN(ChromeTraceStats stats, WriteChromeTrace(model, *file));
  STEPSCOPE_RETURN_IF_ERROR(file->Commit());
  return stats;
}

}  // namespace stepscope::exporting
