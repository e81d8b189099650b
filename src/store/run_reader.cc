#include "store/run_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/file_system.h"
#include "base/json_fields.h"
#include "store/run_directory.h"
#include "store/stream_reader.h"

namespace stepscope::store {
namespace {

constexpr int64_t kDeferredStep = -2;   // STEPSCOPE_DEFERRED_STEP
constexpr int64_t kCancelledStep = -3;  // STEPSCOPE_CANCELLED_STEP

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Offset from CLOCK_MONOTONIC to the Unix epoch, from an object {monotonic_ns, realtime_ns}.
std::optional<int64_t> AnchorOffset(const nlohmann::json& anchor) {
  int64_t mono = JsonInt(anchor, "monotonic_ns", -1);
  int64_t real = JsonInt(anchor, "realtime_ns", -1);
  if (mono < 0 || real < 0) return std::nullopt;
  return real - mono;
}

double BitsToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// Per-thread pairing state while turning one stream's records into events.
struct ThreadState {
  std::vector<size_t> open_spans;           // event indices, innermost last
  std::vector<size_t> open_steps;           // event indices, innermost last
  size_t last_event = SIZE_MAX;             // where argument records attach
};

}  // namespace

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kSpan: return "span";
    case EventKind::kInstant: return "instant";
    case EventKind::kCounter: return "counter";
    case EventKind::kStep: return "step";
    case EventKind::kSample: return "sample";
  }
  return "unknown";
}

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kTrain: return "TRAIN";
    case Phase::kEval: return "EVAL";
    case Phase::kPredict: return "PREDICT";
    case Phase::kGlobal: return "GLOBAL";
  }
  return "GLOBAL";
}

uint32_t RunReader::InternName(std::string_view name) {
  auto it = name_index_.find(std::string(name));
  if (it != name_index_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  name_index_.emplace(std::string(name), id);
  return id;
}

StatusOr<RunReader> RunReader::Open(const std::string& path) { return Open(path, nullptr); }

StatusOr<RunReader> RunReader::Open(const std::string& path, RunSampleSink* samples) {
  if (!IsDirectory(path)) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0) {
      return NotARunDirectoryError(path, S_ISREG(st.st_mode));
    }
    return NotFoundError("run directory '" + path + "' does not exist; pass the directory that `stepscope run` printed");
  }
  RunReader reader;
  reader.InternName("");
  // Refuses what is not a run (a random manifest.json, garbage logs) with one line.
  STEPSCOPE_ASSIGN_OR_RETURN(RunNodes run, FindRunNodes(path));
  reader.problems_ = std::move(run.problems);
  for (const RunNode& node : run.nodes) STEPSCOPE_RETURN_IF_ERROR(reader.LoadNode(node.name, node.path, samples));
  std::stable_sort(reader.events_.begin(), reader.events_.end(),
                   [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
  return reader;
}

Status RunReader::LoadNode(const std::string& node_name, const std::string& directory, RunSampleSink* samples) {
  NodeInfo node{node_name, directory, ""};
  std::optional<int64_t> node_offset;
  auto manifest = ReadRegularFile(directory + "/" + kManifestFileName, Symlinks::kRefuse, kMaxManifestBytes);
  if (manifest.ok()) {
    node.manifest_json = *manifest;
    auto parsed = nlohmann::json::parse(*manifest, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      problems_.push_back("'" + directory + "/manifest.json' is not valid JSON; using each stream's own clock anchor");
    } else {
      node.name = JsonString(parsed, "node", node.name);
      if (node.name.empty()) node.name = node_name;
      node_offset = AnchorOffset(JsonObject(parsed, "clock"));
    }
  }
  if (!manifest.ok() && manifest.status().code() != StatusCode::kNotFound) {
    problems_.push_back(manifest.status().message());
  }
  const uint32_t node_index = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(node);
  if (samples != nullptr) samples->OnNode(node_index, nodes_.back());

  STEPSCOPE_ASSIGN_OR_RETURN(auto stream_names, ListStreams(directory));
  for (const std::string& stream_name : stream_names) {
    const uint32_t stream_index = static_cast<uint32_t>(streams_.size());
    StreamInfo info;
    info.node = node.name;
    info.name = stream_name;
    // Set up from the stream's description when its first block arrives (or after the scan when
    // it has none): clock, offset and the problems found doing so, reported after the store's.
    bool set_up = false;
    bool any_block = false;
    std::vector<std::string> setup_problems;
    std::optional<StreamClock> clock;
    int64_t offset_ns = 0;
    auto set_up_stream = [&](const StreamContents& contents) {
      set_up = true;
      info.meta_json = contents.meta_json;
      auto meta = nlohmann::json::parse(contents.meta_json, nullptr, false);
      double ticks_per_ns = 1.0;
      std::optional<int64_t> offset = node_offset;
      if (meta.is_object()) {
        info.pid = JsonInt(meta, "pid", -1);
        info.ppid = JsonInt(meta, "ppid", -1);
        info.is_system = JsonString(meta, "kind") == "system";
        ticks_per_ns = JsonDouble(meta, "ticks_per_ns", 1.0);
        // A rate outside any real clock's range is damage; fall back to 1 tick per ns.
        if (!(ticks_per_ns > 1e-3 && ticks_per_ns < 1e3)) ticks_per_ns = 1.0;
        if (!offset) offset = AnchorOffset(JsonObject(meta, "clock_anchor"));
      } else if (!contents.meta_json.empty() || any_block) {
        setup_problems.push_back("stream '" + stream_name + "' in '" + directory + "' lost its description; pid unknown");
      }
      if (!offset) {
        setup_problems.push_back("stream '" + stream_name + "' has no clock anchor; its times are monotonic, not Unix time");
        offset = 0;
      }
      offset_ns = *offset;
      clock.emplace(contents.clock_pairs, ticks_per_ns);
      if (samples != nullptr) samples->OnStream(node_index, stream_index, info.is_system, contents.block_records, contents.strings.size());
    };

    std::unordered_map<uint32_t, uint32_t> local_to_run;
    uint64_t missing_names = 0, orphan_ends = 0, cancelled_steps = 0;
    const size_t first_event_of_stream = events_.size();
    const StreamContents* strings_of = nullptr;  // the scanning stream's contents, during callbacks
    auto name_of = [&](uint32_t local) -> uint32_t {
      if (local == 0) return 0;
      auto it = local_to_run.find(local);
      if (it != local_to_run.end()) return it->second;
      auto text = strings_of->strings.find(local);
      uint32_t id;
      if (text == strings_of->strings.end()) {
        ++missing_names;
        id = InternName("<unknown name #" + std::to_string(local) + ">");
      } else {
        id = InternName(text->second);
      }
      local_to_run.emplace(local, id);
      return id;
    };
    const uint32_t step_names[kMaxPhase + 1] = {
        InternName("Step:ModeKeys.TRAIN"), InternName("Step:ModeKeys.EVAL"),
        InternName("Step:ModeKeys.PREDICT"), InternName("Step:ModeKeys.GLOBAL")};

    std::unordered_map<uint32_t, ThreadState> threads;
    int64_t last_ns = 0;
    auto on_block = [&](const StreamContents& contents, const DecodedBlock& block) {
      any_block = true;
      if (!set_up) set_up_stream(contents);
      strings_of = &contents;
      ThreadState& thread = threads[block.tid];
      for (const RawRecord& record : block.records) {
        info.records++;
        const int64_t ns = clock->ToMonotonicNs(record.ticks) + offset_ns;
        last_ns = std::max(last_ns, ns);
        if (samples != nullptr && static_cast<RecordKind>(record.kind) == RecordKind::kSample) {
          const uint32_t metric = name_of(record.name_id);
          samples->OnSample(node_index, metric, names_[metric], ns, BitsToDouble(record.value));
          continue;
        }
        auto add_event = [&](EventKind kind) -> Event& {
          events_.emplace_back();
          Event& event = events_.back();
          event.kind = kind;
          event.start_ns = event.end_ns = ns;
          event.stream = stream_index;
          event.tid = block.tid;
          thread.last_event = events_.size() - 1;
          return event;
        };
        auto add_arg = [&](EventArg arg) {
          if (thread.last_event == SIZE_MAX) return;
          Event& owner = events_[thread.last_event];
          arg.key = name_of(record.name_id);
          if (owner.arg_count == 0) {
            owner.first_arg = static_cast<uint32_t>(args_.size());
          } else if (owner.first_arg + owner.arg_count != args_.size() || owner.arg_count == UINT16_MAX) {
            return;  // an event's arguments are stored contiguously; late ones (after an end) are dropped
          }
          args_.push_back(arg);
          owner.arg_count++;
        };
        switch (static_cast<RecordKind>(record.kind)) {
          case RecordKind::kBegin: {
            Event& event = add_event(EventKind::kSpan);
            event.name = name_of(record.name_id);
            event.end_ns = INT64_MIN;
            thread.open_spans.push_back(events_.size() - 1);
            break;
          }
          case RecordKind::kEnd: {
            uint32_t name = name_of(record.name_id);
            auto& open = thread.open_spans;
            auto it = std::find_if(open.rbegin(), open.rend(), [&](size_t i) { return events_[i].name == name; });
            if (it == open.rend()) {
              ++orphan_ends;
              break;
            }
            events_[*it].end_ns = ns;
            thread.last_event = *it;
            // Spans opened inside it and never ended (badly nested begin/end calls) end with it.
            for (auto inner = open.rbegin(); inner != it; ++inner) {
              events_[*inner].end_ns = ns;
              events_[*inner].unfinished = true;
            }
            open.erase(std::next(it).base(), open.end());
            break;
          }
          case RecordKind::kInstant:
            add_event(EventKind::kInstant).name = name_of(record.name_id);
            break;
          case RecordKind::kCounter:
          case RecordKind::kSample: {
            bool sample = static_cast<RecordKind>(record.kind) == RecordKind::kSample;
            Event& event = add_event(sample ? EventKind::kSample : EventKind::kCounter);
            event.name = name_of(record.name_id);
            event.value = BitsToDouble(record.value);
            break;
          }
          case RecordKind::kStepBegin: {
            Event& event = add_event(EventKind::kStep);
            event.phase = static_cast<Phase>(record.phase);
            event.name = step_names[record.phase];
            event.step = static_cast<int64_t>(record.value);
            event.end_ns = INT64_MIN;
            thread.open_steps.push_back(events_.size() - 1);
            break;
          }
          case RecordKind::kStepEnd: {
            // An end closes the innermost open step of its phase, or one whose phase and number
            // were deferred to its end (STEPSCOPE_DEFERRED_STEP); the end's phase and number win.
            auto& open = thread.open_steps;
            auto it = std::find_if(open.rbegin(), open.rend(), [&](size_t i) {
              return events_[i].step == kDeferredStep || events_[i].phase == static_cast<Phase>(record.phase);
            });
            if (it == open.rend()) {
              ++orphan_ends;
              break;
            }
            Event& step = events_[*it];
            step.end_ns = ns;
            if (step.step == kDeferredStep) {
              step.phase = static_cast<Phase>(record.phase);
              step.name = step_names[record.phase];
              step.step = static_cast<int64_t>(record.value);
              if (step.step == kCancelledStep) ++cancelled_steps;
            }
            thread.last_event = *it;
            open.erase(std::next(it).base());
            break;
          }
          case RecordKind::kArgInt: {
            EventArg arg;
            arg.type = EventArg::Type::kInt;
            arg.int_value = static_cast<int64_t>(record.value);
            add_arg(arg);
            break;
          }
          case RecordKind::kArgDouble: {
            EventArg arg;
            arg.type = EventArg::Type::kDouble;
            arg.double_value = BitsToDouble(record.value);
            add_arg(arg);
            break;
          }
          case RecordKind::kArgString: {
            EventArg arg;
            arg.type = EventArg::Type::kString;
            arg.string_value = name_of(static_cast<uint32_t>(record.value));
            add_arg(arg);
            break;
          }
        }
      }
    };
    auto contents = ScanStream(directory, stream_name, on_block);
    if (!contents.ok()) {
      problems_.push_back(contents.status().message() + "; stream '" + stream_name + "' skipped");
      events_.resize(first_event_of_stream);  // nothing of a skipped stream is kept
      continue;
    }
    if (!set_up) set_up_stream(*contents);
    for (const std::string& problem : contents->problems) problems_.push_back(problem);
    for (std::string& problem : setup_problems) problems_.push_back(std::move(problem));
    info.dropped_events = contents->dropped_events;
    info.dropped_write_failed = contents->dropped_write_failed;
    info.unwritten = contents->unwritten;
    info.log_bytes = contents->log_bytes;
    info.ring_bytes = contents->ring_bytes;
    info.block_bytes = contents->frame_bytes[static_cast<size_t>(FrameType::kBlock)];
    info.string_bytes = contents->frame_bytes[static_cast<size_t>(FrameType::kStrings)];
    info.other_bytes = contents->log_bytes - info.block_bytes - info.string_bytes;
    // Whatever is still open when the stream ends was cut short (the process exited or died).
    for (auto& [tid, thread] : threads) {
      auto close_unfinished = [&](size_t index) {
        events_[index].end_ns = std::max(last_ns, events_[index].start_ns);
        events_[index].unfinished = true;
        if (events_[index].step == kDeferredStep) events_[index].step = -1;  // never learnt its number
      };
      for (size_t index : thread.open_spans) close_unfinished(index);
      for (size_t index : thread.open_steps) close_unfinished(index);
    }
    if (cancelled_steps > 0) {
      // Steps that their instrumentation withdrew are not steps (their arguments stay unused).
      events_.erase(std::remove_if(events_.begin() + static_cast<std::ptrdiff_t>(first_event_of_stream), events_.end(),
                                   [](const Event& e) { return e.kind == EventKind::kStep && e.step == kCancelledStep; }),
                    events_.end());
    }
    if (missing_names > 0) {
      problems_.push_back("stream '" + stream_name + "': " + std::to_string(missing_names) + " names lost from the string table");
    }
    if (orphan_ends > 0) {
      problems_.push_back("stream '" + stream_name + "': " + std::to_string(orphan_ends) + " end records had no matching begin");
    }
    streams_.push_back(std::move(info));
  }
  return OkStatus();
}

std::vector<EventArg> RunReader::Args(const Event& event) const {
  if (event.arg_count == 0 || event.first_arg + event.arg_count > args_.size()) return {};
  return std::vector<EventArg>(args_.begin() + event.first_arg, args_.begin() + event.first_arg + event.arg_count);
}

std::vector<const Event*> RunReader::Query(const EventQuery& query) const {
  std::vector<const Event*> out;
  for (const Event& event : events_) {
    if (query.end_ns && event.start_ns > *query.end_ns) break;  // sorted by start
    if (query.start_ns && event.end_ns < *query.start_ns) continue;
    if ((query.kinds & (1u << static_cast<uint32_t>(event.kind))) == 0) continue;
    const StreamInfo& stream = streams_[event.stream];
    if (query.node && stream.node != *query.node) continue;
    if (query.pid && stream.pid != *query.pid) continue;
    if (query.tid && event.tid != *query.tid) continue;
    out.push_back(&event);
  }
  return out;
}

}  // namespace stepscope::store
