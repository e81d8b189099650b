#include "analysis/model_file.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <tuple>

namespace stepscope::analysis {
namespace {

Model SampleModel() {
  ModelBuilder builder(ModelSource::kKineto);
  NodeFacts facts;
  facts.name = "algo-1";
  facts.instance_type = "ml.p3.2xlarge";
  facts.gpu_count = 2;
  facts.gpu_memory_bytes = {16LL << 30, 32LL << 30};
  facts.manifest_json = R"({"a":1})";
  const uint32_t node = builder.AddNode(facts);
  const uint32_t node2 = builder.AddNode(NodeFacts{.name = "algo-2"});
  const uint32_t cpu = builder.SeriesFor(node, "cpu", "cpu0", "CPUUtilization");
  builder.AddSample(cpu, 2'000'000'000, 50.5);
  builder.AddSample(cpu, 1'000'000'000, 12.25);
  builder.AddSample(builder.SeriesFor(node2, "memory", "MemoryUsedPercent", ""), 1'500'000'000, 7);
  FrameworkEvent step;
  step.start_ns = 1'000'000'000;
  step.end_ns = 1'900'000'000;
  step.step = 3;
  step.pid = 42;
  step.tid = -7;
  step.phase = builder.Intern("Step:ModeKeys.TRAIN");
  step.name = builder.Intern("Step:ModeKeys.TRAIN");
  const EventArg step_args[] = {builder.StringArg("step_num", "3"), builder.IntArg("pid", -42), builder.DoubleArg("x", 0.5)};
  const uint32_t a = builder.AddEvent(step, step_args);
  FrameworkEvent kernel;
  kernel.start_ns = 1'100'000'000;
  kernel.end_ns = 1'100'000'500;
  kernel.device = 1;
  kernel.node = node2;
  kernel.category = builder.Intern("kernel");
  kernel.name = builder.Intern("gemm");
  kernel.kind = EventKind::kSpan;
  kernel.unfinished = true;
  const uint32_t b = builder.AddEvent(kernel);
  FrameworkEvent instant;
  instant.start_ns = instant.end_ns = 900'000'000;
  instant.kind = EventKind::kInstant;
  builder.AddEvent(instant, std::vector<EventArg>{builder.IntArg("n", 1)});
  builder.AddFlow(a, b, builder.Intern("ac2g"), 77);
  builder.AddProblem("events_dropped_write_failed", ProblemSeverity::kDataLoss, "skipped something", 12);
  builder.AddProblem("kineto_duplicate_node", ProblemSeverity::kInfo, "renamed a node");
  builder.AddProcess(ProcessFacts{.node = node, .pid = 42, .parent_pid = 7, .rank = 3, .local_rank = 1,
                                  .world_size = 8, .group_rank = 1});
  builder.AddProcess(ProcessFacts{.node = node2, .pid = 43});
  builder.SetCompleteUntil(1'800'000'000);
  return std::move(builder).Finish();
}

void ExpectSameModel(const Model& x, const Model& y) {
  EXPECT_EQ(x.source(), y.source());
  ASSERT_EQ(x.strings().size(), y.strings().size());
  for (size_t i = 0; i < x.strings().size(); ++i) EXPECT_EQ(x.String(i), y.String(i));
  ASSERT_EQ(x.nodes().size(), y.nodes().size());
  for (size_t i = 0; i < x.nodes().size(); ++i) {
    EXPECT_EQ(x.nodes()[i].name, y.nodes()[i].name);
    EXPECT_EQ(x.nodes()[i].instance_type, y.nodes()[i].instance_type);
    EXPECT_EQ(x.nodes()[i].gpu_count, y.nodes()[i].gpu_count);
    EXPECT_EQ(x.nodes()[i].gpu_memory_bytes, y.nodes()[i].gpu_memory_bytes);
    EXPECT_EQ(x.nodes()[i].manifest_json, y.nodes()[i].manifest_json);
  }
  ASSERT_EQ(x.series().size(), y.series().size());
  for (size_t i = 0; i < x.series().size(); ++i) {
    EXPECT_EQ(x.series()[i].node, y.series()[i].node);
    EXPECT_EQ(x.series()[i].type, y.series()[i].type);
    EXPECT_EQ(x.series()[i].name, y.series()[i].name);
    EXPECT_EQ(x.series()[i].dimension, y.series()[i].dimension);
    EXPECT_EQ(x.series()[i].time_ns, y.series()[i].time_ns);
    EXPECT_EQ(x.series()[i].value, y.series()[i].value);
  }
  ASSERT_EQ(x.events().size(), y.events().size());
  for (size_t i = 0; i < x.events().size(); ++i) {
    const FrameworkEvent& a = x.events()[i];
    const FrameworkEvent& b = y.events()[i];
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.end_ns, b.end_ns);
    EXPECT_EQ(a.tid, b.tid);
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.pid, b.pid);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.node, b.node);
    EXPECT_EQ(a.phase, b.phase);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.category, b.category);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.unfinished, b.unfinished);
    auto args_a = x.Args(a);
    auto args_b = y.Args(b);
    ASSERT_EQ(args_a.size(), args_b.size());
    for (size_t k = 0; k < args_a.size(); ++k) {
      EXPECT_EQ(args_a[k].key, args_b[k].key);
      EXPECT_EQ(args_a[k].type, args_b[k].type);
      EXPECT_EQ(args_a[k].int_value, args_b[k].int_value);
      EXPECT_EQ(args_a[k].double_value, args_b[k].double_value);
      EXPECT_EQ(args_a[k].string_value, args_b[k].string_value);
    }
  }
  ASSERT_EQ(x.flows().size(), y.flows().size());
  for (size_t i = 0; i < x.flows().size(); ++i) {
    EXPECT_EQ(x.flows()[i].from, y.flows()[i].from);
    EXPECT_EQ(x.flows()[i].to, y.flows()[i].to);
    EXPECT_EQ(x.flows()[i].category, y.flows()[i].category);
    EXPECT_EQ(x.flows()[i].id, y.flows()[i].id);
  }
  EXPECT_EQ(x.problems(), y.problems());
  ASSERT_EQ(x.processes().size(), y.processes().size());
  for (size_t i = 0; i < x.processes().size(); ++i) {
    const ProcessFacts& a = x.processes()[i];
    const ProcessFacts& b = y.processes()[i];
    EXPECT_EQ(std::tie(a.node, a.pid, a.parent_pid, a.rank, a.local_rank, a.world_size, a.group_rank),
              std::tie(b.node, b.pid, b.parent_pid, b.rank, b.local_rank, b.world_size, b.group_rank));
  }
  EXPECT_EQ(x.steps(), y.steps());
  EXPECT_EQ(x.first_ns(), y.first_ns());
  EXPECT_EQ(x.last_ns(), y.last_ns());
  EXPECT_EQ(x.complete_until_ns(), y.complete_until_ns());
}

TEST(ModelFileTest, RoundTripThroughAFileKeepsEverything) {
  const Model model = SampleModel();
  ASSERT_EQ(model.events().size(), 3u);
  ASSERT_EQ(model.flows().size(), 1u);
  const std::string path = ::testing::TempDir() + "/model_file_roundtrip.stepscope";
  ASSERT_TRUE(SaveModelFile(model, path).ok());
  auto loaded = LoadModelFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ExpectSameModel(model, *loaded);
  EXPECT_EQ(loaded->complete_until_ns(), 1'800'000'000);
  EXPECT_EQ(loaded->RankOf(0, 42), 3);
  EXPECT_EQ(loaded->String(loaded->events()[loaded->flows()[0].to].name), "gemm");
  std::filesystem::remove(path);
}

TEST(ModelFileTest, EmptyModelRoundTrips) {
  const Model model = ModelBuilder(ModelSource::kSageMaker).Finish();
  auto loaded = DecodeModelFile(EncodeModelFile(model), "empty");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ExpectSameModel(model, *loaded);
}

TEST(ModelFileTest, EveryTruncationIsAOneLineErrorNamingTheFile) {
  const std::string bytes = EncodeModelFile(SampleModel());
  for (size_t size = 0; size < bytes.size(); ++size) {
    auto loaded = DecodeModelFile(std::string_view(bytes).substr(0, size), "run/model.stepscope");
    ASSERT_FALSE(loaded.ok()) << size;
    EXPECT_TRUE(loaded.status().message().starts_with("run/model.stepscope: ")) << loaded.status().message();
    EXPECT_EQ(loaded.status().message().find('\n'), std::string::npos);
  }
}

TEST(ModelFileTest, FlippedBytesAreDetected) {
  const std::string bytes = EncodeModelFile(SampleModel());
  size_t rejected = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string corrupt = bytes;
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    rejected += DecodeModelFile(corrupt, "m").ok() ? 0 : 1;
  }
  // zstd tolerates a few frame-header bits (window size hints); everything else is caught by
  // the structure checks or the frames' content checksums.
  EXPECT_GE(rejected, bytes.size() * 97 / 100);
}

TEST(ModelFileTest, WrongMagicAndNewerVersion) {
  std::string bytes = EncodeModelFile(SampleModel());
  auto not_model = DecodeModelFile("{\"json\": true}     ", "x.stepscope");
  ASSERT_FALSE(not_model.ok());
  EXPECT_EQ(not_model.status().message(),
            "x.stepscope: not a stepscope model file (bad magic); the file is corrupt or not a model file: import the run again");
  bytes[8] = 5;
  auto newer = DecodeModelFile(bytes, "x.stepscope");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(newer.status().message(),
            "x.stepscope: model file version 5, this stepscope reads 1 to 4; use a matching stepscope or import the run "
            "again");
}

// What a SageMaker import adds (version 3): the reference's window grid, bool args, writers.
TEST(ModelFileTest, KeepsFileGridBoolArgsAndWriters) {
  ModelBuilder builder(ModelSource::kSageMaker);
  const uint32_t node = builder.AddNode(NodeFacts{.name = "algo-1"});
  FrameworkEvent event;
  event.start_ns = 1'700'000'041'000'000'000;
  event.end_ns = event.start_ns + 1000;
  event.node = node;
  event.pid = 5000;
  const EventArg args[] = {builder.BoolArg("pin_memory", true), builder.BoolArg("drop_last", false)};
  builder.AddEvent(event, args);
  builder.AddProcess(ProcessFacts{.node = node, .pid = 5000, .writer = builder.Intern("algo-1-0")});
  builder.SetFileGrid(FileGrid{.known = true, .origin_ns = 1'700'000'040'000'000'000, .stop_ns = 1'700'000'280'000'000'000});
  const Model model = std::move(builder).Finish();

  auto loaded = DecodeModelFile(EncodeModelFile(model), "m");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->file_grid().known);
  EXPECT_EQ(loaded->file_grid().origin_ns, 1'700'000'040'000'000'000);
  EXPECT_EQ(loaded->file_grid().stop_ns, 1'700'000'280'000'000'000);
  const auto loaded_args = loaded->Args(loaded->events()[0]);
  ASSERT_EQ(loaded_args.size(), 2u);
  EXPECT_EQ(loaded_args[0].type, EventArg::Type::kBool);
  EXPECT_EQ(loaded_args[0].int_value, 1);
  EXPECT_EQ(loaded_args[1].type, EventArg::Type::kBool);
  EXPECT_EQ(loaded_args[1].int_value, 0);
  EXPECT_EQ(loaded->WriterOf(loaded->events()[0]), "algo-1-0");
  EXPECT_FALSE(DecodeModelFile(EncodeModelFile(SampleModel()), "m")->file_grid().known);
}

// Byte offset of section `index` (0-based) in a model file.
size_t SectionOffset(const std::string& bytes, int index) {
  size_t offset = 16;
  for (int section = 0; section < index; ++section) {
    uint64_t stored = 0;
    std::memcpy(&stored, bytes.data() + offset + 16, sizeof stored);
    offset += 24 + stored;
  }
  return offset;
}

// `bytes` with its problems section (the 8th) written as versions 1 to 3 wrote it: a count,
// then each problem as a sentence only.
std::string WithSentenceOnlyProblems(const std::string& bytes, const std::vector<std::string>& sentences) {
  std::string raw(1, static_cast<char>(sentences.size()));
  for (const std::string& sentence : sentences) raw += static_cast<char>(sentence.size()) + sentence;
  std::string stored(ZSTD_compressBound(raw.size()), '\0');
  stored.resize(ZSTD_compress(stored.data(), stored.size(), raw.data(), raw.size(), 3));
  std::string section(24, '\0');
  const uint32_t id = 8;
  const uint64_t raw_bytes = raw.size(), stored_bytes = stored.size();
  std::memcpy(section.data(), &id, sizeof id);
  std::memcpy(section.data() + 8, &raw_bytes, sizeof raw_bytes);
  std::memcpy(section.data() + 16, &stored_bytes, sizeof stored_bytes);
  const size_t begin = SectionOffset(bytes, 7), end = SectionOffset(bytes, 8);
  return bytes.substr(0, begin) + section + stored + bytes.substr(end);
}

TEST(ModelFileTest, KeepsEachProblemsNameSeverityAndCount) {
  const Model model = SampleModel();
  auto loaded = DecodeModelFile(EncodeModelFile(model), "m");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_EQ(loaded->problems().size(), 2u);
  EXPECT_EQ(loaded->problems()[0],
            (Problem{"events_dropped_write_failed", ProblemSeverity::kDataLoss, 12, "skipped something"}));
  EXPECT_EQ(loaded->problems()[1], (Problem{"kineto_duplicate_node", ProblemSeverity::kInfo, 1, "renamed a node"}));
}

// Version 3 files (every SageMaker and Kineto import made before problems were typed) still
// load; their sentences become data-loss problems, so no loss they recorded goes unshown.
TEST(ModelFileTest, VersionThreeProblemsLoadAsUnclassifiedDataLoss) {
  std::string bytes = WithSentenceOnlyProblems(EncodeModelFile(SampleModel()), {"skipped a truncated last line"});
  bytes[8] = 3;
  auto loaded = DecodeModelFile(bytes, "v3.stepscope");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_EQ(loaded->problems().size(), 1u);
  EXPECT_EQ(loaded->problems()[0],
            (Problem{"unclassified_problem", ProblemSeverity::kDataLoss, 1, "skipped a truncated last line"}));
  EXPECT_EQ(loaded->processes().size(), 2u);
}

TEST(ModelFileTest, AnUnknownProblemSeverityIsCorruption) {
  ModelBuilder builder(ModelSource::kKineto);
  builder.AddProblem(Problem{"x", static_cast<ProblemSeverity>(7), 1, "y"});
  auto loaded = DecodeModelFile(EncodeModelFile(std::move(builder).Finish()), "bad.stepscope");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("bad.stepscope: problems section: unknown problem severity"), std::string::npos)
      << loaded.status().message();
}

// A version 1 file is a version 2 file without the processes section: it loads, without ranks.
TEST(ModelFileTest, VersionOneFilesStillLoadWithoutProcesses) {
  const Model model = SampleModel();
  std::string bytes = WithSentenceOnlyProblems(EncodeModelFile(model), {"skipped something"});
  bytes.resize(SectionOffset(bytes, 8));
  bytes[8] = 1;
  bytes[12] = 8;
  auto loaded = DecodeModelFile(bytes, "v1.stepscope");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->processes().empty());
  EXPECT_EQ(loaded->events().size(), model.events().size());
  ASSERT_EQ(loaded->problems().size(), 1u);
  EXPECT_EQ(loaded->problems()[0].sentence, "skipped something");
  bytes[12] = 9;  // a version 1 header cannot claim the processes section
  EXPECT_FALSE(DecodeModelFile(bytes, "v1.stepscope").ok());
}

}  // namespace
}  // namespace stepscope::analysis
