#include "importers/kineto/kineto_file_parser.h"

#include <charconv>
#include <cstring>

#include "importers/kineto/kineto_time.h"

namespace stepscope::analysis {
namespace {

using simdjson::error_code;
namespace od = simdjson::ondemand;

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr size_t kUnknownOffset = static_cast<size_t>(-1);

// What a kept arg feeds besides the model's args.
enum class ArgUse : uint8_t { kPlain, kDevice, kStream, kCorrelation };

struct KeptArg {
  std::string_view key;
  ArgUse use;
};

// The args FORMATS.md §2 names as useful to rules and reports; the rest of Kineto's args
// ("Concrete Inputs", "Ev Idx", CUPTI counters...) are dropped to keep the model small.
constexpr KeptArg kKeptArgs[] = {
    {"correlation", ArgUse::kCorrelation},
    {"External id", ArgUse::kPlain},
    {"device", ArgUse::kDevice},
    {"stream", ArgUse::kStream},
    {"grid", ArgUse::kPlain},
    {"block", ArgUse::kPlain},
    {"registers per thread", ArgUse::kPlain},
    {"shared memory", ArgUse::kPlain},
    {"blocks per SM", ArgUse::kPlain},
    {"warps per SM", ArgUse::kPlain},
    {"est. achieved occupancy %", ArgUse::kPlain},
    {"bytes", ArgUse::kPlain},
    {"memory bandwidth (GB/s)", ArgUse::kPlain},
    {"Input Dims", ArgUse::kPlain},
};
constexpr size_t kKeptArgCount = sizeof(kKeptArgs) / sizeof(kKeptArgs[0]);

// The key's bytes as written, without quotes. Keys with escapes keep their backslashes, which
// is fine: none of the keys we look for has one.
std::string_view RawKey(od::raw_json_string key) {
  const char* begin = key.raw();
  const char* end = begin;
  while (*end != '"') {
    if (*end == '\\') ++end;  // skip the escaped character; the padding keeps this in bounds
    ++end;
  }
  return {begin, static_cast<size_t>(end - begin)};
}

// True when the raw (still escaped) key is exactly `expected`, without first scanning the key
// for its closing quote: the importer reads ~10 keys per event, and that scan was a tenth of its
// time. The document's padding (SIMDJSON_PADDING, 64 bytes) keeps the read in bounds for the
// short keys compared here.
template <size_t N>
inline bool KeyIs(const char* raw, const char (&expected)[N]) {
  return std::memcmp(raw, expected, N - 1) == 0 && raw[N - 1] == '"';
}

enum class EventField : uint8_t { kOther, kPh, kCat, kName, kPid, kTid, kTs, kDur, kId, kArgs };

EventField EventFieldOf(const char* raw) {
  switch (raw[0]) {
    case 'p':
      if (KeyIs(raw, "ph")) return EventField::kPh;
      if (KeyIs(raw, "pid")) return EventField::kPid;
      break;
    case 'c':
      if (KeyIs(raw, "cat")) return EventField::kCat;
      break;
    case 'n':
      if (KeyIs(raw, "name")) return EventField::kName;
      break;
    case 't':
      if (KeyIs(raw, "ts")) return EventField::kTs;
      if (KeyIs(raw, "tid")) return EventField::kTid;
      break;
    case 'd':
      if (KeyIs(raw, "dur")) return EventField::kDur;
      break;
    case 'i':
      if (KeyIs(raw, "id")) return EventField::kId;
      break;
    case 'a':
      if (KeyIs(raw, "args")) return EventField::kArgs;
      break;
    default:
      break;
  }
  return EventField::kOther;
}

// Index into kKeptArgs, or kKeptArgCount. Most of Kineto's args are not kept; switching on the
// first byte turns most of them away at once and leaves comparisons of known length, which
// the compiler inlines (a memcmp call per candidate cost 4 % of the import).
constexpr size_t IndexOfKeptArg(std::string_view key) {
  for (size_t i = 0; i < kKeptArgCount; ++i) {
    if (kKeptArgs[i].key == key) return i;
  }
  return kKeptArgCount;
}

size_t KeptArgIndex(const char* raw) {
#define STEPSCOPE_KEPT(literal)                                                       \
  do {                                                                                \
    constexpr size_t kIndex = IndexOfKeptArg(literal);                                \
    static_assert(kIndex < kKeptArgCount, literal " is not in kKeptArgs");           \
    if (KeyIs(raw, literal)) return kIndex;                                           \
  } while (false)
  switch (raw[0]) {
    case 'c': STEPSCOPE_KEPT("correlation"); break;
    case 'E': STEPSCOPE_KEPT("External id"); break;
    case 'd': STEPSCOPE_KEPT("device"); break;
    case 's':
      STEPSCOPE_KEPT("stream");
      STEPSCOPE_KEPT("shared memory");
      break;
    case 'g': STEPSCOPE_KEPT("grid"); break;
    case 'b':
      STEPSCOPE_KEPT("block");
      STEPSCOPE_KEPT("blocks per SM");
      STEPSCOPE_KEPT("bytes");
      break;
    case 'r': STEPSCOPE_KEPT("registers per thread"); break;
    case 'w': STEPSCOPE_KEPT("warps per SM"); break;
    case 'e': STEPSCOPE_KEPT("est. achieved occupancy %"); break;
    case 'm': STEPSCOPE_KEPT("memory bandwidth (GB/s)"); break;
    case 'I': STEPSCOPE_KEPT("Input Dims"); break;
    default: break;
  }
#undef STEPSCOPE_KEPT
  return kKeptArgCount;
}

// simdjson's buffers (about 5 bytes per input byte for the largest file seen) are kept per
// thread rather than per importer: a rank's trace after another's, or the next import in a
// long-lived process, then reuses memory that is already mapped, instead of page-faulting a
// fresh copy in (a third of the time of a one-file import was those faults).
simdjson::ondemand::parser& ThreadParser() {
  static thread_local simdjson::ondemand::parser parser;
  return parser;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

bool IsGpuOp(std::string_view cat) { return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset"; }

}  // namespace

KinetoFileParser::KinetoFileParser(ModelBuilder& builder) : builder_(builder) {
  ids_.cpu_functions = builder_.Intern("cpu_functions");
  ids_.step_train = builder_.Intern("Step:ModeKeys.TRAIN");
  ids_.user_annotation = builder_.Intern("user_annotation");
  ids_.python_function = builder_.Intern("python_function");
  ids_.cuda_runtime = builder_.Intern("cuda_runtime");
  ids_.instant = builder_.Intern("instant");
  ids_.counter_series = builder_.Intern("series");
  ids_.counter_value = builder_.Intern("value");
  ids_.step_num = builder_.Intern("step_num");
  ids_.annotation = builder_.Intern("annotation");
  kept_arg_ids_.reserve(kKeptArgCount);
  for (const KeptArg& kept : kKeptArgs) kept_arg_ids_.push_back(builder_.Intern(kept.key));
}

StringId KinetoFileParser::GpuPhase(int32_t device) {
  if (device < 0) device = 0;
  if (static_cast<size_t>(device) >= gpu_phase_by_device_.size()) {
    if (device > 4096) return builder_.Intern("gpu_functions-dev:" + std::to_string(device));
    gpu_phase_by_device_.resize(device + 1, kEmptyString);
  }
  StringId& id = gpu_phase_by_device_[device];
  if (id == kEmptyString) id = builder_.Intern("gpu_functions-dev:" + std::to_string(device));
  return id;
}

StringId KinetoFileParser::PhaseFromText(std::string_view text, StringId id) {
  // Text from the file must not pass for a step phase: the model takes every "Step:ModeKeys.*"
  // phase as a step, and these have no step number.
  if (!text.starts_with("Step:ModeKeys.")) return id;
  return builder_.Intern("cat:" + std::string(text));
}

int64_t KinetoFileParser::TrackId(od::value value, KinetoFile* out, bool* ok) {
  int64_t number = 0;
  if (value.get_int64().get(number) == simdjson::SUCCESS) return number;
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    *ok = false;
    return 0;
  }
  // Kineto's own tracks ("Spans", "Traces", "PyTorch Profiler") and the legacy "CPU functions"
  // have string ids; give each a negative number so they never collide with a real pid/tid.
  auto [it, inserted] = out->string_track_ids.emplace(std::string(text), 0);
  if (inserted) it->second = -static_cast<int64_t>(out->string_track_ids.size());
  return it->second;
}

error_code KinetoFileParser::ParseEvent(od::object object, KinetoFile* out) {
  char ph = 0;
  std::string_view cat, name;
  bool has_cat = false, has_ts = false, has_dur = false, has_id = false;
  int64_t pid = 0, tid = 0, ts_ns = 0, dur_ns = 0, flow_id = 0;
  int64_t device = -1, stream = -1, correlation = -1;
  bool track_ok = true;
  std::string meta_text;
  arg_scratch_.clear();
  counter_values_.clear();

  for (auto field_result : object) {
    // By reference into the result: copying the field out (.get) spilled and reloaded it on
    // every key, a store-forwarding stall that was the importer's single largest cost.
    if (auto error = field_result.error()) return error;
    od::field& field = field_result.value_unsafe();
    const EventField key = EventFieldOf(field.key().raw());
    od::value value = field.value();
    if (key == EventField::kPh) {
      // Raw (still escaped) text: a one-letter phase never needs unescaping, and skipping the
      // copy into simdjson's string buffer matters at 40k events per file.
      od::raw_json_string raw;
      if (auto error = value.get_raw_json_string().get(raw)) return error;
      const std::string_view text = RawKey(raw);
      ph = text.size() == 1 ? text[0] : '?';
    } else if (key == EventField::kCat) {
      od::raw_json_string raw;
      if (auto error = value.get_raw_json_string().get(raw)) return error;
      cat = RawKey(raw);
      if (cat.find('\\') != std::string_view::npos) cat = {};  // no known category has escapes
      has_cat = true;
    } else if (key == EventField::kName) {
      if (auto error = value.get_string().get(name)) return error;
    } else if (key == EventField::kPid) {
      pid = TrackId(value, out, &track_ok);
    } else if (key == EventField::kTid) {
      tid = TrackId(value, out, &track_ok);
    } else if (key == EventField::kTs || key == EventField::kDur) {
      const std::string_view token = value.raw_json_token();
      int64_t ns = 0;
      if (!ParseMicrosToNanos(token, &ns)) continue;  // not a number: the event is skipped below
      if (key == EventField::kTs) {
        ts_ns = ns;
        has_ts = true;
      } else {
        dur_ns = ns;
        has_dur = true;
      }
    } else if (key == EventField::kId) {
      if (value.get_int64().get(flow_id) == simdjson::SUCCESS) {
        has_id = true;
      } else {
        std::string_view text;
        if (value.get_string().get(text) == simdjson::SUCCESS) {
          // Chrome allows string ids ("0x1f"); hash them into the id space.
          flow_id = static_cast<int64_t>(std::hash<std::string_view>{}(text) & INT64_MAX);
          has_id = true;
        }
      }
    } else if (key == EventField::kArgs) {
      od::object args;
      if (value.get_object().get(args) != simdjson::SUCCESS) continue;
      for (auto arg_result : args) {
        if (auto error = arg_result.error()) return error;
        od::field& arg = arg_result.value_unsafe();
        const od::raw_json_string raw_arg_key = arg.key();
        od::value arg_value = arg.value();
        if (ph == 'M' || ph == 'C') {
          const std::string_view arg_key = RawKey(raw_arg_key);
          if (ph == 'M' && (arg_key == "name" || arg_key == "labels")) {
            std::string_view text;
            if (arg_value.get_string().get(text) == simdjson::SUCCESS) meta_text.assign(text);
          } else if (ph == 'C') {
            double number = 0;
            if (arg_value.get_double().get(number) == simdjson::SUCCESS) counter_values_.emplace_back(arg_key, number);
          }
          continue;
        }
        const size_t kept = KeptArgIndex(raw_arg_key.raw());
        if (kept == kKeptArgCount) continue;
        EventArg event_arg;
        event_arg.key = kept_arg_ids_[kept];
        od::json_type type;
        if (auto error = arg_value.type().get(type)) return error;
        switch (type) {
          case od::json_type::number: {
            od::number number;
            if (auto error = arg_value.get_number().get(number)) return error;
            if (number.is_int64()) {
              event_arg.type = EventArg::Type::kInt;
              event_arg.int_value = number.get_int64();
            } else if (number.is_uint64()) {
              event_arg.type = EventArg::Type::kDouble;
              event_arg.double_value = static_cast<double>(number.get_uint64());
            } else {
              event_arg.type = EventArg::Type::kDouble;
              event_arg.double_value = number.get_double();
            }
            break;
          }
          case od::json_type::string: {
            std::string_view text;
            if (auto error = arg_value.get_string().get(text)) return error;
            event_arg.type = EventArg::Type::kString;
            event_arg.string_value = builder_.Intern(text);
            break;
          }
          case od::json_type::array: {
            od::array array;
            std::string_view raw;
            if (auto error = arg_value.get_array().get(array)) return error;
            if (auto error = array.raw_json().get(raw)) return error;
            event_arg.type = EventArg::Type::kString;
            event_arg.string_value = builder_.Intern(Trim(raw));
            break;
          }
          default:
            continue;  // objects, booleans, null: not among the kept args' shapes
        }
        if (event_arg.type == EventArg::Type::kInt) {
          switch (kKeptArgs[kept].use) {
            case ArgUse::kDevice: device = event_arg.int_value; break;
            case ArgUse::kStream: stream = event_arg.int_value; break;
            case ArgUse::kCorrelation: correlation = event_arg.int_value; break;
            case ArgUse::kPlain: break;
          }
        }
        arg_scratch_.push_back(event_arg);
      }
    }
  }
  if (!track_ok) {
    ++skipped_["events with a pid/tid that is neither a number nor a string"];
    return simdjson::SUCCESS;
  }

  FrameworkEvent event;
  event.pid = static_cast<int32_t>(pid);
  event.tid = tid;
  StagedEvent staged;
  staged.track_pid = pid;
  staged.track_tid = tid;
  staged.correlation = correlation;

  switch (ph) {
    case 'X': {
      if (!has_ts) {
        ++skipped_["'X' events without a numeric ts"];
        return simdjson::SUCCESS;
      }
      if (has_dur && dur_ns < 0) {
        ++skipped_["'X' events with a negative dur"];
        return simdjson::SUCCESS;
      }
      event.start_ns = ts_ns;
      if (__builtin_add_overflow(ts_ns, dur_ns, &event.end_ns)) {
        ++skipped_["'X' events whose ts + dur overflows"];
        return simdjson::SUCCESS;
      }
      event.name = builder_.Intern(name);
      event.category = has_cat ? builder_.Intern(cat) : kEmptyString;
      if (device >= 0) event.device = static_cast<int32_t>(device);
      if (!has_cat || cat == "cpu_op") {
        // The legacy autograd-profiler array has no cat: all of it is CPU operators.
        event.phase = ids_.cpu_functions;
      } else if (IsGpuOp(cat) || cat == "gpu_user_annotation") {
        // GPU tracks: pid is the device index, tid the stream; args say so explicitly.
        event.device = static_cast<int32_t>(device >= 0 ? device : (pid >= 0 ? pid : 0));
        if (stream >= 0) event.tid = stream;
        event.phase = GpuPhase(event.device);
        if (IsGpuOp(cat)) staged.role = KinetoRole::kGpuOp;
      } else if (cat == "user_annotation") {
        int64_t step = -1;
        if (name.starts_with(kStepPrefix)) {
          const std::string_view digits = name.substr(kStepPrefix.size());
          auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
          if (error != std::errc() || end != digits.data() + digits.size() || step < 0) step = -1;
        }
        if (step >= 0) {
          // SageMaker's step vocabulary (RULES.md §0): phase and name "Step:ModeKeys.TRAIN",
          // args.step_num; the annotation's own name stays as an arg.
          event.phase = ids_.step_train;
          event.name = ids_.step_train;
          event.step = step;
          EventArg step_arg;
          step_arg.key = ids_.step_num;
          step_arg.int_value = step;
          arg_scratch_.push_back(step_arg);
          EventArg annotation;
          annotation.key = ids_.annotation;
          annotation.type = EventArg::Type::kString;
          annotation.string_value = builder_.Intern(name);
          arg_scratch_.push_back(annotation);
        } else {
          event.phase = ids_.user_annotation;
        }
      } else if (cat == "python_function") {
        event.phase = ids_.python_function;
      } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
        event.phase = ids_.cuda_runtime;
        staged.role = KinetoRole::kLaunch;
      } else {
        event.phase = PhaseFromText(cat, event.category);  // kept, never rejected: new categories appear
      }
      break;
    }
    case 'i':
    case 'I': {
      if (!has_ts) {
        ++skipped_["instant events without a numeric ts"];
        return simdjson::SUCCESS;
      }
      event.kind = EventKind::kInstant;
      event.start_ns = event.end_ns = ts_ns;
      event.name = builder_.Intern(name);
      event.category = has_cat ? builder_.Intern(cat) : kEmptyString;
      event.phase = has_cat ? PhaseFromText(cat, event.category) : ids_.instant;
      break;
    }
    case 'C': {
      if (!has_ts) {
        ++skipped_["counter events without a numeric ts"];
        return simdjson::SUCCESS;
      }
      // One model event per series: {"name": "Memory", "args": {"Total Allocated": 1, ...}}
      // gives events named "Memory" with args series="Total Allocated", value=1.
      const StringId name_id = builder_.Intern(name);
      const StringId category = has_cat ? builder_.Intern(cat) : kEmptyString;
      const StringId phase = has_cat ? PhaseFromText(cat, category) : PhaseFromText(name, name_id);
      for (const auto& [series, number] : counter_values_) {
        StagedEvent counter = staged;
        counter.event.kind = EventKind::kCounter;
        counter.event.start_ns = counter.event.end_ns = ts_ns;
        counter.event.name = name_id;
        counter.event.category = category;
        counter.event.phase = phase;
        counter.event.pid = static_cast<int32_t>(pid);
        counter.event.tid = tid;
        counter.event.first_arg = static_cast<uint32_t>(out->args.size());
        counter.event.arg_count = 2;
        EventArg series_arg;
        series_arg.key = ids_.counter_series;
        series_arg.type = EventArg::Type::kString;
        series_arg.string_value = builder_.Intern(series);
        EventArg value_arg;
        value_arg.key = ids_.counter_value;
        value_arg.type = EventArg::Type::kDouble;
        value_arg.double_value = number;
        out->args.push_back(series_arg);
        out->args.push_back(value_arg);
        out->events.push_back(counter);
      }
      return simdjson::SUCCESS;
    }
    case 's':
    case 'f': {
      if (!has_ts || !has_id) {
        ++skipped_["flow events without ts or id"];
        return simdjson::SUCCESS;
      }
      FlowEndpoint endpoint;
      endpoint.category = builder_.Intern(cat);
      endpoint.id = flow_id;
      endpoint.track_pid = pid;
      endpoint.track_tid = tid;
      endpoint.ts_ns = ts_ns;
      endpoint.is_start = ph == 's';
      out->flow_endpoints.push_back(endpoint);
      return simdjson::SUCCESS;
    }
    case 'M': {
      if (name == "process_name" && !meta_text.empty()) {
        out->process_names[pid] = meta_text;
      } else if (name == "process_labels" && !meta_text.empty()) {
        std::string& known = out->process_names[pid];  // "python3.10 (GPU 0)"
        known = known.empty() ? meta_text : known + " (" + meta_text + ")";
      } else if (name == "thread_name" && !meta_text.empty()) {
        out->thread_names[{pid, tid}] = meta_text;
      }
      return simdjson::SUCCESS;
    }
    default: {
      ++skipped_[std::string("events of unsupported phase '") + (ph == 0 ? std::string("(none)") : std::string(1, ph)) +
                 "'"];
      return simdjson::SUCCESS;
    }
  }
  event.first_arg = static_cast<uint32_t>(out->args.size());
  event.arg_count = static_cast<uint16_t>(arg_scratch_.size());
  out->args.insert(out->args.end(), arg_scratch_.begin(), arg_scratch_.end());
  staged.event = event;
  out->events.push_back(staged);
  return simdjson::SUCCESS;
}

error_code KinetoFileParser::ParseTraceEvents(od::array events, KinetoFile* out) {
  // Kineto spends 200-400 bytes per event; reserving on that guess saves the copies (and page
  // faults) of growing by doubling.
  const size_t expected_events = static_cast<size_t>(document_bytes_ / 256);
  out->events.reserve(expected_events);
  out->args.reserve(expected_events * 2);
  out->flow_endpoints.reserve(expected_events / 2);
  for (auto element : events) {
    od::object object;
    if (auto error = element.get_object().get(object)) return error;
    const size_t events_before = out->events.size();
    const size_t args_before = out->args.size();
    const size_t flows_before = out->flow_endpoints.size();
    if (auto error = ParseEvent(object, out)) {
      // An event cut in the middle leaves nothing half-made behind.
      out->events.resize(events_before);
      out->args.resize(args_before);
      out->flow_endpoints.resize(flows_before);
      return error;
    }
    auto location = document_.current_location();
    if (location.error() == simdjson::SUCCESS) out->parsed_bytes = static_cast<size_t>(location.value_unsafe() - buffer_begin_);
  }
  return simdjson::SUCCESS;
}

error_code KinetoFileParser::ParseDeviceProperties(od::array devices, KinetoFile* out) {
  out->has_device_properties = true;
  for (auto element : devices) {
    od::object device;
    if (auto error = element.get_object().get(device)) return error;
    int64_t memory_bytes = 0;
    std::string_view name;
    for (auto field_result : device) {
      od::field field;
      if (auto error = std::move(field_result).get(field)) return error;
      const od::raw_json_string key = field.key();
      if (RawKey(key) == "totalGlobalMem") {
        if (field.value().get_int64().get(memory_bytes) != simdjson::SUCCESS) memory_bytes = 0;
      } else if (RawKey(key) == "name") {
        if (field.value().get_string().get(name) != simdjson::SUCCESS) name = {};
      }
    }
    out->gpu_memory_bytes.push_back(memory_bytes);
    out->gpu_names.emplace_back(name);
  }
  return simdjson::SUCCESS;
}

error_code KinetoFileParser::ParseDistributedInfo(od::object info, KinetoFile* out) {
  std::string_view raw;
  if (auto error = info.raw_json().get(raw)) return error;
  out->distributed_info_json.assign(Trim(raw));
  // raw_json() consumed the object; read rank from a fresh parse of just these bytes.
  simdjson::padded_string copy(out->distributed_info_json);
  od::parser small;
  od::document doc;
  if (small.iterate(copy).get(doc) != simdjson::SUCCESS) return simdjson::SUCCESS;
  // One pass over the fields: a second lookup after a failed one (a malformed object) would
  // use an iterator simdjson has invalidated (kineto_window_fuzzer found the crash).
  od::object fields;
  if (doc.get_object().get(fields) != simdjson::SUCCESS) return simdjson::SUCCESS;
  for (auto field_result : fields) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) break;
    const std::string_view key = RawKey(field.key());
    int64_t number = -1;
    if (key == "rank") {
      if (field.value().get_int64().get(number) == simdjson::SUCCESS && number >= 0) out->rank = number;
    } else if (key == "world_size") {
      if (field.value().get_int64().get(number) == simdjson::SUCCESS && number > 0) out->world_size = number;
    }
  }
  return simdjson::SUCCESS;
}

error_code KinetoFileParser::ParseDocument(simdjson::padded_string_view bytes, KinetoFile* out, size_t* error_offset) {
  buffer_begin_ = bytes.data();
  document_bytes_ = bytes.size();
  auto report = [&](error_code error) {
    auto location = document_.current_location();
    *error_offset = location.error() == simdjson::SUCCESS ? static_cast<size_t>(location.value_unsafe() - buffer_begin_)
                                                          : bytes.size();
    return error;
  };
  *error_offset = kUnknownOffset;  // stage 1 (the structural scan) reports no position
  if (auto error = ThreadParser().iterate(bytes).get(document_)) return error;
  od::json_type type;
  if (auto error = document_.type().get(type)) return report(error);
  if (type == od::json_type::array) {
    out->legacy_array = true;
    od::array events;
    if (auto error = document_.get_array().get(events)) return report(error);
    if (auto error = ParseTraceEvents(events, out)) return report(error);
    return simdjson::SUCCESS;
  }
  od::object root;
  if (auto error = document_.get_object().get(root)) return report(error);
  bool saw_events = false;
  for (auto field_result : root) {
    od::field field;
    if (auto error = std::move(field_result).get(field)) return report(error);
    const od::raw_json_string raw_key = field.key();
    const std::string_view key = RawKey(raw_key);
    od::value value = field.value();
    if (key == "traceEvents") {
      od::array events;
      if (auto error = value.get_array().get(events)) return report(error);
      saw_events = true;
      if (auto error = ParseTraceEvents(events, out)) return report(error);
    } else if (key == "deviceProperties") {
      od::array devices;
      if (value.get_array().get(devices) != simdjson::SUCCESS) continue;
      if (auto error = ParseDeviceProperties(devices, out)) return report(error);
    } else if (key == "distributedInfo") {
      od::object info;
      if (value.get_object().get(info) != simdjson::SUCCESS) continue;
      if (auto error = ParseDistributedInfo(info, out)) return report(error);
    } else if (key == "baseTimeNanoseconds") {
      int64_t base = 0;
      if (value.get_int64().get(base) == simdjson::SUCCESS && base > 0) {
        out->base_time_ns = base;
        out->has_base_time = true;
      }
    }
  }
  if (!saw_events) return simdjson::NO_SUCH_FIELD;
  return simdjson::SUCCESS;
}

Status KinetoFileParser::Parse(std::string_view name, simdjson::padded_string_view bytes, bool input_truncated,
                               KinetoFile* out) {
  out->name.assign(name);
  skipped_.clear();
  size_t error_offset = 0;
  error_code error = ParseDocument(bytes, out, &error_offset);
  if (error == simdjson::NO_SUCH_FIELD) {
    return InvalidArgumentError(std::string(name) +
                                ": not a PyTorch profiler trace: a JSON object without \"traceEvents\"; pass a "
                                "Kineto .pt.trace.json[.gz] or an autograd-profiler export");
  }
  const std::string_view text = Trim(std::string_view(bytes.data(), bytes.size()));
  const bool looks_cut = input_truncated || text.empty() || (text.back() != '}' && text.back() != ']');
  if (error != simdjson::SUCCESS && looks_cut && !text.empty()) {
    // A trace whose writer died: keep the events that are complete. JSON strings cannot hold a
    // raw newline, so a '}' right before one (Kineto ends every event with "},\n") is
    // structural; parse up to the last such brace and keep what parsed before the cut.
    size_t cut = text.size();
    while (cut > 0) {
      cut = text.rfind('}', cut - 1);
      if (cut == std::string_view::npos) break;
      size_t next = cut + 1;
      if (next < text.size() && text[next] == ',') ++next;
      if (next < text.size() && text[next] == '\n') break;
      if (cut == 0) {
        cut = std::string_view::npos;
        break;
      }
    }
    if (cut != std::string_view::npos && cut > 0) {
      KinetoFile partial;
      partial.name = out->name;
      // The prefix lives in a padded copy: simdjson must not read the rest of the file as if
      // it were this document.
      simdjson::padded_string prefix(text.substr(0, cut + 1));
      size_t ignored = 0;
      skipped_.clear();
      (void)ParseDocument(prefix, &partial, &ignored);
      if (!partial.events.empty()) {
        partial.truncated = true;
        partial.problems.push_back(Problem{
            "kineto_file_truncated", ProblemSeverity::kDataLoss, 1,
            out->name + ": the file is truncated (" +
                                   (input_truncated ? std::string("gzip stream ends early")
                                                    : std::string("JSON ends early")) +
                                   "); kept the " + std::to_string(partial.events.size()) +
                                   " complete events before byte " + std::to_string(partial.parsed_bytes) +
                                   (partial.has_base_time ? "" : ", metadata written after the events is lost")});
        *out = std::move(partial);
        error = simdjson::SUCCESS;
      }
    }
  }
  if (error != simdjson::SUCCESS) {
    const std::string where = error_offset == kUnknownOffset
                                  ? "somewhere in its " + std::to_string(bytes.size()) + " bytes"
                                  : "at byte " + std::to_string(error_offset);
    return DataLossError(std::string(name) + ": invalid JSON " + where + " (" +
                         simdjson::error_message(error) + (looks_cut ? "; the file looks truncated" : "") +
                         "); re-export the trace from the PyTorch profiler");
  }
  for (const auto& [what, count] : skipped_) {
    out->problems.push_back(Problem{"kineto_events_skipped", ProblemSeverity::kDataLoss, static_cast<uint64_t>(count),
                                    out->name + ": skipped " + std::to_string(count) + " " + what});
  }
  return OkStatus();
}

}  // namespace stepscope::analysis
