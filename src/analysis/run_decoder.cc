#include "analysis/run_decoder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/gpu_stream_events.h"
#include "base/file_system.h"
#include "base/json_fields.h"
#include "store/ring_file.h"
#include "store/run_directory.h"
#include "store/stream_reader.h"

namespace stepscope::analysis {
namespace {

constexpr int64_t kDeferredStep = -2;   // STEPSCOPE_DEFERRED_STEP
constexpr int64_t kCancelledStep = -3;  // STEPSCOPE_CANCELLED_STEP

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

double BitsToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

struct PendingEvent {
  RecordedEvent event;
  std::vector<RecordedArg> args;
};

// Pairing state of one thread of a stream.
struct ThreadState {
  std::vector<PendingEvent> open_spans;  // innermost last
  std::vector<PendingEvent> open_steps;  // innermost last
  // The thread's latest complete event: handed over once the thread records another event
  // (until then arguments may still arrive for it).
  std::optional<PendingEvent> last_closed;
  // Where argument records attach: the thread's latest event.
  enum class Target : uint8_t { kNone, kOpenSpan, kOpenStep, kLastClosed } target = Target::kNone;
};

}  // namespace

struct RunDecoder::StreamState {
  store::StreamContents contents;
  store::StreamCursor cursor;
  std::string directory;
  bool set_up = false;
  bool done = false;  // its writer is gone and everything it wrote was handed over
  double ticks_per_ns = 1.0;
  int64_t offset_ns = 0;
  size_t clock_pairs = 0;  // calibration pairs `clock` was built from
  std::optional<store::StreamClock> clock;
  std::unordered_map<uint32_t, uint32_t> local_to_run;
  std::unordered_map<uint32_t, ThreadState> threads;
};

const char* RecordedKindName(RecordedKind kind) {
  switch (kind) {
    case RecordedKind::kSpan: return "span";
    case RecordedKind::kInstant: return "instant";
    case RecordedKind::kCounter: return "counter";
    case RecordedKind::kStep: return "step";
    case RecordedKind::kSample: return "sample";
  }
  return "unknown";
}

RunDecoder::~RunDecoder() = default;

uint32_t RunDecoder::InternName(std::string_view name) {
  auto it = name_index_.find(std::string(name));
  if (it != name_index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  name_index_.emplace(std::string(name), id);
  return id;
}

void RunDecoder::AddProblem(std::string problem) {
  // A live run is read again and again; what is wrong with it is said once.
  if (problems_seen_.emplace(problem, true).second) problems_.push_back(std::move(problem));
}

bool RunDecoder::NodeFinished(uint32_t node) const {
  if (node_final_[node]) return true;
  if (nodes_[node].has_manifest) return false;
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].node == node && !states_[i]->done) return false;
  }
  return true;
}

bool RunDecoder::finished() const {
  for (uint32_t node = 0; node < nodes_.size(); ++node) {
    if (!NodeFinished(node)) return false;
  }
  return std::all_of(states_.begin(), states_.end(), [](const auto& state) { return state->done; });
}

StatusOr<std::unique_ptr<RunDecoder>> RunDecoder::Open(const std::string& path) {
  if (!IsDirectory(path)) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0) return store::NotARunDirectoryError(path, S_ISREG(st.st_mode));
    return NotFoundError("run directory '" + path + "' does not exist; pass the directory that `stepscope run` printed");
  }
  std::unique_ptr<RunDecoder> decoder(new RunDecoder());
  decoder->path_ = path;
  decoder->InternName("");
  STEPSCOPE_RETURN_IF_ERROR(decoder->PollNodes());
  return decoder;
}

Status RunDecoder::PollNodes() {
  // Refuses what is not a run (a random manifest.json, garbage logs) with one line.
  STEPSCOPE_ASSIGN_OR_RETURN(store::RunNodes run, store::FindRunNodes(path_));
  for (std::string& problem : run.problems) AddProblem(std::move(problem));
  for (const store::RunNode& found : run.nodes) {
    auto known = std::find_if(nodes_.begin(), nodes_.end(),
                              [&](const RecordedNode& node) { return node.directory == found.path; });
    size_t index = static_cast<size_t>(known - nodes_.begin());
    if (known == nodes_.end()) {
      RecordedNode added;
      added.name = found.name;
      added.directory = found.path;
      nodes_.push_back(std::move(added));
      node_final_.push_back(false);
    } else if (node_final_[index]) {
      continue;  // its launcher wrote its last word
    }
    RecordedNode& node = nodes_[index];
    auto manifest = store::ReadRunManifest(found.path);
    if (manifest.ok()) {
      node.has_manifest = true;
      node.manifest = std::move(*manifest);
      if (!node.manifest.node.empty()) node.name = node.manifest.node;
      node_final_[index] = store::IsFinal(node.manifest.status);
    } else if (manifest.status().code() != StatusCode::kNotFound) {
      AddProblem(manifest.status().message() + "; using each stream's own clock anchor");
    }
    // Read until it says something: the node's local rank 0 writes it once the job's processes
    // exchanged clocks, seconds into the job.
    if (node.clock.state == ClockAlignmentState::kNone) {
      ClockAlignment clock = AlignClock(store::ReadClockSync(found.path));
      if (!node.clock_fixed) {
        node.clock = std::move(clock);
      } else if (clock.state != ClockAlignmentState::kNone) {
        node.clock_late = true;
      }
    }
  }
  return OkStatus();
}

Status RunDecoder::Poll(RecordedEventSink& sink) {
  STEPSCOPE_RETURN_IF_ERROR(PollNodes());
  for (uint32_t node = 0; node < nodes_.size(); ++node) {
    auto names = store::ListStreams(nodes_[node].directory);
    if (!names.ok()) {
      AddProblem(names.status().message() + "; the node's streams are not read");
      continue;
    }
    for (const std::string& name : *names) {
      const std::string key = nodes_[node].directory + "/" + name;
      auto [it, inserted] = stream_index_.emplace(key, static_cast<uint32_t>(streams_.size()));
      if (inserted) {
        RecordedStream stream;
        stream.node = node;
        stream.name = name;
        streams_.push_back(std::move(stream));
        auto state = std::make_unique<StreamState>();
        state->contents.name = name;
        state->directory = nodes_[node].directory;
        states_.push_back(std::move(state));
      }
      if (!states_[it->second]->done) PollStream(it->second, sink);
    }
  }
  return OkStatus();
}

void RunDecoder::PollStream(uint32_t stream_index, RecordedEventSink& sink) {
  RecordedStream& info = streams_[stream_index];
  StreamState& state = *states_[stream_index];
  RecordedNode& node = nodes_[info.node];
  // Decided before reading: a writer found gone has written everything we are about to read.
  const bool writer_gone = node_final_[info.node] || !store::RingWriterAlive(state.directory, info.name);
  const store::LogTail tail = writer_gone ? store::LogTail::kFinal : store::LogTail::kMayGrow;
  const std::string& stream_name = info.name;
  const std::string& directory = state.directory;

  std::vector<std::string> setup_problems;
  auto set_up_stream = [&](const store::StreamContents& contents) {
    state.set_up = true;
    info.meta_json = contents.meta_json;
    auto meta = nlohmann::json::parse(contents.meta_json, nullptr, false);
    std::optional<int64_t> offset = node.manifest.ClockOffsetNs();
    if (meta.is_object()) {
      info.pid = JsonInt(meta, "pid", -1);
      info.ppid = JsonInt(meta, "ppid", -1);
      info.is_system = JsonString(meta, "kind") == "system";
      state.ticks_per_ns = JsonDouble(meta, "ticks_per_ns", 1.0);
      // A rate outside any real clock's range is damage; fall back to 1 tick per ns.
      if (!(state.ticks_per_ns > 1e-3 && state.ticks_per_ns < 1e3)) state.ticks_per_ns = 1.0;
      if (!offset) {
        const nlohmann::json anchor = JsonObject(meta, "clock_anchor");
        const int64_t mono = JsonInt(anchor, "monotonic_ns", -1);
        const int64_t real = JsonInt(anchor, "realtime_ns", -1);
        if (mono >= 0 && real >= 0) offset = real - mono;
      }
    } else {
      setup_problems.push_back("stream '" + stream_name + "' in '" + directory + "' lost its description; pid unknown");
    }
    if (!offset) {
      setup_problems.push_back("stream '" + stream_name + "' has no clock anchor; its times are monotonic, not Unix time");
      offset = 0;
    }
    // Onto the job's time axis: the node's measured offset to the reference node's clock.
    node.clock_fixed = true;
    state.offset_ns = *offset + node.clock.offset_ns;
    sink.OnStream(stream_index, contents.block_records, contents.strings.size());
  };

  uint64_t missing_names = 0, orphan_ends = 0;
  auto name_of = [&](uint32_t local) -> uint32_t {
    if (local == 0) return 0;
    auto it = state.local_to_run.find(local);
    if (it != state.local_to_run.end()) return it->second;
    auto text = state.contents.strings.find(local);
    if (text == state.contents.strings.end()) {
      // Not remembered: the name may still arrive while the stream is written.
      ++missing_names;
      return InternName("<unknown name #" + std::to_string(local) + ">");
    }
    const uint32_t id = InternName(text->second);
    state.local_to_run.emplace(local, id);
    return id;
  };
  const uint32_t step_names[store::kMaxPhase + 1] = {
      InternName("Step:ModeKeys.TRAIN"), InternName("Step:ModeKeys.EVAL"), InternName("Step:ModeKeys.PREDICT"),
      InternName("Step:ModeKeys.GLOBAL")};
  auto emit = [&](const PendingEvent& pending, bool provisional) {
    sink.OnEvent(stream_index, pending.event, pending.args, provisional);
  };
  auto flush_last_closed = [&](ThreadState& thread) {
    if (thread.last_closed) emit(*thread.last_closed, false);
    thread.last_closed.reset();
  };

  auto prepare = [&](const store::StreamContents& contents) {
    if (!state.set_up) set_up_stream(contents);
    if (!state.clock || state.clock_pairs != contents.clock_pairs.size()) {
      state.clock.emplace(contents.clock_pairs, state.ticks_per_ns);
      state.clock_pairs = contents.clock_pairs.size();
    }
  };
  auto on_block = [&](const store::StreamContents& contents, const store::DecodedBlock& block) {
    prepare(contents);
    ThreadState& thread = state.threads[block.tid];
    for (const store::RawRecord& record : block.records) {
      info.records++;
      const int64_t ns = state.clock->ToMonotonicNs(record.ticks) + state.offset_ns;
      info.last_ns = std::max(info.last_ns, ns);
      const auto kind = static_cast<store::RecordKind>(record.kind);
      if (kind == store::RecordKind::kSample) {
        sink.OnSample(stream_index, name_of(record.name_id), ns, BitsToDouble(record.value));
        continue;
      }
      auto new_event = [&](RecordedKind event_kind) {
        PendingEvent pending;
        pending.event.kind = event_kind;
        pending.event.start_ns = pending.event.end_ns = ns;
        pending.event.tid = block.tid;
        return pending;
      };
      auto add_arg = [&](RecordedArg arg) {
        std::vector<RecordedArg>* args = nullptr;
        switch (thread.target) {
          case ThreadState::Target::kNone: return;
          case ThreadState::Target::kOpenSpan: args = &thread.open_spans.back().args; break;
          case ThreadState::Target::kOpenStep: args = &thread.open_steps.back().args; break;
          case ThreadState::Target::kLastClosed: args = &thread.last_closed->args; break;
        }
        if (args->size() >= UINT16_MAX) return;
        arg.key = name_of(record.name_id);
        args->push_back(arg);
      };
      switch (kind) {
        case store::RecordKind::kBegin: {
          flush_last_closed(thread);
          PendingEvent span = new_event(RecordedKind::kSpan);
          span.event.name = name_of(record.name_id);
          thread.open_spans.push_back(std::move(span));
          thread.target = ThreadState::Target::kOpenSpan;
          break;
        }
        case store::RecordKind::kEnd: {
          const uint32_t name = name_of(record.name_id);
          auto& open = thread.open_spans;
          auto it = std::find_if(open.rbegin(), open.rend(), [&](const PendingEvent& p) { return p.event.name == name; });
          if (it == open.rend()) {
            ++orphan_ends;
            break;
          }
          flush_last_closed(thread);
          // Spans opened inside it and never ended (badly nested begin/end calls) end with it.
          for (auto inner = open.rbegin(); inner != it; ++inner) {
            inner->event.end_ns = ns;
            inner->event.unfinished = true;
            emit(*inner, false);
          }
          it->event.end_ns = ns;
          thread.last_closed = std::move(*it);
          thread.target = ThreadState::Target::kLastClosed;
          open.erase(std::next(it).base(), open.end());
          break;
        }
        case store::RecordKind::kInstant:
        case store::RecordKind::kCounter: {
          flush_last_closed(thread);
          PendingEvent event =
              new_event(kind == store::RecordKind::kInstant ? RecordedKind::kInstant : RecordedKind::kCounter);
          event.event.name = name_of(record.name_id);
          if (kind == store::RecordKind::kCounter) event.event.value = BitsToDouble(record.value);
          thread.last_closed = std::move(event);
          thread.target = ThreadState::Target::kLastClosed;
          break;
        }
        case store::RecordKind::kStepBegin: {
          flush_last_closed(thread);
          PendingEvent step = new_event(RecordedKind::kStep);
          step.event.phase = static_cast<store::Phase>(record.phase);
          step.event.name = step_names[record.phase];
          step.event.step = static_cast<int64_t>(record.value);
          thread.open_steps.push_back(std::move(step));
          thread.target = ThreadState::Target::kOpenStep;
          break;
        }
        case store::RecordKind::kStepEnd: {
          // An end closes the innermost open step of its phase, or one whose phase and number
          // were deferred to its end (STEPSCOPE_DEFERRED_STEP); the end's phase and number win.
          auto& open = thread.open_steps;
          auto it = std::find_if(open.rbegin(), open.rend(), [&](const PendingEvent& p) {
            return p.event.step == kDeferredStep || p.event.phase == static_cast<store::Phase>(record.phase);
          });
          if (it == open.rend()) {
            ++orphan_ends;
            break;
          }
          flush_last_closed(thread);
          PendingEvent step = std::move(*it);
          open.erase(std::next(it).base());
          step.event.end_ns = ns;
          if (step.event.step == kDeferredStep) {
            step.event.phase = static_cast<store::Phase>(record.phase);
            step.event.name = step_names[record.phase];
            step.event.step = static_cast<int64_t>(record.value);
          }
          if (step.event.step == kCancelledStep) {
            // Withdrawn by its instrumentation: not a step (arguments after it are dropped too).
            thread.target = ThreadState::Target::kNone;
            break;
          }
          thread.last_closed = std::move(step);
          thread.target = ThreadState::Target::kLastClosed;
          break;
        }
        case store::RecordKind::kArgInt: {
          RecordedArg arg;
          arg.type = RecordedArg::Type::kInt;
          arg.int_value = static_cast<int64_t>(record.value);
          add_arg(arg);
          break;
        }
        case store::RecordKind::kArgDouble: {
          RecordedArg arg;
          arg.type = RecordedArg::Type::kDouble;
          arg.double_value = BitsToDouble(record.value);
          add_arg(arg);
          break;
        }
        case store::RecordKind::kArgString: {
          RecordedArg arg;
          arg.type = RecordedArg::Type::kString;
          arg.string_value = name_of(static_cast<uint32_t>(record.value));
          add_arg(arg);
          break;
        }
        case store::RecordKind::kSample:
          break;  // handled above
      }
    }
  };

  // Version 2 GPU streams: each activity row is the span its version-1 records decoded to
  // (gpu_stream_events.h), complete when read, so handed over at once.
  std::optional<GpuRowArgKeys> gpu_keys;
  std::vector<RecordedArg> gpu_args;
  uint64_t lost_launch_configs = 0;
  auto on_gpu_rows = [&](const store::StreamContents& contents, std::span<const store::GpuActivityRow> rows) {
    prepare(contents);
    if (!gpu_keys) {
      GpuRowArgKeys& keys = gpu_keys.emplace();
      keys.correlation = InternName("correlation");
      for (int d = 0; d < 3; ++d) {
        keys.grid[d] = InternName(std::string("grid_") + static_cast<char>('x' + d));
        keys.block[d] = InternName(std::string("block_") + static_cast<char>('x' + d));
      }
      keys.registers = InternName("registers per thread");
      keys.shared_memory = InternName("shared memory");
      keys.bytes = InternName("bytes");
      keys.cbid = InternName("cbid");
      keys.device = InternName("device");
      keys.stream = InternName("stream");
    }
    for (const store::GpuActivityRow& row : rows) {
      info.records++;
      RecordedEvent event;
      event.kind = RecordedKind::kSpan;
      event.start_ns = state.clock->ToMonotonicNs(row.start_ticks) + state.offset_ns;
      event.end_ns = state.clock->ToMonotonicNs(row.end_ticks) + state.offset_ns;
      info.last_ns = std::max({info.last_ns, event.start_ns, event.end_ns});
      event.tid = store::GpuRowTrack(row);
      event.name = name_of(row.name_id);
      const store::GpuLaunchConfig* config = nullptr;
      if (row.kind == store::GpuRowKind::kKernel) {
        auto found = contents.gpu_launch_configs.find(row.config_id);
        if (found != contents.gpu_launch_configs.end()) config = &found->second;
        else ++lost_launch_configs;
      }
      gpu_args.clear();
      GpuRowArgs(row, config, *gpu_keys, gpu_args);
      sink.OnEvent(stream_index, event, gpu_args, false);
    }
  };

  Status scanned = store::FollowStream(directory, state.contents, state.cursor, tail, on_block, on_gpu_rows);
  if (!scanned.ok()) {
    if (!writer_gone) return;  // nothing readable yet: a process creating its stream right now
    AddProblem(scanned.message() + "; stream '" + stream_name + "' skipped");
    state.done = true;
    info.writer_gone = true;
    return;
  }
  const store::StreamContents& contents = state.contents;
  if (!state.set_up && (writer_gone || !contents.meta_json.empty())) set_up_stream(contents);
  for (const std::string& problem : contents.problems) AddProblem(problem);
  for (std::string& problem : setup_problems) AddProblem(std::move(problem));
  info.dropped_events = contents.dropped_events;
  info.dropped_write_failed = contents.dropped_write_failed;
  info.unwritten = contents.unwritten;
  info.log_bytes = contents.log_bytes;
  info.ring_bytes = contents.ring_bytes;
  info.block_bytes = contents.frame_bytes[static_cast<size_t>(store::FrameType::kBlock)] +
                     contents.frame_bytes[static_cast<size_t>(store::FrameType::kGpuActivity)];
  info.string_bytes = contents.frame_bytes[static_cast<size_t>(store::FrameType::kStrings)];
  info.other_bytes = contents.log_bytes - std::min(contents.log_bytes, info.block_bytes + info.string_bytes);
  info.writer_gone = writer_gone;

  // What is still open may yet change: handed over as provisional, or, once the writer is gone,
  // as its last word (cut short when the process exited or died).
  for (auto& [tid, thread] : state.threads) {
    auto cut_short = [&](PendingEvent event) {
      event.event.end_ns = std::max(info.last_ns, event.event.start_ns);
      event.event.unfinished = true;
      if (event.event.step == kDeferredStep) event.event.step = -1;  // never learnt its number
      return event;
    };
    if (thread.last_closed) emit(*thread.last_closed, !writer_gone);
    for (const PendingEvent& span : thread.open_spans) emit(cut_short(span), !writer_gone);
    for (const PendingEvent& step : thread.open_steps) emit(cut_short(step), !writer_gone);
    if (writer_gone) thread = ThreadState{};
  }
  if (writer_gone) {
    state.done = true;
    state.threads.clear();
  }
  if (missing_names > 0 && writer_gone) {
    AddProblem("stream '" + stream_name + "': " + std::to_string(missing_names) + " names lost from the string table");
  }
  if (lost_launch_configs > 0) {
    AddProblem("stream '" + stream_name + "': " + std::to_string(lost_launch_configs) +
               " kernels lost their launch configuration (declared in a damaged frame); their grid, block, "
               "registers and shared memory are not known");
  }
  if (orphan_ends > 0) {
    AddProblem("stream '" + stream_name + "': " + std::to_string(orphan_ends) + " end records had no matching begin");
  }
}

}  // namespace stepscope::analysis
