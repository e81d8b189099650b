#include "importers/kineto/kineto_window_converter.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "analysis/detail_operators.h"
#include "analysis/detail_window_files.h"
#include "base/file_system.h"
#include "importers/common/gzip_text.h"
#include "importers/kineto/kineto_time.h"
#include "importers/kineto/kineto_window_writer.h"

namespace stepscope::analysis {
namespace {

using nlohmann::json;

const std::string kFixtures = std::string(STEPSCOPE_FIXTURES_DIR) + "/kineto/";
const std::string kTestData = std::string(STEPSCOPE_TEST_DATA_DIR) + "/kineto/";
// Saved by torch 2.x's profiler (make_torch2_trace.py), with torch's own reading beside it.
const std::string kTorch2Trace = kTestData + "torch2_cpu_mlp.pt.trace.json.gz";
const std::string kTorch2Expected = kTestData + "torch2_cpu_mlp.expected.json";
// CUDA traces: an older Kineto (kernels linked by ac2g flows and correlation) and a torch 2.x
// one whose kernels also name their operator in args["External id"].
const std::string kSimpleAdd = kFixtures + "critical_path_simple_add_trace.json.gz";
const std::string kNsResolution = kFixtures + "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz";

std::string ReadText(const std::string& path) {
  LocalFileSystem fs;
  auto raw = fs.ReadFile(path);
  EXPECT_TRUE(raw.ok()) << raw.status().message();
  if (!raw.ok()) return "";
  if (raw->size() < 2 || static_cast<unsigned char>((*raw)[0]) != 0x1f) return *raw;
  auto text = GunzipText(*raw, path);
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : "";
}

StatusOr<OperatorsWindow> Convert(std::string text, KinetoWindowClock clock = {}, size_t max_events = 200'000) {
  text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  return ConvertKinetoWindow("window.json", simdjson::padded_string_view(text.data(), text.size(), text.capacity()),
                             clock, max_events);
}

OperatorsWindow ConvertOk(const std::string& text, KinetoWindowClock clock = {}, size_t max_events = 200'000) {
  auto window = Convert(text, clock, max_events);
  EXPECT_TRUE(window.ok()) << window.status().message();
  return window.ok() ? std::move(window).value() : OperatorsWindow{};
}

json Expected() { return json::parse(ReadText(kTorch2Expected)); }

KinetoWindowClock SameClock(int64_t trace_start_ns) { return {trace_start_ns, trace_start_ns}; }

// Events in a tie-proof order: torch's list breaks ties in its own way.
std::vector<WindowHostEvent> ByStartEndName(std::vector<WindowHostEvent> events) {
  std::stable_sort(events.begin(), events.end(), [](const WindowHostEvent& a, const WindowHostEvent& b) {
    return std::tie(a.start_ns, b.end_ns, a.name) < std::tie(b.start_ns, a.end_ns, b.name);
  });
  return events;
}

// Torch holds times as float µs and rounds them to ns; these are exact ns from the trace.
constexpr int64_t kRoundingNs = 2;
// A self time subtracts each child's rounded time.
constexpr int64_t kSelfRoundingNs = 64;

TEST(KinetoWindowConverter, ReadsATorch2TraceAsTorchsFunctionEventsDo) {
  const json expected = Expected();
  const OperatorsWindow window = ConvertOk(ReadText(kTorch2Trace), SameClock(expected["trace_start_ns"]));
  const json& events = expected["events"];
  ASSERT_EQ(window.events.size(), events.size());
  EXPECT_EQ(window.events_total, static_cast<int64_t>(events.size()));
  const std::vector<WindowHostEvent> got = ByStartEndName(window.events);
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i) + " " + events[i].dump());
    EXPECT_EQ(got[i].name, events[i]["name"].get<std::string>());
    EXPECT_NEAR(got[i].start_ns, events[i]["start_ns"].get<int64_t>(), kRoundingNs);
    EXPECT_NEAR(got[i].end_ns, events[i]["end_ns"].get<int64_t>(), kRoundingNs);
    EXPECT_NEAR(got[i].cpu_ns, events[i]["cpu_ns"].get<int64_t>(), kRoundingNs);
    EXPECT_NEAR(got[i].self_cpu_ns, events[i]["self_cpu_ns"].get<int64_t>(), kSelfRoundingNs);
    EXPECT_EQ(json::parse(got[i].shapes_json), events[i]["shapes"]);
    EXPECT_FALSE(got[i].has_device_time);
    EXPECT_GT(got[i].tid, 0);
  }
  EXPECT_TRUE(window.device_events.empty());
  EXPECT_FALSE(window.has_distributed_info);
  EXPECT_TRUE(window.problems.empty()) << window.problems.front();
}

TEST(KinetoWindowConverter, OperatorsTableIsTorchsKeyAverages) {
  const json expected = Expected();
  const OperatorsWindow window = ConvertOk(ReadText(kTorch2Trace), SameClock(expected["trace_start_ns"]));
  std::map<std::string, json> rows;
  for (const json& row : expected["operators"]) rows[row["name"]] = row;
  ASSERT_EQ(window.operators.size(), rows.size());
  int64_t calls = 0;
  for (const WindowOperatorRow& row : window.operators) {
    SCOPED_TRACE(row.name);
    ASSERT_TRUE(rows.count(row.name));
    const json& want = rows[row.name];
    EXPECT_EQ(row.calls, want["calls"].get<int64_t>());
    EXPECT_NEAR(row.cpu_ns, want["cpu_ns"].get<int64_t>(), kRoundingNs * row.calls);
    EXPECT_NEAR(row.self_cpu_ns, want["self_cpu_ns"].get<int64_t>(), kSelfRoundingNs * row.calls);
    EXPECT_FALSE(row.has_device_time);
    calls += row.calls;
  }
  EXPECT_EQ(calls, window.events_total);
  for (size_t i = 1; i < window.operators.size(); ++i) {
    EXPECT_GE(window.operators[i - 1].self_cpu_ns, window.operators[i].self_cpu_ns);
  }
}

TEST(KinetoWindowConverter, FoldsAChildNamedAsItsOnlyParentAsTorchDoes) {
  // make_torch2_trace.py nests record_function("stepscope::nested") twice: the trace has both,
  // torch's events (EventList._remove_dup_nodes) one, which keeps the inner one's child.
  const std::string text = ReadText(kTorch2Trace);
  const json trace = json::parse(text);
  int in_trace = 0;
  for (const json& event : trace["traceEvents"]) in_trace += event.value("name", "") == "stepscope::nested";
  ASSERT_EQ(in_trace, 2);
  const OperatorsWindow window = ConvertOk(text, SameClock(Expected()["trace_start_ns"]));
  std::vector<const WindowHostEvent*> nested;
  for (const WindowHostEvent& event : window.events) {
    if (event.name == "stepscope::nested") nested.push_back(&event);
  }
  ASSERT_EQ(nested.size(), 1u);
  // Its self time excludes the add that the removed inner range held.
  int64_t add_ns = 0;
  for (const WindowHostEvent& event : window.events) {
    if (event.name == "aten::add" && event.start_ns >= nested[0]->start_ns && event.end_ns <= nested[0]->end_ns) {
      add_ns += event.cpu_ns;
    }
  }
  EXPECT_GT(add_ns, 0);
  EXPECT_EQ(nested[0]->self_cpu_ns, nested[0]->cpu_ns - add_ns);
}

TEST(KinetoWindowConverter, PlacesEventsOnTheUnixClockFromTheTraceStart) {
  const int64_t trace_start_ns = Expected()["trace_start_ns"];
  const std::string text = ReadText(kTorch2Trace);
  const OperatorsWindow same = ConvertOk(text, SameClock(trace_start_ns));
  // A trace clock 5 s behind the Unix clock (the bracket case in _operators.profiler_start_ns).
  const OperatorsWindow moved = ConvertOk(text, {trace_start_ns, trace_start_ns + 5'000'000'000});
  ASSERT_EQ(same.events.size(), moved.events.size());
  for (size_t i = 0; i < same.events.size(); ++i) {
    EXPECT_EQ(moved.events[i].start_ns - same.events[i].start_ns, 5'000'000'000);
    EXPECT_EQ(moved.events[i].end_ns - same.events[i].end_ns, 5'000'000'000);
  }
  // The profiler's events start after its trace start, inside the profiled stretch.
  EXPECT_GE(same.events.front().start_ns, trace_start_ns);
}

TEST(KinetoWindowConverter, CapKeepsTheEarliestEventsAndTheWholeTable) {
  const std::string text = ReadText(kTorch2Trace);
  const KinetoWindowClock clock = SameClock(Expected()["trace_start_ns"]);
  const OperatorsWindow all = ConvertOk(text, clock);
  const OperatorsWindow capped = ConvertOk(text, clock, 10);
  ASSERT_EQ(capped.events.size(), 10u);
  EXPECT_EQ(capped.events_total, all.events_total);
  for (size_t i = 0; i < capped.events.size(); ++i) {
    EXPECT_EQ(capped.events[i].name, all.events[i].name);
    EXPECT_EQ(capped.events[i].start_ns, all.events[i].start_ns);
  }
  int64_t calls = 0;
  for (const WindowOperatorRow& row : capped.operators) calls += row.calls;
  EXPECT_EQ(calls, all.events_total);
}

// The trace's X events by category, and facts to check kernels against, read with nlohmann.
struct CudaFacts {
  json events;
  int64_t base_ns = 0;
};

CudaFacts ReadCuda(const std::string& path) {
  CudaFacts facts;
  const json trace = json::parse(ReadText(path));
  facts.base_ns = trace.value("baseTimeNanoseconds", int64_t{0});
  for (const json& event : trace["traceEvents"]) {
    if (event.value("ph", "") == "X" && event["pid"].is_number_integer()) facts.events.push_back(event);
  }
  return facts;
}

// Exact, from the number's text: a double holds Unix µs only to a quarter µs.
int64_t Ns(const json& micros) {
  int64_t ns = 0;
  EXPECT_TRUE(ParseMicrosToNanos(micros.dump(), &ns)) << micros.dump();
  return ns;
}

TEST(KinetoWindowConverter, KernelsBelongToTheOperatorAroundTheirLaunch) {
  // Independently of the flow linker: a kernel's runtime call has its args.correlation; the
  // operator is the shortest cpu_op or user_annotation on the call's thread that contains it.
  const CudaFacts facts = ReadCuda(kSimpleAdd);
  std::map<int64_t, json> runtime_by_correlation;
  std::vector<json> operators, launched;
  size_t on_device = 0;  // the device's own tracks: kernels, copies, sets, syncs
  for (const json& event : facts.events) {
    const std::string cat = event.value("cat", "");
    on_device += cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_sync";
    if (cat == "cuda_runtime") runtime_by_correlation[event["args"]["correlation"]] = event;
    if (cat == "cpu_op" || cat == "user_annotation") operators.push_back(event);
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") launched.push_back(event);
  }
  // (operator name, start ns) -> kernel (name, duration) pairs it should own.
  std::map<std::pair<std::string, int64_t>, std::multiset<std::pair<std::string, int64_t>>> want;
  int attributed = 0;
  for (const json& kernel : launched) {
    auto runtime = runtime_by_correlation.find(kernel["args"]["correlation"]);
    if (runtime == runtime_by_correlation.end()) continue;
    const json& call = runtime->second;
    const json* owner = nullptr;
    for (const json& op : operators) {
      if (op["tid"] != call["tid"] || Ns(op["ts"]) > Ns(call["ts"]) ||
          Ns(op["ts"]) + Ns(op["dur"]) < Ns(call["ts"]) + Ns(call["dur"])) {
        continue;
      }
      if (owner == nullptr || Ns(op["dur"]) < Ns((*owner)["dur"])) owner = &op;
    }
    if (owner == nullptr) continue;
    want[{(*owner)["name"], Ns((*owner)["ts"])}].insert({kernel["name"], Ns(kernel["dur"])});
    ++attributed;
  }
  ASSERT_GT(attributed, 20);

  const OperatorsWindow window = ConvertOk(ReadText(kSimpleAdd));
  EXPECT_EQ(window.device_events_total, static_cast<int64_t>(on_device));
  EXPECT_GT(on_device, launched.size());
  int checked = 0;
  for (const WindowHostEvent& event : window.events) {
    auto it = want.find({event.name, event.start_ns});
    std::multiset<std::pair<std::string, int64_t>> got;
    int64_t own_ns = 0;
    for (const WindowKernel& kernel : event.kernels) {
      got.insert({kernel.name, kernel.duration_ns});
      own_ns += kernel.duration_ns;
    }
    EXPECT_NE(event.name, "Stream Sync");  // a device event, not a host one
    if (it == want.end()) {
      EXPECT_TRUE(got.empty()) << event.name;
      continue;
    }
    EXPECT_EQ(got, it->second) << event.name;
    EXPECT_TRUE(event.has_device_time);
    EXPECT_EQ(event.self_device_ns, own_ns);
    EXPECT_GE(event.device_ns, own_ns);
    checked += static_cast<int>(it->second.size());
  }
  EXPECT_EQ(checked, attributed);

  // An operator's device time is its kernels' and its children's: aten::rand's is every kernel
  // launched inside it.
  const auto rand = std::find_if(window.events.begin(), window.events.end(),
                                 [](const WindowHostEvent& e) { return e.name == "aten::rand"; });
  ASSERT_NE(rand, window.events.end());
  int64_t inside_ns = 0;
  for (const auto& [op, kernels] : want) {
    if (op.second < rand->start_ns || op.second > rand->end_ns) continue;
    for (const auto& kernel : kernels) inside_ns += kernel.second;
  }
  EXPECT_GT(inside_ns, 0);
  EXPECT_EQ(rand->device_ns, inside_ns);
}

TEST(KinetoWindowConverter, DeviceWorkKeepsItsStreamAndTheIdOfItsLaunch) {
  // What a reader needs to draw launch -> kernel: the trace's kernels name their runtime call
  // through args.correlation; the window keeps that id on both ends, and each device event's
  // stream (its tid in the trace).
  const CudaFacts facts = ReadCuda(kSimpleAdd);
  std::map<int64_t, std::string> runtime_name;                      // correlation -> call
  std::map<std::pair<int64_t, std::string>, int64_t> trace_stream;  // (correlation, kernel) -> stream
  for (const json& event : facts.events) {
    const std::string cat = event.value("cat", "");
    if (!event.contains("args") || !event["args"].contains("correlation")) continue;
    const int64_t correlation = event["args"]["correlation"];
    if (cat == "cuda_runtime") runtime_name[correlation] = event["name"];
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      trace_stream[{correlation, event["name"]}] = event["tid"];
    }
  }
  const OperatorsWindow window = ConvertOk(ReadText(kSimpleAdd));
  std::map<int64_t, std::string> launch_of;
  for (const WindowHostEvent& event : window.events) {
    if (event.correlation >= 0) EXPECT_TRUE(launch_of.emplace(event.correlation, event.name).second);
  }
  int linked = 0;
  for (const WindowDeviceEvent& device : window.device_events) {
    if (device.correlation < 0) continue;
    ++linked;
    ASSERT_TRUE(launch_of.contains(device.correlation)) << device.name;
    EXPECT_EQ(launch_of[device.correlation], runtime_name[device.correlation]) << device.name;
    EXPECT_EQ(device.stream, (trace_stream[{device.correlation, device.name}])) << device.name;
  }
  EXPECT_EQ(linked, static_cast<int>(trace_stream.size()));
  EXPECT_GT(linked, 20);
}

TEST(KinetoWindowConverter, KernelsGoWhereTorchsExternalIdSendsThem) {
  // In torch 2.x traces a kernel's args["External id"] is the id of the operator torch links it
  // to (its linked correlation id); the converter finds the same operator through the launch.
  const CudaFacts facts = ReadCuda(kNsResolution);
  // name -> (start ns, External id); a double holds these ns-resolution µs to ~0.25 µs only.
  std::map<std::string, std::map<int64_t, int64_t>> operators;
  std::map<int64_t, std::string> name_of_external_id;
  std::map<int64_t, int64_t> kernel_ns_by_external_id;
  for (const json& event : facts.events) {
    const std::string cat = event.value("cat", "");
    if (!event.contains("args") || !event["args"].contains("External id")) continue;
    const int64_t id = event["args"]["External id"];
    if (cat == "cpu_op" || cat == "user_annotation") {
      operators[event["name"]][facts.base_ns + std::llround(event["ts"].get<double>() * 1000.0)] = id;
      name_of_external_id[id] = event["name"];
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      kernel_ns_by_external_id[id] += Ns(event["dur"]);
    }
  }
  const OperatorsWindow window = ConvertOk(ReadText(kNsResolution));
  int64_t owners = 0, agree = 0, folded = 0;
  for (const WindowHostEvent& event : window.events) {
    if (event.kernels.empty()) continue;
    ++owners;
    const auto& starts = operators[event.name];
    auto near = starts.lower_bound(event.start_ns - 512);
    ASSERT_TRUE(near != starts.end() && near->first <= event.start_ns + 512) << event.name;
    int64_t own_ns = 0;
    for (const WindowKernel& kernel : event.kernels) own_ns += kernel.duration_ns;
    if (kernel_ns_by_external_id[near->second] == own_ns) {
      ++agree;
    } else if (name_of_external_id[near->second + 1] == event.name &&
               kernel_ns_by_external_id[near->second + 1] == own_ns) {
      // aten::sum inside aten::sum as its only child: torch folds the inner one, whose id is
      // the next, into the outer and lifts its kernels (EventList._remove_dup_nodes).
      ++agree;
      ++folded;
    }
  }
  ASSERT_GT(owners, 1000);
  EXPECT_EQ(agree, owners);
  EXPECT_GT(folded, 0);
  EXPECT_TRUE(window.has_distributed_info);
}

TEST(KinetoWindowConverter, HostileInputIsAStatusNeverACrash) {
  for (const std::string& bytes : {std::string(), std::string("\x1f\x8b\x08\x00garbage", 12), std::string("{"),
                                   std::string("{\"traceEvents\": 5}"), std::string("{\"foo\": 1}"),
                                   std::string("nonsense"), std::string("{\"traceEvents\": [{\"ph\": \"X\",")}) {
    auto window = Convert(bytes);
    EXPECT_FALSE(window.ok()) << "'" << bytes << "' converted";
    if (!window.ok()) {
      EXPECT_TRUE(window.status().message().starts_with("window.json")) << window.status().message();
    }
  }
  // A trace cut anywhere converts whole or fails with a message; most cuts fail.
  const std::string text = ReadText(kTorch2Trace);
  int failed = 0, tried = 0;
  for (size_t cut = 1; cut < text.size(); cut += 397) {
    auto window = Convert(text.substr(0, cut));
    failed += !window.ok();
    ++tried;
  }
  EXPECT_EQ(failed, tried);
}

TEST(KinetoWindowConverter, OddEventsAreSkippedOrEmptiedWithAProblem) {
  const std::string deep(200, '[');
  const std::string text = std::string("{\"traceEvents\": [") +
                           "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\\\"b\", \"pid\": 1, \"tid\": 1, "
                           "\"ts\": 10, \"dur\": 5, \"args\": {\"Input Dims\": [[1, \"x\"], []]}},"
                           "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"deep\", \"pid\": 1, \"tid\": 1, "
                           "\"ts\": 20, \"dur\": 5, \"args\": {\"Input Dims\": " + deep + std::string(200, ']') + "}},"
                           "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"late\", \"pid\": 1, \"tid\": 1, "
                           "\"ts\": 9000000000000000, \"dur\": 1}"
                           "]}";
  const OperatorsWindow window = ConvertOk(text, {0, 4'000'000'000'000'000'000});
  ASSERT_EQ(window.events.size(), 2u);
  EXPECT_EQ(window.events[0].name, "a\"b");
  EXPECT_EQ(window.events[0].shapes_json, "[]");
  EXPECT_EQ(window.events[1].shapes_json, "[]");
  ASSERT_EQ(window.problems.size(), 2u);
  EXPECT_NE(window.problems[0].find("1 events whose times leave"), std::string::npos) << window.problems[0];
  EXPECT_NE(window.problems[1].find("2 events whose Input Dims"), std::string::npos) << window.problems[1];
  // The payload text stays valid JSON, escapes included.
  const json payload = json::parse("{" + OperatorsPayloadJson(window) + "}");
  EXPECT_EQ(payload["events"][0]["name"], "a\"b");
  EXPECT_EQ(payload["conversion_problems"].size(), 2u);
}

TEST(KinetoWindowConverter, NormalizeShapesTakesNestedIntegerListsOnly) {
  std::string out = "unchanged";
  EXPECT_TRUE(NormalizeShapes("[[4, 8], [16, 8], [16]]", &out));
  EXPECT_EQ(out, "[[4,8],[16,8],[16]]");
  EXPECT_TRUE(NormalizeShapes(" [ [], [[2, 3], [2, 3]], [-1] ] ", &out));
  EXPECT_EQ(out, "[[],[[2,3],[2,3]],[-1]]");
  EXPECT_TRUE(NormalizeShapes("[]", &out));
  EXPECT_EQ(out, "[]");
  out = "unchanged";
  for (std::string_view bad : {"", "[", "]", "[1,]", "[,1]", "[1 2]", "[01]", "[1.5]", "[\"a\"]", "[null]",
                               "[[[[[1]]]]]", "[1]]", "[1] x", "{}", "[12345678901234567890]", "[-]"}) {
    EXPECT_FALSE(NormalizeShapes(bad, &out)) << bad;
  }
  EXPECT_EQ(out, "unchanged");
}

// A fresh directory under TMPDIR, removed with its files.
class TempDir {
 public:
  TempDir() {
    std::string pattern = std::string(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") + "/kineto-window-XXXXXX";
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    LocalFileSystem fs;
    if (auto names = fs.ListDirectory(path_); names.ok()) {
      for (const std::string& name : *names) unlink((path_ + "/" + name).c_str());
    }
    rmdir(path_.c_str());
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

KinetoWindowRequest Request(const TempDir& dir, const std::string& trace_text) {
  KinetoWindowRequest request;
  request.saved_trace_path = dir.File(".saved.json.tmp");
  request.trace_path = dir.File("operators-7-0.pt.trace.json.gz");
  request.document_path = dir.File("operators-7-0.json.zst");
  request.document_json = R"({"format_version": 1, "kind": "operators", "pid": 7, "window": {"index": 0}})";
  request.clock = SameClock(Expected()["trace_start_ns"]);
  request.rank = 3;
  request.world_size = 8;
  request.elapsed_ns = 1234;
  EXPECT_TRUE(WriteFileAtomically(request.saved_trace_path, trace_text).ok());
  return request;
}

TEST(KinetoWindowWriter, WritesTheTraceForPerfettoAndHtaAndTheDocument) {
  TempDir dir;
  const std::string text = ReadText(kTorch2Trace);
  const KinetoWindowRequest request = Request(dir, text);
  auto written = WriteKinetoWindow(request);
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_FALSE(Exists(request.saved_trace_path));

  // The trace: torch's bytes, with the rank HTA looks for first.
  const std::string trace = ReadText(request.trace_path);
  const std::string info = "\n  \"distributedInfo\": {\"rank\": 3, \"world_size\": 8},";
  const size_t open = text.find('{');  // torch writes " {\n"
  ASSERT_EQ(trace.substr(0, open + 1 + info.size()), text.substr(0, open + 1) + info);
  EXPECT_EQ(trace.substr(0, open + 1) + trace.substr(open + 1 + info.size()), text);
  const json parsed = json::parse(trace);
  EXPECT_EQ(parsed["distributedInfo"]["rank"], 3);
  EXPECT_GT(parsed["traceEvents"].size(), 300u);
  EXPECT_EQ(written->trace_bytes, static_cast<uint64_t>(LocalFileSystem().ReadFile(request.trace_path)->size()));

  // The document: the caller's members, the payload, finish_ns; readable by the run loader.
  auto document_text = ReadDetailFile(request.document_path);
  ASSERT_TRUE(document_text.ok()) << document_text.status().message();
  const json document = json::parse(*document_text);
  EXPECT_EQ(document["kind"], "operators");
  EXPECT_EQ(document["window"]["index"], 0);
  EXPECT_EQ(document["events"].size(), 342u);
  EXPECT_EQ(document["events_total"], 342);
  EXPECT_EQ(document["events_capped"], false);
  EXPECT_EQ(document["device_events"].size(), 0u);
  EXPECT_EQ(document["finish_ns"], written->finish_ns);
  EXPECT_GT(written->finish_ns, 1234);
  EXPECT_FALSE(document.contains("conversion_problems"));
  ModelBuilder builder(ModelSource::kStepscope);
  auto added = AddOperatorsDocument(request.document_path, 0, builder);
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(*added, 342u);
}

TEST(KinetoWindowWriter, TheRunLoaderDrawsLaunchToKernelFlowsFromTheDocument) {
  TempDir dir;
  KinetoWindowRequest request = Request(dir, ReadText(kSimpleAdd));
  request.clock = {};
  auto written = WriteKinetoWindow(request);
  ASSERT_TRUE(written.ok()) << written.status().message();
  ModelBuilder builder(ModelSource::kStepscope);
  NodeFacts node;
  node.name = "n1";
  builder.AddNode(node);
  ASSERT_TRUE(AddOperatorsDocument(request.document_path, 0, builder).ok());
  const Model model = std::move(builder).Finish();
  const OperatorsWindow window = ConvertOk(ReadText(kSimpleAdd));
  int64_t linked = 0;
  for (const WindowDeviceEvent& device : window.device_events) linked += device.correlation >= 0;
  ASSERT_EQ(model.flows().size(), static_cast<size_t>(linked));
  for (const Flow& flow : model.flows()) {
    const FrameworkEvent& launch = model.events()[flow.from];
    const FrameworkEvent& kernel = model.events()[flow.to];
    EXPECT_EQ(model.String(flow.category), "ac2g");
    EXPECT_EQ(launch.device, -1);
    EXPECT_EQ(kernel.device, 0);
    EXPECT_LE(launch.start_ns, kernel.start_ns);  // a launch precedes its kernel
    EXPECT_EQ(model.FindArg(launch, "correlation")->int_value, flow.id);
    EXPECT_EQ(model.FindArg(kernel, "correlation")->int_value, flow.id);
  }
}

TEST(KinetoWindowWriter, KeepsTheRankTorchWrote) {
  TempDir dir;
  const std::string text = ReadText(kSimpleAdd);  // distributedInfo {"rank": 0}
  const KinetoWindowRequest request = Request(dir, text);
  ASSERT_TRUE(WriteKinetoWindow(request).ok());
  EXPECT_EQ(ReadText(request.trace_path), text);
}

TEST(KinetoWindowWriter, FailsWithoutHalfWrittenFiles) {
  TempDir dir;
  KinetoWindowRequest request = Request(dir, ReadText(kTorch2Trace));
  request.document_json = "[1, 2]";
  auto written = WriteKinetoWindow(request);
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.status().message().find("must be one JSON object"), std::string::npos);
  EXPECT_FALSE(Exists(request.trace_path));
  EXPECT_FALSE(Exists(request.document_path));
  EXPECT_FALSE(Exists(request.saved_trace_path));

  request = Request(dir, ReadText(kTorch2Trace).substr(0, 5000));
  written = WriteKinetoWindow(request);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), StatusCode::kDataLoss) << written.status().message();
  EXPECT_FALSE(Exists(request.trace_path));
  EXPECT_FALSE(Exists(request.saved_trace_path));

  request.saved_trace_path = dir.File("missing.json");
  written = WriteKinetoWindow(request);
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.status().message().find("missing.json"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::analysis
