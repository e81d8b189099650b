#include "analysis/model_file.h"

#include <unistd.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>

#include "base/file_system.h"
#include "store/varint.h"

namespace stepscope::analysis {
namespace {

using store::ByteReader;
using store::PutFixed;
using store::PutVarint;
using store::UnZigZag;
using store::ZigZag;

constexpr char kMagic[8] = {'S', 'T', 'P', 'S', 'M', 'O', 'D', 'L'};
enum class Section : uint32_t { kMeta = 1, kStrings, kNodes, kSeries, kEvents, kArgs, kFlows, kProblems, kProcesses };
constexpr uint32_t kSectionCount = 9;
// Version 1 files end after the problems section (no processes: they load without ranks).
constexpr uint32_t kVersion1SectionCount = 8;
constexpr size_t kSectionHeaderBytes = 24;

// Deltas from a corrupt file may overflow; wrap instead of undefined behaviour (the file's
// checksum already vouches for the bytes, so this only matters for forged files).
int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

void PutSigned(std::string& out, int64_t value) { PutVarint(out, ZigZag(value)); }
void PutString(std::string& out, std::string_view text) {
  PutVarint(out, text.size());
  out.append(text);
}

void AppendSection(std::string& file, Section id, const std::string& raw) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1);  // bit flips fail the load, not the analysis
  std::string stored(ZSTD_compressBound(raw.size()), '\0');
  const size_t written = ZSTD_compress2(context, stored.data(), stored.size(), raw.data(), raw.size());
  ZSTD_freeCCtx(context);
  stored.resize(ZSTD_isError(written) ? 0 : written);
  PutFixed<uint32_t>(file, static_cast<uint32_t>(id));
  PutFixed<uint32_t>(file, 0);
  PutFixed<uint64_t>(file, raw.size());
  PutFixed<uint64_t>(file, stored.size());
  file.append(stored);
}

// Reads one section's columns; every failure becomes "<name>: <section> section: <what>".
class SectionReader {
 public:
  SectionReader(std::string_view bytes, std::string_view section) : reader_(bytes), section_(section) {}
  bool ok() const { return error_.empty(); }
  bool AtEnd() const { return reader_.remaining() == 0; }
  const std::string& error() const { return error_; }
  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::string(section_) + " section: " + std::move(what);
    return false;
  }
  uint64_t Unsigned() {
    uint64_t value = 0;
    if (!reader_.ReadVarint(&value)) Fail("truncated varint at byte " + std::to_string(reader_.position()));
    return value;
  }
  int64_t Signed() { return UnZigZag(Unsigned()); }
  double Double() {
    double value = 0;
    if (!reader_.ReadFixed(&value)) Fail("truncated double at byte " + std::to_string(reader_.position()));
    return value;
  }
  uint8_t Byte() {
    uint8_t value = 0;
    if (!reader_.ReadFixed(&value)) Fail("truncated byte at byte " + std::to_string(reader_.position()));
    return value;
  }
  std::string_view String() {
    const uint64_t length = Unsigned();
    std::string_view text;
    if (ok() && (length > reader_.remaining() || !reader_.ReadBytes(length, &text))) Fail("string runs past the end");
    return text;
  }
  // A count of items that each take at least one byte: more than remain is corrupt.
  uint64_t Count(const char* what) {
    const uint64_t count = Unsigned();
    if (ok() && count > reader_.remaining()) Fail(std::string(what) + " count " + std::to_string(count) + " exceeds the section");
    return ok() ? count : 0;
  }
  uint32_t Index(uint64_t limit, const char* what) {
    const uint64_t value = Unsigned();
    if (ok() && value >= limit) Fail(std::string(what) + " " + std::to_string(value) + " out of range (" + std::to_string(limit) + ")");
    return ok() ? static_cast<uint32_t>(value) : 0;
  }
  bool Finish() {
    if (ok() && reader_.remaining() != 0) Fail(std::to_string(reader_.remaining()) + " trailing bytes");
    return ok();
  }

 private:
  ByteReader reader_;
  std::string_view section_;
  std::string error_;
};

StatusOr<std::string> Inflate(std::string_view stored, uint64_t raw_bytes, const std::string& name, uint32_t id) {
  std::string raw;
  ZSTD_DCtx* context = ZSTD_createDCtx();
  ZSTD_inBuffer in{stored.data(), stored.size(), 0};
  char chunk[1 << 16];
  size_t result = 1;
  // Grow with the data actually decompressed: a forged raw size cannot make us allocate it.
  while (in.pos < in.size || result != 0) {
    ZSTD_outBuffer out{chunk, sizeof(chunk), 0};
    result = ZSTD_decompressStream(context, &out, &in);
    if (ZSTD_isError(result) || raw.size() + out.pos > raw_bytes) {
      ZSTD_freeDCtx(context);
      return DataLossError(name + ": section " + std::to_string(id) + " does not decompress (" +
                           (ZSTD_isError(result) ? ZSTD_getErrorName(result) : "larger than declared") +
                           "); the file is corrupt: import the run again");
    }
    raw.append(chunk, out.pos);
    if (in.pos == in.size && out.pos == 0 && result != 0) break;  // truncated frame: no progress
  }
  ZSTD_freeDCtx(context);
  if (result != 0 || raw.size() != raw_bytes) {
    return DataLossError(name + ": section " + std::to_string(id) + " is truncated; the file is corrupt: import the run again");
  }
  return raw;
}

}  // namespace

std::string EncodeModelFile(const Model& model) {
  std::string file(kMagic, sizeof(kMagic));
  PutFixed<uint32_t>(file, kModelFileVersion);
  PutFixed<uint32_t>(file, kSectionCount);

  std::string meta;
  meta.push_back(static_cast<char>(model.source()));
  PutSigned(meta, model.complete_until_ns());
  if (model.file_grid().known) {  // version 3: only SageMaker imports have one
    PutSigned(meta, model.file_grid().origin_ns);
    PutSigned(meta, model.file_grid().stop_ns);
  }
  AppendSection(file, Section::kMeta, meta);

  std::string strings;
  PutVarint(strings, model.strings().size());
  for (size_t i = 0; i < model.strings().size(); ++i) PutString(strings, model.strings().Get(static_cast<StringId>(i)));
  AppendSection(file, Section::kStrings, strings);

  std::string nodes;
  PutVarint(nodes, model.nodes().size());
  for (const NodeFacts& node : model.nodes()) {
    PutString(nodes, node.name);
    PutString(nodes, node.instance_type);
    PutSigned(nodes, node.instance_count);
    PutSigned(nodes, node.cpu_cores);
    PutSigned(nodes, node.gpu_count);
    PutVarint(nodes, node.gpu_memory_bytes.size());
    for (int64_t bytes : node.gpu_memory_bytes) PutSigned(nodes, bytes);
    PutString(nodes, node.manifest_json);
  }
  AppendSection(file, Section::kNodes, nodes);

  std::string series;
  PutVarint(series, model.series().size());
  for (const SystemSeries& s : model.series()) {
    PutVarint(series, s.node);
    PutVarint(series, s.type);
    PutVarint(series, s.name);
    PutVarint(series, s.dimension);
    PutVarint(series, s.time_ns.size());
    int64_t previous = 0;
    for (int64_t t : s.time_ns) {
      PutSigned(series, t - previous);  // sorted: small deltas
      previous = t;
    }
    for (double v : s.value) PutFixed<double>(series, v);
  }
  AppendSection(file, Section::kSeries, series);

  // Events column by column, so zstd sees runs of equal phases, names and nodes.
  const auto& events = model.events();
  std::string columns;
  PutVarint(columns, events.size());
  int64_t previous = 0;
  for (const auto& e : events) { PutSigned(columns, e.start_ns - previous); previous = e.start_ns; }
  for (const auto& e : events) PutSigned(columns, e.end_ns - e.start_ns);
  for (const auto& e : events) PutSigned(columns, e.tid);
  for (const auto& e : events) PutSigned(columns, e.step);
  for (const auto& e : events) PutSigned(columns, e.pid);
  for (const auto& e : events) PutSigned(columns, e.device);
  for (const auto& e : events) PutVarint(columns, e.node);
  for (const auto& e : events) PutVarint(columns, e.phase);
  for (const auto& e : events) PutVarint(columns, e.name);
  for (const auto& e : events) PutVarint(columns, e.category);
  for (const auto& e : events) PutVarint(columns, e.arg_count);
  for (const auto& e : events) columns.push_back(static_cast<char>(static_cast<uint8_t>(e.kind) | (e.unfinished ? 0x80 : 0)));
  AppendSection(file, Section::kEvents, columns);

  // Args in event order (first_arg is recomputed on load).
  std::string args;
  for (const auto& e : events) {
    for (const EventArg& arg : model.Args(e)) {
      PutVarint(args, arg.key);
      args.push_back(static_cast<char>(arg.type));
      switch (arg.type) {
        case EventArg::Type::kInt:
        case EventArg::Type::kBool: PutSigned(args, arg.int_value); break;
        case EventArg::Type::kDouble: PutFixed<double>(args, arg.double_value); break;
        case EventArg::Type::kString: PutVarint(args, arg.string_value); break;
      }
    }
  }
  AppendSection(file, Section::kArgs, args);

  std::string flows;
  PutVarint(flows, model.flows().size());
  for (const Flow& flow : model.flows()) {
    PutVarint(flows, flow.from);
    PutVarint(flows, flow.to);
    PutVarint(flows, flow.category);
    PutSigned(flows, flow.id);
  }
  AppendSection(file, Section::kFlows, flows);

  std::string problems;
  PutVarint(problems, model.problems().size());
  for (const Problem& problem : model.problems()) {
    PutString(problems, problem.name);
    problems.push_back(static_cast<char>(problem.severity));
    PutVarint(problems, problem.count);
    PutString(problems, problem.sentence);
  }
  AppendSection(file, Section::kProblems, problems);

  std::string processes;
  PutVarint(processes, model.processes().size());
  for (const ProcessFacts& process : model.processes()) {
    PutVarint(processes, process.node);
    PutSigned(processes, process.pid);
    PutSigned(processes, process.parent_pid);
    PutSigned(processes, process.rank);
    PutSigned(processes, process.local_rank);
    PutSigned(processes, process.world_size);
    PutSigned(processes, process.group_rank);
    PutVarint(processes, process.writer);
  }
  AppendSection(file, Section::kProcesses, processes);
  return file;
}

Status SaveModelFile(const Model& model, const std::string& path) {
  return WriteFileAtomically(path, EncodeModelFile(model));
}

bool HasModelFileMagic(const std::string& path) {
  auto fd = OpenRegularFile(path, Symlinks::kFollow);
  if (!fd.ok()) return false;
  char head[sizeof(kMagic)];
  return pread(fd->get(), head, sizeof(head), 0) == static_cast<ssize_t>(sizeof(head)) &&
         std::memcmp(head, kMagic, sizeof(kMagic)) == 0;
}

StatusOr<Model> LoadModelFile(const std::string& path) {
  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(path));
  return DecodeModelFile(bytes, path);
}

StatusOr<Model> DecodeModelFile(std::string_view bytes, const std::string& name) {
  const std::string reimport = "; the file is corrupt or not a model file: import the run again";
  if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return DataLossError(name + ": not a stepscope model file (bad magic)" + reimport);
  }
  ByteReader header(bytes.substr(8));
  uint32_t version = 0, section_count = 0;
  (void)header.ReadFixed(&version);
  (void)header.ReadFixed(&section_count);
  if (version < kVersion1ModelFile || version > kModelFileVersion) {
    return UnimplementedError(name + ": model file version " + std::to_string(version) + ", this stepscope reads " +
                              std::to_string(kVersion1ModelFile) + " to " + std::to_string(kModelFileVersion) +
                              "; use a matching stepscope or import the run again");
  }
  const uint32_t expected_sections = version == kVersion1ModelFile ? kVersion1SectionCount : kSectionCount;
  if (section_count != expected_sections) {
    return DataLossError(name + ": " + std::to_string(section_count) + " sections, expected " +
                         std::to_string(expected_sections) + reimport);
  }
  std::string raw[kSectionCount];
  size_t offset = 16;
  for (uint32_t i = 0; i < expected_sections; ++i) {
    ByteReader section(bytes.substr(offset));
    uint32_t id = 0, reserved = 0;
    uint64_t raw_bytes = 0, stored_bytes = 0;
    if (!section.ReadFixed(&id) || !section.ReadFixed(&reserved) || !section.ReadFixed(&raw_bytes) ||
        !section.ReadFixed(&stored_bytes) || stored_bytes > section.remaining()) {
      return DataLossError(name + ": truncated at byte " + std::to_string(offset) + reimport);
    }
    if (reserved != 0) return DataLossError(name + ": section header at byte " + std::to_string(offset) + " is damaged" + reimport);
    if (id != i + 1) return DataLossError(name + ": section " + std::to_string(id) + " out of order at byte " + std::to_string(offset) + reimport);
    STEPSCOPE_ASSIGN_OR_RETURN(raw[i], Inflate(bytes.substr(offset + kSectionHeaderBytes, stored_bytes), raw_bytes, name, id));
    offset += kSectionHeaderBytes + stored_bytes;
  }
  if (offset != bytes.size()) return DataLossError(name + ": " + std::to_string(bytes.size() - offset) + " trailing bytes" + reimport);
  auto corrupt = [&](const SectionReader& reader) { return DataLossError(name + ": " + reader.error() + reimport); };

  SectionReader meta(raw[0], "meta");
  const uint8_t source = meta.Byte();
  const int64_t complete_until_ns = meta.Signed();
  if (meta.ok() && source > static_cast<uint8_t>(ModelSource::kKineto)) meta.Fail("unknown source " + std::to_string(source));
  FileGrid file_grid;  // version 3: SageMaker imports keep the reference's window grid
  if (version >= kVersion3ModelFile && meta.ok() && !meta.AtEnd()) {
    file_grid.origin_ns = meta.Signed();
    file_grid.stop_ns = meta.Signed();
    file_grid.known = meta.ok();
  }
  if (!meta.Finish()) return corrupt(meta);
  ModelBuilder builder(static_cast<ModelSource>(source));
  builder.SetFileGrid(file_grid);

  SectionReader strings(raw[1], "strings");
  const uint64_t string_count = strings.Count("string");
  std::vector<std::string_view> texts;  // views into raw[1], alive until the end
  if (strings.ok() && string_count == 0) strings.Fail("no strings (id 0 must be \"\")");
  for (uint64_t i = 0; strings.ok() && i < string_count; ++i) {
    std::string_view text = strings.String();
    texts.push_back(text);
    // The pool gives ids in order; a repeated string would shift every later id.
    if (strings.ok() && builder.Intern(text) != i) strings.Fail("string " + std::to_string(i) + " repeats an earlier one");
  }
  if (!strings.Finish()) return corrupt(strings);

  SectionReader nodes(raw[2], "nodes");
  const uint64_t node_count = nodes.Count("node");
  for (uint64_t i = 0; nodes.ok() && i < node_count; ++i) {
    NodeFacts facts;
    facts.name = nodes.String();
    facts.instance_type = nodes.String();
    facts.instance_count = static_cast<int32_t>(nodes.Signed());
    facts.cpu_cores = static_cast<int32_t>(nodes.Signed());
    facts.gpu_count = static_cast<int32_t>(nodes.Signed());
    const uint64_t gpus = nodes.Count("gpu memory");
    for (uint64_t g = 0; nodes.ok() && g < gpus; ++g) facts.gpu_memory_bytes.push_back(nodes.Signed());
    facts.manifest_json = nodes.String();
    if (nodes.ok() && builder.AddNode(facts) != i) nodes.Fail("node '" + facts.name + "' appears twice");
  }
  if (!nodes.Finish()) return corrupt(nodes);

  SectionReader series(raw[3], "series");
  const uint64_t series_count = series.Count("series");
  for (uint64_t i = 0; series.ok() && i < series_count; ++i) {
    const uint32_t node = series.Index(node_count, "node");
    const uint32_t type = series.Index(string_count, "string id");
    const uint32_t metric = series.Index(string_count, "string id");
    const uint32_t dimension = series.Index(string_count, "string id");
    const uint64_t samples = series.Count("sample");
    if (!series.ok()) break;
    const uint32_t index = builder.SeriesFor(node, texts[type], texts[metric], texts[dimension]);
    if (index != i) {
      series.Fail("series " + std::to_string(i) + " repeats an earlier key");
      break;
    }
    std::vector<int64_t> times(samples);
    int64_t time_ns = 0;
    for (uint64_t k = 0; k < samples; ++k) times[k] = time_ns = WrappingAdd(time_ns, series.Signed());
    for (uint64_t k = 0; series.ok() && k < samples; ++k) builder.AddSample(index, times[k], series.Double());
  }
  if (!series.Finish()) return corrupt(series);

  SectionReader columns(raw[4], "events");
  const uint64_t event_count = columns.Count("event");
  std::vector<FrameworkEvent> events(event_count);
  int64_t start_ns = 0;
  for (auto& e : events) e.start_ns = start_ns = WrappingAdd(start_ns, columns.Signed());
  for (auto& e : events) e.end_ns = WrappingAdd(e.start_ns, columns.Signed());
  for (auto& e : events) e.tid = columns.Signed();
  for (auto& e : events) e.step = columns.Signed();
  for (auto& e : events) e.pid = static_cast<int32_t>(columns.Signed());
  for (auto& e : events) e.device = static_cast<int32_t>(columns.Signed());
  for (auto& e : events) e.node = columns.Index(node_count, "node");
  for (auto& e : events) e.phase = columns.Index(string_count, "string id");
  for (auto& e : events) e.name = columns.Index(string_count, "string id");
  for (auto& e : events) e.category = columns.Index(string_count, "string id");
  for (auto& e : events) e.arg_count = static_cast<uint16_t>(columns.Index(UINT16_MAX + 1, "arg count"));
  for (auto& e : events) {
    const uint8_t kind = columns.Byte();
    if (columns.ok() && (kind & 0x7F) > static_cast<uint8_t>(EventKind::kCounter)) columns.Fail("unknown event kind");
    e.kind = static_cast<EventKind>(kind & 0x7F);
    e.unfinished = (kind & 0x80) != 0;
  }
  if (!columns.Finish()) return corrupt(columns);

  SectionReader args(raw[5], "args");
  std::vector<EventArg> event_args;
  for (const FrameworkEvent& e : events) {
    event_args.clear();
    for (uint16_t a = 0; args.ok() && a < e.arg_count; ++a) {
      EventArg arg;
      arg.key = args.Index(string_count, "string id");
      const uint8_t type = args.Byte();
      const auto last_type = version >= kVersion3ModelFile ? EventArg::Type::kBool : EventArg::Type::kString;
      if (args.ok() && type > static_cast<uint8_t>(last_type)) args.Fail("unknown arg type");
      arg.type = static_cast<EventArg::Type>(type);
      switch (arg.type) {
        case EventArg::Type::kInt: arg.int_value = args.Signed(); break;
        case EventArg::Type::kBool:
          arg.int_value = args.Signed();
          if (args.ok() && arg.int_value != 0 && arg.int_value != 1) args.Fail("bool arg not 0 or 1");
          break;
        case EventArg::Type::kDouble: arg.double_value = args.Double(); break;
        case EventArg::Type::kString: arg.string_value = args.Index(string_count, "string id"); break;
      }
      event_args.push_back(arg);
    }
    if (!args.ok()) break;
    builder.AddEvent(e, event_args);
  }
  if (!args.Finish()) return corrupt(args);

  SectionReader flows(raw[6], "flows");
  const uint64_t flow_count = flows.Count("flow");
  for (uint64_t i = 0; flows.ok() && i < flow_count; ++i) {
    const uint32_t from = flows.Index(event_count, "event index");
    const uint32_t to = flows.Index(event_count, "event index");
    const uint32_t category = flows.Index(string_count, "string id");
    const int64_t id = flows.Signed();
    if (flows.ok()) builder.AddFlow(from, to, category, id);
  }
  if (!flows.Finish()) return corrupt(flows);

  SectionReader problems(raw[7], "problems");
  const uint64_t problem_count = problems.Count("problem");
  for (uint64_t i = 0; problems.ok() && i < problem_count; ++i) {
    Problem problem;
    if (version >= kModelFileVersion) {
      problem.name = problems.String();
      const uint8_t severity = problems.Byte();
      if (problems.ok() && severity > kMaxProblemSeverity) problems.Fail("unknown problem severity");
      problem.severity = static_cast<ProblemSeverity>(severity);
      problem.count = problems.Unsigned();
    } else {
      // Older files kept sentences only; which were losses is unknown, so all are shown.
      problem.name = "unclassified_problem";
    }
    problem.sentence = problems.String();
    if (problems.ok()) builder.AddProblem(std::move(problem));
  }
  if (!problems.Finish()) return corrupt(problems);

  SectionReader processes(raw[8], "processes");  // empty (no count) in a version 1 file
  const uint64_t process_count = version == kVersion1ModelFile ? 0 : processes.Count("process");
  for (uint64_t i = 0; processes.ok() && i < process_count; ++i) {
    ProcessFacts process;
    process.node = processes.Index(node_count, "node");
    auto int32 = [&]() {
      const int64_t value = processes.Signed();
      if (processes.ok() && (value < INT32_MIN || value > INT32_MAX)) processes.Fail("value out of range");
      return static_cast<int32_t>(value);
    };
    process.pid = int32();
    process.parent_pid = int32();
    process.rank = int32();
    process.local_rank = int32();
    process.world_size = int32();
    process.group_rank = int32();
    if (version >= kVersion3ModelFile) process.writer = processes.Index(string_count, "string id");
    if (processes.ok()) builder.AddProcess(process);
  }
  if (!processes.Finish()) return corrupt(processes);

  builder.SetCompleteUntil(complete_until_ns);
  return std::move(builder).Finish();
}

}  // namespace stepscope::analysis
