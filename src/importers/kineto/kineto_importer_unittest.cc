#include "importers/kineto/kineto_importer.h"

#include <zlib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "importers/kineto/kineto_time.h"

namespace stepscope::analysis {
namespace {

// Expected numbers below were counted independently of this importer, with /usr/bin/python3
// (json + gzip + decimal) over the same files: events per `cat` and `ph`, ProfilerStep#N names,
// s/f pairs by (cat, id) whose two points each lie inside an X slice on their own (pid, tid),
// args.correlation matches for traces without flows, distributedInfo.rank,
// len(deviceProperties), and timestamps as Decimal(ts) * 1000 (+ baseTimeNanoseconds).

const std::string kFixtures = std::string(STEPSCOPE_FIXTURES_DIR) + "/kineto/";
const std::string kTestData = std::string(STEPSCOPE_TEST_DATA_DIR) + "/kineto/";

Model Import(const std::vector<std::string>& files) {
  auto model = ImportKineto(files);
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return ModelBuilder(ModelSource::kKineto).Finish();
  return std::move(model).value();
}

// "category|phase" -> events, spans only.
std::map<std::string, int> SpansByCategoryAndPhase(const Model& model) {
  std::map<std::string, int> counts;
  for (const FrameworkEvent& event : model.events()) {
    if (event.kind != EventKind::kSpan) continue;
    ++counts[std::string(model.String(event.category)) + "|" + std::string(model.String(event.phase))];
  }
  return counts;
}

int CountKind(const Model& model, EventKind kind) {
  int n = 0;
  for (const FrameworkEvent& event : model.events()) n += event.kind == kind;
  return n;
}

std::map<std::string, int> FlowsByCategory(const Model& model) {
  std::map<std::string, int> counts;
  for (const Flow& flow : model.flows()) ++counts[std::string(model.String(flow.category))];
  return counts;
}

std::vector<int64_t> StepNumbers(const Model& model) {
  std::vector<int64_t> steps;
  for (uint32_t index : model.steps()) steps.push_back(model.events()[index].step);
  return steps;
}

std::string ReadGunzipped(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  std::string out;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) out.append(buffer, n);
  gzclose(file);
  return out;
}

std::string Gzip(const std::string& text) {
  z_stream stream{};
  deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, text.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

StatusOr<Model> ImportBytes(std::string_view name, std::string_view bytes) {
  KinetoImporter importer;
  STEPSCOPE_RETURN_IF_ERROR(importer.AddBytes(name, bytes));
  return std::move(importer).Finish();
}

TEST(KinetoTime, ReadsMicrosecondTextExactlyToNanoseconds) {
  int64_t ns = 0;
  ASSERT_TRUE(ParseMicrosToNanos("1712195495519689.047", &ns));
  EXPECT_EQ(ns, 1712195495519689047);  // a double would give ...689000 (spacing 0.25 µs)
  ASSERT_TRUE(ParseMicrosToNanos("4458676388068.751 ", &ns));
  EXPECT_EQ(ns, 4458676388068751);
  ASSERT_TRUE(ParseMicrosToNanos("1695835573023613", &ns));
  EXPECT_EQ(ns, 1695835573023613000);
  ASSERT_TRUE(ParseMicrosToNanos("1.0005", &ns));
  EXPECT_EQ(ns, 1001);
  ASSERT_TRUE(ParseMicrosToNanos("1.00049", &ns));
  EXPECT_EQ(ns, 1000);
  ASSERT_TRUE(ParseMicrosToNanos("-2.5", &ns));
  EXPECT_EQ(ns, -2500);
  ASSERT_TRUE(ParseMicrosToNanos("1.5e3", &ns));
  EXPECT_EQ(ns, 1500000);
  EXPECT_FALSE(ParseMicrosToNanos("\"12\"", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("1.", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("99999999999999999999", &ns));
  ASSERT_TRUE(ParseMicrosToNanos("15E2", &ns));
  EXPECT_EQ(ns, 1500000);
  ASSERT_TRUE(ParseMicrosToNanos("99999999999999999999e-19", &ns));  // a long mantissa with an exponent
  EXPECT_EQ(ns, 10000);
  ASSERT_TRUE(ParseMicrosToNanos("7,", &ns));  // a raw token runs up to the next structural character
  EXPECT_EQ(ns, 7000);
  EXPECT_FALSE(ParseMicrosToNanos("-", &ns));
  EXPECT_FALSE(ParseMicrosToNanos(".5", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("1.2.3", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("1x", &ns));
}

TEST(KinetoImporter, CpuOnlyTraceAddsBaseTimeAndNamesTheRank) {
  const Model model = Import({kFixtures + "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"});
  EXPECT_EQ(model.source(), ModelSource::kKineto);
  ASSERT_EQ(model.nodes().size(), 1u);
  EXPECT_EQ(model.nodes()[0].name, "rank-34");
  EXPECT_EQ(model.nodes()[0].gpu_count, 0);  // deviceProperties is []
  // python: X by cat {user_annotation: 11 (one ProfilerStep#551), cpu_op: 4, Trace: 1}, i: 2.
  EXPECT_EQ(SpansByCategoryAndPhase(model), (std::map<std::string, int>{{"Trace|Trace", 1},
                                                                         {"cpu_op|cpu_functions", 4},
                                                                         {"user_annotation|Step:ModeKeys.TRAIN", 1},
                                                                         {"user_annotation|user_annotation", 10}}));
  EXPECT_EQ(CountKind(model, EventKind::kInstant), 2);
  EXPECT_EQ(StepNumbers(model), (std::vector<int64_t>{551}));
  // ts are relative to baseTimeNanoseconds 1719853884000000000 (2024-07-15, the file's date).
  EXPECT_EQ(model.first_ns(), 1721065959525586016);
  const FrameworkEvent& step = model.events()[model.steps()[0]];
  EXPECT_EQ(step.start_ns, 1721065959529876817);
  EXPECT_EQ(step.duration_ns(), 210109162);
  EXPECT_EQ(model.String(step.name), "Step:ModeKeys.TRAIN");
  const EventArg* annotation = model.FindArg(step, "annotation");
  ASSERT_NE(annotation, nullptr);
  EXPECT_EQ(model.String(annotation->string_value), "ProfilerStep#551");
  ASSERT_NE(model.FindArg(step, "step_num"), nullptr);
  EXPECT_EQ(model.FindArg(step, "step_num")->int_value, 551);
  EXPECT_TRUE(model.problems().empty());
}

TEST(KinetoImporter, AlexnetGpuTraceMapsKernelsArgsAndLaunchFlows) {
  const Model model = Import({kFixtures + "critical_path_alexnet_trace.json.gz"});
  ASSERT_EQ(model.nodes().size(), 1u);
  EXPECT_EQ(model.nodes()[0].name, "rank-0");
  EXPECT_EQ(model.nodes()[0].gpu_count, 8);
  EXPECT_EQ(model.nodes()[0].gpu_memory_bytes, std::vector<int64_t>(8, 42297524224));
  EXPECT_EQ(SpansByCategoryAndPhase(model), (std::map<std::string, int>{{"Trace|Trace", 1},
                                                                         {"cpu_op|cpu_functions", 359},
                                                                         {"cuda_runtime|cuda_runtime", 361},
                                                                         {"cuda_sync|cuda_sync", 41},
                                                                         {"gpu_memcpy|gpu_functions-dev:0", 16},
                                                                         {"gpu_memset|gpu_functions-dev:0", 3},
                                                                         {"kernel|gpu_functions-dev:0", 79},
                                                                         {"user_annotation|user_annotation", 8}}));
  // python: 139 (cat, id) keys with both s and f, both bound; 206 lone f and 16 lone s dropped.
  EXPECT_EQ(FlowsByCategory(model), (std::map<std::string, int>{{"ac2g", 139}}));
  bool found_memcpy_flow = false;
  for (const Flow& flow : model.flows()) {
    const FrameworkEvent& from = model.events()[flow.from];
    const FrameworkEvent& to = model.events()[flow.to];
    EXPECT_EQ(model.String(from.phase), "cuda_runtime");
    EXPECT_TRUE(model.String(to.phase) == "gpu_functions-dev:0" || model.String(to.phase) == "cuda_sync");
    if (flow.id == 14) {
      found_memcpy_flow = true;
      EXPECT_EQ(model.String(from.name), "cudaMemcpyAsync");
      EXPECT_EQ(from.start_ns, 1695835572943558000);
      EXPECT_EQ(model.String(to.name), "Memcpy HtoD (Pageable -> Device)");
      EXPECT_EQ(model.FindArg(to, "bytes")->int_value, 92928);
      EXPECT_DOUBLE_EQ(model.FindArg(to, "memory bandwidth (GB/s)")->double_value, 7.744);
    }
  }
  EXPECT_TRUE(found_memcpy_flow);
  // The first kernel (correlation 218): device, stream, launch geometry.
  const FrameworkEvent* kernel = nullptr;
  for (const FrameworkEvent& event : model.events()) {
    if (model.String(event.category) == "kernel") {
      kernel = &event;
      break;
    }
  }
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->start_ns, 1695835573023613000);
  EXPECT_EQ(kernel->duration_ns(), 71000);
  EXPECT_EQ(kernel->device, 0);
  EXPECT_EQ(kernel->tid, 7);
  EXPECT_EQ(model.FindArg(*kernel, "correlation")->int_value, 218);
  EXPECT_EQ(model.String(model.FindArg(*kernel, "grid")->string_value), "[864, 1, 1]");
  EXPECT_EQ(model.String(model.FindArg(*kernel, "block")->string_value), "[256, 1, 1]");
  EXPECT_EQ(model.FindArg(*kernel, "registers per thread")->int_value, 47);
  EXPECT_EQ(model.FindArg(*kernel, "est. achieved occupancy %")->int_value, 63);
  EXPECT_EQ(model.FindArg(*kernel, "Concrete Inputs"), nullptr);  // not kept
  // Stream names from M thread_name events land in the node's manifest.
  EXPECT_NE(model.nodes()[0].manifest_json.find("\"0/7\":\"stream 7 \""), std::string::npos);
  EXPECT_TRUE(model.problems().empty());
}

TEST(KinetoImporter, SimpleAddTraceHasItsOwnRuntimeCount) {
  const Model model = Import({kFixtures + "critical_path_simple_add_trace.json.gz"});
  auto spans = SpansByCategoryAndPhase(model);
  EXPECT_EQ(spans["cuda_runtime|cuda_runtime"], 331);
  EXPECT_EQ(spans["kernel|gpu_functions-dev:0"], 79);
  EXPECT_EQ(spans["cpu_op|cpu_functions"], 359);
  EXPECT_EQ(model.events().size(), 840u);  // 838 X + 2 i
  EXPECT_EQ(FlowsByCategory(model), (std::map<std::string, int>{{"ac2g", 139}}));
}

TEST(KinetoImporter, CuptiProfilerTraceKeepsUnknownCategories) {
  const Model model = Import({kFixtures + "cupti_profiler_trace.json.gz"});
  EXPECT_EQ(SpansByCategoryAndPhase(model), (std::map<std::string, int>{{"Trace|Trace", 2},
                                                                         {"cpu_op|cpu_functions", 375},
                                                                         {"cuda_profiler_range|cuda_profiler_range", 77},
                                                                         {"cuda_runtime|cuda_runtime", 1862},
                                                                         {"user_annotation|user_annotation", 8}}));
  EXPECT_EQ(CountKind(model, EventKind::kInstant), 3);
  EXPECT_EQ(model.nodes()[0].gpu_memory_bytes, std::vector<int64_t>(8, 42505273344));
  // 1758 lone f + 104 lone s: no pair, and no GPU operations to correlate.
  EXPECT_TRUE(model.flows().empty());
}

TEST(KinetoImporter, NcclTraceHasStepsFwdBwdFlowsAndGpuAnnotations) {
  const Model model = Import({kFixtures + "nccl_parser_config_nccl_data.json.gz"});
  EXPECT_EQ(model.nodes()[0].name, "rank-0");
  EXPECT_NE(model.nodes()[0].manifest_json.find("\"backend\":\"nccl\""), std::string::npos);
  EXPECT_EQ(SpansByCategoryAndPhase(model), (std::map<std::string, int>{{"Trace|Trace", 1},
                                                                         {"cpu_op|cpu_functions", 14346},
                                                                         {"cuda_runtime|cuda_runtime", 8740},
                                                                         {"gpu_memcpy|gpu_functions-dev:0", 960},
                                                                         {"gpu_memset|gpu_functions-dev:0", 114},
                                                                         {"gpu_user_annotation|gpu_functions-dev:0", 30},
                                                                         {"kernel|gpu_functions-dev:0", 2700},
                                                                         {"user_annotation|Step:ModeKeys.TRAIN", 3},
                                                                         {"user_annotation|user_annotation", 39}}));
  EXPECT_EQ(StepNumbers(model), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(FlowsByCategory(model), (std::map<std::string, int>{{"ac2g", 3774}, {"fwdbwd", 543}}));
  for (const Flow& flow : model.flows()) {
    if (model.String(flow.category) != "fwdbwd") continue;
    EXPECT_EQ(model.String(model.events()[flow.from].phase), "cpu_functions");
    EXPECT_EQ(model.String(model.events()[flow.to].phase), "cpu_functions");
  }
  // baseTimeNanoseconds 1711964646000000000 + 4458676388068.751 µs.
  EXPECT_GE(model.first_ns(), 1716423322388068751 - 1);
  EXPECT_LE(model.first_ns(), 1716423322388068751);
}

TEST(KinetoImporter, NanosecondResolutionTimesAreExact) {
  const Model model = Import({kFixtures + "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"});
  EXPECT_EQ(model.first_ns(), 1712195495406752797);
  EXPECT_EQ(model.last_ns(), 1712195496004644183);
  bool found = false;
  for (const FrameworkEvent& event : model.events()) {
    if (model.String(event.name) == "DivBackward1" && event.start_ns == 1712195495519695812) {
      EXPECT_EQ(event.end_ns, 1712195495519748902);  // ts 1712195495519695.812 + dur 53.090
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(model.events().size(), 45422u);  // 45420 X + 2 i
  EXPECT_EQ(StepNumbers(model), (std::vector<int64_t>{101, 102, 103, 104, 105}));
  EXPECT_EQ(FlowsByCategory(model), (std::map<std::string, int>{{"ac2g", 6095}, {"fwdbwd", 905}}));
  EXPECT_EQ(model.nodes()[0].gpu_memory_bytes.at(0), 34079637504);
  // The GPU models from deviceProperties, kept for the rules that need the hardware.
  const nlohmann::json manifest = nlohmann::json::parse(model.nodes()[0].manifest_json);
  EXPECT_EQ(manifest["gpus"].size(), model.nodes()[0].gpu_memory_bytes.size());
  EXPECT_EQ(manifest["gpus"][0], "Tesla V100-SXM2-32GB");
}

TEST(KinetoImporter, SampledTracesWithoutFlowsLinkByCorrelation) {
  const Model model = Import({kFixtures + "timeline_analysis_sampled_rank-0.json.gz",
                              kFixtures + "trace_filter_sampled_rank-1.json.gz"});
  ASSERT_EQ(model.nodes().size(), 2u);
  EXPECT_EQ(model.nodes()[0].name, "rank-0");
  EXPECT_EQ(model.nodes()[1].name, "rank-1");
  // python: kernels + memcpy + memset whose correlation matches a cuda_runtime call: 1204, 1154.
  EXPECT_EQ(FlowsByCategory(model), (std::map<std::string, int>{{"ac2g", 1204 + 1154}}));
  std::map<uint32_t, int> flows_per_node;
  for (const Flow& flow : model.flows()) {
    const FrameworkEvent& from = model.events()[flow.from];
    const FrameworkEvent& to = model.events()[flow.to];
    EXPECT_EQ(from.node, to.node);
    EXPECT_EQ(model.FindArg(from, "correlation")->int_value, flow.id);
    EXPECT_EQ(model.FindArg(to, "correlation")->int_value, flow.id);
    ++flows_per_node[from.node];
  }
  EXPECT_EQ(flows_per_node[0], 1204);
  EXPECT_EQ(flows_per_node[1], 1154);
  EXPECT_EQ(model.StepsInRange("Step:ModeKeys.TRAIN", 551, 552, 1).size(), 2u);
  auto spans = SpansByCategoryAndPhase(model);
  EXPECT_EQ(spans["kernel|gpu_functions-dev:0"], 1154);  // rank 0's GPU
  EXPECT_EQ(spans["kernel|gpu_functions-dev:1"], 1104);  // rank 1's GPU (args.device 1)
  EXPECT_EQ(spans["cpu_op|cpu_functions"], 2329 + 2302);
}

TEST(KinetoImporter, TritonTraceWithoutRankUsesTheFileStem) {
  const Model model = Import({kFixtures + "triton_example_triton_example.json.gz"});
  EXPECT_EQ(model.nodes()[0].name, "triton_example_triton_example");
  EXPECT_EQ(SpansByCategoryAndPhase(model), (std::map<std::string, int>{{"Trace|Trace", 1},
                                                                         {"cpu_op|cpu_functions", 3},
                                                                         {"cuda_driver|cuda_runtime", 1},
                                                                         {"cuda_runtime|cuda_runtime", 1},
                                                                         {"kernel|gpu_functions-dev:0", 1},
                                                                         {"user_annotation|Step:ModeKeys.TRAIN", 1}}));
  ASSERT_EQ(model.flows().size(), 1u);
  EXPECT_EQ(model.String(model.events()[model.flows()[0].from].name), "cuLaunchKernel");
  EXPECT_EQ(model.String(model.events()[model.flows()[0].to].name), "triton_poi_fused_add_cos_sin_0");
  EXPECT_EQ(model.String(model.events()[model.flows()[0].to].category), "kernel");
}

TEST(KinetoImporter, TwoFilesClaimingOneRankStayApart) {
  const Model model = Import({kFixtures + "critical_path_alexnet_trace.json.gz",
                              kFixtures + "critical_path_simple_add_trace.json.gz"});
  ASSERT_EQ(model.nodes().size(), 2u);
  EXPECT_EQ(model.nodes()[0].name, "rank-0");
  EXPECT_EQ(model.nodes()[1].name, "rank-0:critical_path_simple_add_trace");
  ASSERT_EQ(model.problems().size(), 1u);
  EXPECT_NE(model.problems()[0].sentence.find("already came from another file"), std::string::npos);
  EXPECT_EQ(model.events().size(), 870u + 840u);
  EXPECT_EQ(model.flows().size(), 139u + 139u);
}

TEST(KinetoImporter, LegacyAutogradProfilerArray) {
  // tests/data/kineto/legacy_torch113.json: Debian's torch 1.13.1,
  // torch.autograd.profiler.profile(use_kineto=False) around Linear(8, 4) + ReLU forward and
  // backward, export_chrome_trace(). python: 53 X events, pid "CPU functions", ts 400..7224 µs.
  const Model model = Import({kTestData + "legacy_torch113.json"});
  ASSERT_EQ(model.nodes().size(), 1u);
  EXPECT_EQ(model.nodes()[0].name, "legacy_torch113");
  EXPECT_EQ(SpansByCategoryAndPhase(model), (std::map<std::string, int>{{"|cpu_functions", 53}}));
  EXPECT_EQ(model.first_ns(), 400000);
  EXPECT_EQ(model.last_ns(), 7224000);
  EXPECT_EQ(model.String(model.events()[0].name), "aten::linear");
  EXPECT_LT(model.events()[0].pid, 0);  // the string pid got a synthetic id
  ASSERT_EQ(model.problems().size(), 1u);
  EXPECT_NE(model.problems()[0].sentence.find("times are relative"), std::string::npos);
  EXPECT_NE(model.nodes()[0].manifest_json.find("\"CPU functions\":-1"), std::string::npos);
}

TEST(KinetoImporter, SyntheticTraceCoversCountersInstantsAndOddCategories) {
  const std::string trace = R"({"traceEvents": [
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear", "pid": 5, "tid": 6, "ts": 10.5, "dur": 2},
  {"ph": "X", "cat": "brand_new_cat", "name": "thing", "pid": 5, "tid": 6, "ts": 11, "dur": 1},
  {"ph": "X", "cat": "Step:ModeKeys.EVAL", "name": "impostor", "pid": 5, "tid": 6, "ts": 11, "dur": 1},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#x", "pid": 5, "tid": 6, "ts": 12, "dur": 1},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 6, "ts": 20, "dur": 3, "args": {"correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 3, "ts": 30, "dur": 4, "args": {"device": 2, "stream": 3, "correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": "k2", "pid": 1, "tid": 3, "ts": 40, "dur": 4, "args": {"device": 2, "stream": 3, "correlation": 10}},
  {"ph": "s", "id": 10, "pid": 5, "tid": 6, "ts": 20.5, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 10, "pid": 1, "tid": 3, "ts": 40, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "f", "id": 77, "pid": 5, "tid": 6, "ts": 20, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "i", "s": "t", "name": "mark", "pid": 5, "tid": 6, "ts": 50},
  {"ph": "C", "name": "Memory", "pid": 5, "ts": 60, "args": {"Total Allocated": 1024, "Total Reserved": 2048.5}},
  {"ph": "B", "name": "begin", "pid": 5, "tid": 6, "ts": 70},
  {"ph": "M", "name": "process_name", "pid": 5, "tid": 0, "args": {"name": "trainer"}}
  ]})";
  auto result = ImportBytes("dir/synthetic.pt.trace.json", trace);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Model& model = *result;
  EXPECT_EQ(model.nodes()[0].name, "synthetic");
  EXPECT_EQ(SpansByCategoryAndPhase(model), (std::map<std::string, int>{{"Step:ModeKeys.EVAL|cat:Step:ModeKeys.EVAL", 1},
                                                                         {"brand_new_cat|brand_new_cat", 1},
                                                                         {"cuda_runtime|cuda_runtime", 1},
                                                                         {"kernel|gpu_functions-dev:2", 2},
                                                                         {"python_function|python_function", 1},
                                                                         {"user_annotation|user_annotation", 1}}));
  EXPECT_TRUE(model.steps().empty());  // "ProfilerStep#x" has no number
  EXPECT_EQ(CountKind(model, EventKind::kInstant), 1);
  ASSERT_EQ(CountKind(model, EventKind::kCounter), 2);
  std::map<std::string, double> counters;
  for (const FrameworkEvent& event : model.events()) {
    if (event.kind != EventKind::kCounter) continue;
    EXPECT_EQ(model.String(event.name), "Memory");
    EXPECT_EQ(event.start_ns, 60000);
    counters[std::string(model.String(model.FindArg(event, "series")->string_value))] =
        model.FindArg(event, "value")->double_value;
  }
  EXPECT_EQ(counters, (std::map<std::string, double>{{"Total Allocated", 1024}, {"Total Reserved", 2048.5}}));
  // Flow 10 binds s (20.5 inside the launch at 20..23) to k2; k gets its link by correlation 9;
  // the lone f 77 is dropped.
  ASSERT_EQ(model.flows().size(), 2u);
  std::map<int64_t, std::string> targets;
  for (const Flow& flow : model.flows()) {
    EXPECT_EQ(model.String(model.events()[flow.from].name), "cudaLaunchKernel");
    targets[flow.id] = model.String(model.events()[flow.to].name);
  }
  EXPECT_EQ(targets, (std::map<int64_t, std::string>{{9, "k"}, {10, "k2"}}));
  for (const FrameworkEvent& event : model.events()) {
    if (model.String(event.category) == "kernel") {
      EXPECT_EQ(event.device, 2);
      EXPECT_EQ(event.tid, 3);
    }
  }
  ASSERT_EQ(model.problems().size(), 2u);  // relative times; the 'B' event
  EXPECT_NE(model.problems()[0].sentence.find("times are relative"), std::string::npos) << model.problems()[0].sentence;
  EXPECT_NE(model.problems()[1].sentence.find("synthetic.pt.trace.json: skipped 1 events of unsupported phase 'B'"),
            std::string::npos)
      << model.problems()[1].sentence;
  EXPECT_NE(model.nodes()[0].manifest_json.find("\"5\":\"trainer\""), std::string::npos);
}

TEST(KinetoImporter, OlderAsyncCpuToGpuFlowsAreNotDoubledByCorrelation) {
  const std::string trace = R"({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 6, "ts": 20, "dur": 3, "args": {"correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 9}},
  {"ph": "s", "id": 9, "pid": 5, "tid": 6, "ts": 20, "cat": "async_cpu_to_gpu", "name": "async_cpu_to_gpu"},
  {"ph": "f", "id": 9, "pid": 0, "tid": 7, "ts": 30, "cat": "async_cpu_to_gpu", "name": "async_cpu_to_gpu", "bp": "e"}
  ]})";
  auto result = ImportBytes("old.json", trace);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->flows().size(), 1u);
  EXPECT_EQ(result->String(result->flows()[0].category), "async_cpu_to_gpu");
  EXPECT_EQ(result->flows()[0].id, 9);
}

TEST(KinetoImporter, TimesThatWouldOverflowAreSkippedNotWrapped) {
  const std::string trace = R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "ok", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "too_far", "pid": 1, "tid": 1, "ts": 9223372036854775.000, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "sum_overflows", "pid": 1, "tid": 1, "ts": 9223372036854000, "dur": 9000000}
  ]})";
  auto result = ImportBytes("huge.json", trace);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->events().size(), 1u);
  EXPECT_EQ(result->String(result->events()[0].name), "ok");
  std::string problems;
  for (const Problem& problem : result->problems()) problems += problem.sentence + "\n";
  EXPECT_NE(problems.find("huge.json: skipped 1 'X' events without a numeric ts"), std::string::npos) << problems;
  EXPECT_NE(problems.find("huge.json: skipped 1 'X' events whose ts + dur overflows"), std::string::npos) << problems;
}

// A Kineto-shaped file: one event per line, each ending "},\n" as Kineto writes them.
const std::string kThreeEvents = R"({"schemaVersion": 1, "distributedInfo": {"rank": 3}, "traceEvents": [
  {
    "ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1000.000, "dur": 5.000
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1010.000, "dur": 5.000
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "c {lambda()#1}", "pid": 1, "tid": 1, "ts": 1020.000, "dur": 5.000
  }
], "baseTimeNanoseconds": 1700000000000000000})";

TEST(KinetoImporter, TruncatedJsonKeepsTheCompleteEventsAndSaysSo) {
  const size_t cut = kThreeEvents.find("c {lambda") + 5;  // inside the third event's name
  auto result = ImportBytes("cut.json", std::string_view(kThreeEvents).substr(0, cut));
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->events().size(), 2u);
  EXPECT_EQ(result->String(result->events()[1].name), "b");
  EXPECT_EQ(result->nodes()[0].name, "rank-3");
  // baseTimeNanoseconds came after the cut: times stay relative, and problems say both.
  ASSERT_EQ(result->problems().size(), 2u);
  EXPECT_NE(result->problems()[0].sentence.find("times are relative"), std::string::npos);
  EXPECT_NE(result->problems()[1].sentence.find("cut.json: the file is truncated (JSON ends early); kept the 2 complete events"),
            std::string::npos)
      << result->problems()[1].sentence;
}

TEST(KinetoImporter, CompleteSmallTraceUsesItsBaseTime) {
  auto result = ImportBytes("whole.json", kThreeEvents);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->events().size(), 3u);
  EXPECT_EQ(result->events()[0].start_ns, 1700000000000000000 + 1000000);
  EXPECT_TRUE(result->problems().empty());
}

TEST(KinetoImporter, TheTracesRankGoesToItsHostProcesses) {
  const std::string trace = R"({"distributedInfo": {"backend": "gloo", "rank": 1, "world_size": 4}, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 11, "tid": 1, "ts": 1000.000, "dur": 5.000},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 12, "tid": 1, "ts": 1001.000, "dur": 5.000},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1002.000, "dur": 1.000,
     "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 11, "tid": 2, "ts": 1003.000, "dur": 5.000}
  ], "baseTimeNanoseconds": 1700000000000000000})";
  auto ranked = ImportBytes("rank1.json", trace);
  ASSERT_TRUE(ranked.ok()) << ranked.status().message();
  EXPECT_EQ(ranked->nodes()[0].name, "rank-1");
  ASSERT_EQ(ranked->processes().size(), 2u);  // the GPU track is no process
  EXPECT_EQ(ranked->processes()[0].pid, 11);
  EXPECT_EQ(ranked->processes()[1].pid, 12);
  EXPECT_EQ(ranked->RankOf(0, 11), 1);
  EXPECT_EQ(ranked->processes()[1].world_size, 4);
  EXPECT_EQ(ranked->processes()[1].local_rank, -1);  // a trace does not say
  std::string unranked = trace;
  unranked.replace(unranked.find("\"rank\": 1, "), 11, "");
  auto plain = ImportBytes("plain.json", unranked);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->nodes()[0].name, "plain");
  EXPECT_TRUE(plain->processes().empty());
}

TEST(KinetoImporter, TruncatedGzipKeepsTheEventsInflatedSoFar) {
  const std::string text = ReadGunzipped(kFixtures + "critical_path_alexnet_trace.json.gz");
  ASSERT_EQ(text.size(), 319512u);
  const std::string gz = Gzip(text);
  auto result = ImportBytes("alexnet_cut.json.gz", std::string_view(gz).substr(0, gz.size() / 2));
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_GT(result->events().size(), 0u);
  EXPECT_LT(result->events().size(), 870u);
  bool said_so = false;
  for (const Problem& problem : result->problems()) {
    said_so |= problem.sentence.find("alexnet_cut.json.gz: the file is truncated (gzip stream ends early)") != std::string::npos;
  }
  EXPECT_TRUE(said_so);
  // The whole gzip in memory gives the same model as the file.
  auto whole = ImportBytes("alexnet.json.gz", gz);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->events().size(), 870u);
  EXPECT_EQ(whole->flows().size(), 139u);
}

TEST(KinetoImporter, CorruptInputIsAOneLineErrorNamingFileAndOffset) {
  std::string broken = kThreeEvents;
  broken.replace(broken.find("\"b\""), 3, "\"b\" oops");
  auto result = ImportBytes("broken.json", broken);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kDataLoss);
  const std::string& message = result.status().message();
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(message.rfind("broken.json: invalid JSON at byte ", 0), 0u) << message;

  auto not_trace = ImportBytes("object.json", R"({"hello": 1})");
  ASSERT_FALSE(not_trace.ok());
  EXPECT_EQ(not_trace.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_trace.status().message().find("object.json: not a PyTorch profiler trace"), std::string::npos);

  auto empty = ImportBytes("empty.json", "");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message().rfind("empty.json: ", 0), 0u);

  auto garbage_gzip = ImportBytes("bad.json.gz", std::string("\x1f\x8b\x08\x00garbage-garbage", 19));
  ASSERT_FALSE(garbage_gzip.ok());
  EXPECT_EQ(garbage_gzip.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(garbage_gzip.status().message().find("bad.json.gz: corrupt gzip data near compressed byte"),
            std::string::npos);

  auto missing = ImportKineto({kTestData + "no_such_file.json"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no_such_file.json"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::analysis
