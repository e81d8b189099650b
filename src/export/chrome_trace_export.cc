#include "export/chrome_trace_export.h"

#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_facts.h"
#include "analysis/thread_tracks.h"
#include "export/trace_names.h"

namespace stepscope::exporting {

using analysis::LayoutTracks;
using analysis::ThreadKey;
using analysis::TrackLayout;
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

// Where a track or counter is drawn: a trace process per host process, per GPU and per node's
// system metrics, so a viewer groups tracks as the job ran them.
struct ChromeProcess {
  enum class Kind : uint8_t { kHost, kGpu, kSystem };
  uint32_t node = 0;
  Kind kind = Kind::kHost;
  int32_t id = 0;  // pid, GPU index, 0

  auto operator<=>(const ChromeProcess&) const = default;
};

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const Model& model, TextSink& sink, const ChromeTraceOptions& options)
      : model_(model), out_(model, sink), options_(options), layout_(LayoutTracks(model)), names_(model),
        origin_ns_(analysis::ComputeRunFacts(model, "").start_ns) {}

  StatusOr<ChromeTraceStats> Write() {
    out_.Raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"stepscope export\",\"source\":")
        .Text(analysis::ModelSourceName(model_.source()))
        .Raw(",\"time_origin_unix_ns\":")
        .Int(origin_ns_)
        .Raw(",\"time_unit\":\"microseconds since time_origin_unix_ns\",\"range\":")
        .Text(options_.range.description);
    if (!options_.range.whole) {
      out_.Raw(",\"range_start_unix_ns\":").Int(std::max(options_.range.start_ns, model_.first_ns()))
          .Raw(",\"range_end_unix_ns\":").Int(std::min(options_.range.end_ns, model_.last_ns()));
    }
    out_.Raw("},\"traceEvents\":[\n");
    SelectEvents();
    WriteMetadata();
    WriteEvents();
    WriteSystemCounters();
    WriteFlows();
    WriteStepFlows();
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
  JsonStream& Header(char phase, int64_t chrome_pid) {
    BeginEvent();
    out_.Raw("{\"ph\":\"").Raw(std::string_view(&phase, 1)).Raw("\",\"pid\":").Int(chrome_pid);
    return out_;
  }
  int64_t ChromeTid(uint32_t track) const { return int64_t{track} + 1; }

  static ChromeProcess ProcessOfThread(const ThreadKey& thread) {
    if (thread.device >= 0) return {thread.node, ChromeProcess::Kind::kGpu, thread.device};
    return {thread.node, ChromeProcess::Kind::kHost, thread.pid};
  }
  // Trace pids are numbered in ChromeProcess order (node, host processes, GPUs, system) from 1.
  int64_t ChromePid(const ChromeProcess& process) const {
    auto it = processes_.find(process);
    return it != processes_.end() ? it->second : 0;
  }
  int64_t ChromePidOfTrack(uint32_t track) const { return track_pid_[track]; }

  // What the range keeps: events overlapping it (whole, never cut), the tracks and processes
  // they are drawn on, and each system series' samples in it with the one in force at its start.
  void SelectEvents() {
    const auto& events = model_.events();
    keep_.assign(events.size(), false);
    std::vector<bool> track_used(layout_.tracks.size(), false);
    for (size_t i = 0; i < events.size(); ++i) {
      const FrameworkEvent& event = events[i];
      const int64_t end_ns = event.kind == EventKind::kSpan ? std::max(event.end_ns, event.start_ns) : event.start_ns;
      if (!options_.range.Overlaps(event.start_ns, end_ns)) continue;
      keep_[i] = true;
      if (event.kind == EventKind::kCounter) {
        processes_.emplace(ChromeProcess{event.node, ChromeProcess::Kind::kHost, event.pid}, 0);
      } else {
        track_used[layout_.event_track[i]] = true;
      }
    }
    for (uint32_t track = 0; track < layout_.tracks.size(); ++track) {
      if (!track_used[track]) continue;
      used_tracks_.push_back(track);
      processes_.emplace(ProcessOfThread(layout_.threads[layout_.tracks[track].thread]), 0);
    }
    for (const analysis::SystemSeries& series : model_.series()) {
      const auto [first, last] = SampleRange(series);
      if (first < last) processes_.emplace(ChromeProcess{series.node, ChromeProcess::Kind::kSystem, 0}, 0);
    }
    int64_t next_pid = 1;
    for (auto& [process, pid] : processes_) pid = next_pid++;
    track_pid_.assign(layout_.tracks.size(), 0);
    for (uint32_t track : used_tracks_) {
      track_pid_[track] = ChromePid(ProcessOfThread(layout_.threads[layout_.tracks[track].thread]));
    }
  }

  // Indices [first, last) of `series`' samples to write.
  std::pair<size_t, size_t> SampleRange(const analysis::SystemSeries& series) const {
    if (options_.range.whole) return {0, series.time_ns.size()};
    auto [first, last] = Model::SamplesIn(series, options_.range.start_ns, options_.range.end_ns);
    // The value in force when the range starts: a counter track must not begin empty.
    if (first > 0 && (first == last || series.time_ns[first] > options_.range.start_ns)) --first;
    return {first, last};
  }

  std::string ProcessName(const ChromeProcess& process) const {
    switch (process.kind) {
      case ChromeProcess::Kind::kHost: return names_.HostProcess(process.node, process.id);
      case ChromeProcess::Kind::kGpu: return names_.Gpu(process.node, process.id);
      case ChromeProcess::Kind::kSystem: return names_.SystemMetrics(process.node);
    }
    return "";
  }

  void WriteMetadata() {
    for (const auto& [process, pid] : processes_) {
      Header('M', pid).Raw(",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":").Text(ProcessName(process)).Raw("}}");
      Header('M', pid).Raw(",\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":").Int(pid).Raw("}}");
      out_.EndEvent();
    }
    for (uint32_t track : used_tracks_) {
      const ThreadKey& thread = layout_.threads[layout_.tracks[track].thread];
      const int64_t pid = ChromePidOfTrack(track);
      Header('M', pid).Raw(",\"tid\":").Int(ChromeTid(track)).Raw(",\"name\":\"thread_name\",\"args\":{\"name\":")
          .Text(names_.Thread(thread, layout_.tracks[track].lane)).Raw("}}");
      Header('M', pid).Raw(",\"tid\":").Int(ChromeTid(track))
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
      if (!keep_[i]) continue;
      const FrameworkEvent& event = events[i];
      const uint32_t track = layout_.event_track[i];
      switch (event.kind) {
        case EventKind::kSpan:
          Header('X', ChromePidOfTrack(track)).Raw(",\"tid\":").Int(ChromeTid(track)).Raw(",\"ts\":")
              .Micros(event.start_ns - origin_ns_).Raw(",\"dur\":").Micros(std::max<int64_t>(0, event.end_ns - event.start_ns));
          ++stats_.slices;
          if (layout_.tracks[track].lane > 0) ++stats_.overflow_slices;
          break;
        case EventKind::kInstant:
          Header('i', ChromePidOfTrack(track)).Raw(",\"tid\":").Int(ChromeTid(track)).Raw(",\"s\":\"t\",\"ts\":")
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
          Header('C', ChromePid({event.node, ChromeProcess::Kind::kHost, event.pid})).Raw(",\"ts\":")
              .Micros(event.start_ns - origin_ns_).Raw(",\"name\":").Interned(event.name)
              .Raw(",\"args\":{\"value\":").Double(number).Raw("}}");
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

  // One counter track per series: its samples under one name, in the node's system process.
  void WriteSystemCounters() {
    for (const analysis::SystemSeries& series : model_.series()) {
      const std::string name = Quote(SeriesName(series));
      const int64_t pid = ChromePid({series.node, ChromeProcess::Kind::kSystem, 0});
      const auto [first, last] = SampleRange(series);
      for (size_t i = first; i < last; ++i) {
        if (!std::isfinite(series.value[i])) {
          ++stats_.skipped_samples;
          continue;
        }
        Header('C', pid).Raw(",\"ts\":").Micros(series.time_ns[i] - origin_ns_).Raw(",\"name\":").Raw(name)
            .Raw(",\"args\":{\"value\":").Double(series.value[i]).Raw("}}");
        ++stats_.counter_events;
        out_.EndEvent();
      }
    }
  }

  // One flow: `s` at the start of `from`, `f` (binding to the enclosing slice) at the start of `to`.
  void WriteFlow(uint32_t from, uint32_t to, std::string_view category, int64_t correlation) {
    const auto& events = model_.events();
    ++next_flow_id_;
    for (const bool start : {true, false}) {
      const uint32_t index = start ? from : to;
      const uint32_t track = layout_.event_track[index];
      Header(start ? 's' : 'f', ChromePidOfTrack(track)).Raw(",\"tid\":").Int(ChromeTid(track));
      if (!start) out_.Raw(",\"bp\":\"e\"");
      out_.Raw(",\"ts\":").Micros(events[index].start_ns - origin_ns_).Raw(",\"id\":").Int(next_flow_id_)
          .Raw(",\"name\":").Text(category).Raw(",\"cat\":").Text(category);
      if (correlation >= 0) out_.Raw(",\"args\":{\"correlation\":").Int(correlation).Raw("}");
      out_.Raw("}");
    }
    out_.EndEvent();
  }

  // The model's flows (launch -> kernel, forward -> backward). Flow ids are unique in the file
  // (trace correlation ids repeat per rank); the trace's own id is kept in args. Both ends bind
  // to the slice enclosing their timestamp.
  void WriteFlows() {
    const auto& events = model_.events();
    for (const analysis::Flow& flow : model_.flows()) {
      if (flow.from >= events.size() || flow.to >= events.size() || events[flow.from].kind != EventKind::kSpan ||
          events[flow.to].kind != EventKind::kSpan) {
        ++stats_.skipped_flows;
        continue;
      }
      if (!keep_[flow.from] || !keep_[flow.to]) continue;  // outside the range
      WriteFlow(flow.from, flow.to, flow.category != analysis::kEmptyString ? model_.String(flow.category) : "flow",
                flow.id);
      ++stats_.flows;
    }
  }

  // Step -> what ran in it: from each step to the first slice that starts inside it on every
  // other thread and GPU stream of its rank (its process, the workers it forked, other processes
  // of the same rank and, when nothing says ranks, the node), so selecting a step in the viewer
  // lists the data-loading, helper-thread and GPU work of that step.
  void WriteStepFlows() {
    const auto& events = model_.events();
    std::vector<uint64_t> seen_in_step(layout_.threads.size(), 0);
    uint64_t stamp = 0;
    const std::string_view category = "step_contents";
    for (uint32_t step_index : model_.steps()) {
      const FrameworkEvent& step = events[step_index];
      if (!keep_[step_index] || step.kind != EventKind::kSpan || step.end_ns <= step.start_ns) continue;
      ++stamp;
      const uint32_t step_thread = layout_.event_thread[step_index];
      seen_in_step[step_thread] = stamp;
      const int32_t rank = model_.RankOf(step.node, step.pid);
      const auto [first, last] = model_.EventsStartingIn(step.start_ns, step.end_ns);
      for (size_t i = first; i < last; ++i) {
        const FrameworkEvent& event = events[i];
        if (event.kind != EventKind::kSpan || event.node != step.node || !keep_[i]) continue;
        const uint32_t thread = layout_.event_thread[i];
        if (seen_in_step[thread] == stamp) continue;
        if (event.pid != step.pid && model_.RankOf(event.node, event.pid) != rank) continue;
        seen_in_step[thread] = stamp;
        WriteFlow(step_index, static_cast<uint32_t>(i), category, -1);
        ++stats_.step_flows;
      }
    }
  }

  const Model& model_;
  JsonStream out_;
  const ChromeTraceOptions& options_;
  TrackLayout layout_;
  TraceNames names_;
  int64_t origin_ns_ = 0;
  std::vector<bool> keep_;              // per event: written
  std::vector<uint32_t> used_tracks_;   // tracks with a written event, ascending
  std::vector<int64_t> track_pid_;      // per track: its trace pid
  std::map<ChromeProcess, int64_t> processes_;  // written processes -> trace pid
  int64_t next_flow_id_ = 0;
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

StatusOr<ChromeTraceStats> WriteChromeTrace(const Model& model, TextSink& sink, const ChromeTraceOptions& options) {
  return ChromeTraceWriter(model, sink, options).Write();
}

StatusOr<ChromeTraceStats> ExportChromeTrace(const Model& model, const std::string& path,
                                             const ChromeTraceOptions& options) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, OutputFile::Create(path));
  STEPSCOPE_ASSIGN_OR_RETURN(ChromeTraceStats stats, WriteChromeTrace(model, *file, options));
  STEPSCOPE_RETURN_IF_ERROR(file->Commit());
  return stats;
}

}  // namespace stepscope::exporting
