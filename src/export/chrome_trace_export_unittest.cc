#include "export/chrome_trace_export.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/export_test_model.h"
#include "analysis/thread_tracks.h"
#include "export/trace_names.h"

namespace stepscope::exporting {

using analysis::LayoutTracks;
using analysis::ThreadKey;
using analysis::TrackLayout;
namespace {

using testing::MakeExportTestModel;

nlohmann::json ParseTrace(const std::string& text) {
  nlohmann::json trace = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(trace.is_object()) << text.substr(0, 200);
  return trace;
}

std::vector<nlohmann::json> EventsOf(const nlohmann::json& trace, const std::string& phase) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == phase) out.push_back(event);
  }
  return out;
}

TEST(MicrosFromNanosTest, KeepsNanosecondsAsThreeDecimals) {
  EXPECT_EQ(MicrosFromNanos(0), "0.000");
  EXPECT_EQ(MicrosFromNanos(5), "0.005");
  EXPECT_EQ(MicrosFromNanos(1234567), "1234.567");
  EXPECT_EQ(MicrosFromNanos(86'400'000'000'001), "86400000000.001");
  EXPECT_EQ(MicrosFromNanos(-1500), "-1.500");
}

TEST(ThreadTracksTest, OverlappingSiblingGoesToOverflowLane) {
  const analysis::Model model = MakeExportTestModel();
  const TrackLayout layout = LayoutTracks(model);
  ASSERT_EQ(layout.threads.size(), 2u);
  EXPECT_EQ(layout.threads[0].device, 0);  // (node 0, pid 0, device 0, tid 7) sorts first
  EXPECT_EQ(layout.threads[1].tid, 11);
  ASSERT_EQ(layout.tracks.size(), 3u);
  std::map<std::string, uint32_t> track_of;
  for (size_t i = 0; i < model.events().size(); ++i) track_of[std::string(model.String(model.events()[i].name))] = layout.event_track[i];
  EXPECT_EQ(track_of["Step:ModeKeys.TRAIN"], 1u);
  EXPECT_EQ(track_of["forward"], 1u);
  EXPECT_EQ(track_of["cudaLaunchKernel"], 1u);
  EXPECT_EQ(track_of["overlap"], 2u);   // crosses forward's end
  EXPECT_EQ(track_of["backward"], 1u);  // forward has ended: nests in the step again
  EXPECT_EQ(track_of["gemm_kernel"], 0u);
  EXPECT_EQ(layout.tracks[2].lane, 1u);
  const TraceNames names(model);
  EXPECT_EQ(names.Thread(layout.threads[1], 1), "thread 11 (overlap 1)");
  EXPECT_EQ(names.Thread(layout.threads[0], 0), "stream 7");
  ASSERT_EQ(layout.processes.size(), 2u);
  EXPECT_EQ(layout.process_of_thread, (std::vector<uint32_t>{0, 1}));
}

TEST(TraceNamesTest, ProcessesAreNamedByNodeRankPidAndProgramOnOneLine) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts node;
  node.name = "n1";
  builder.AddNode(node);
  auto stream = [&](int64_t pid, int64_t ppid, const std::string& command) {
    analysis::StreamFacts facts;
    facts.pid = pid;
    facts.ppid = ppid;
    facts.meta_json = nlohmann::json{{"command", command}}.dump();
    builder.AddStream(facts);
  };
  stream(10, 1, "/opt/venv/bin/python -c \"import torch\n  for i in range(3):\n\tpass\"");
  stream(11, 10, "/opt/venv/bin/python -c \"import torch\n  for i in range(3):\n\tpass\"");
  stream(12, 1, "/usr/bin/" + std::string(100, 'x'));
  const analysis::Model model = std::move(builder).Finish();
  const TraceNames names(model);
  EXPECT_EQ(names.HostProcess(0, 10), "n1 · pid 10 · python -c \"import torch for i in range(3): pass\"");
  EXPECT_EQ(names.HostProcess(0, 11), "n1 · pid 11 · worker of pid 10");  // its parent's program: a worker
  EXPECT_EQ(names.HostProcess(0, 12), "n1 · pid 12 · " + std::string(60, 'x') + "…");
  EXPECT_EQ(names.HostProcess(0, 99), "n1 · pid 99");
  EXPECT_EQ(names.Gpu(0, 3), "n1 · GPU 3");
  EXPECT_EQ(names.SystemMetrics(0), "n1 · system metrics");
}

TEST(ChromeTraceExportTest, DisplayTimeUnitComesFirstAndDocumentParses) {
  StringSink sink;
  auto stats = WriteChromeTrace(MakeExportTestModel(), sink);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(sink.text().rfind("{\"displayTimeUnit\":\"ns\",", 0), 0u);
  const nlohmann::json trace = ParseTrace(sink.text());
  EXPECT_EQ(trace["otherData"]["time_origin_unix_ns"], testing::kT0 + 1000);
  EXPECT_EQ(stats->slices, 6u);
  EXPECT_EQ(stats->overflow_slices, 1u);
  EXPECT_EQ(stats->instants, 1u);
  EXPECT_EQ(stats->counter_events, 3u);
  EXPECT_EQ(stats->skipped_samples, 1u);  // the NaN
  EXPECT_EQ(stats->flows, 1u);
  EXPECT_EQ(stats->step_flows, 1u);  // the step -> its kernel on the GPU stream
}

TEST(ChromeTraceExportTest, SlicesHaveExactTimesOnTheirTracks) {
  StringSink sink;
  ASSERT_TRUE(WriteChromeTrace(MakeExportTestModel(), sink).ok());
  // Exact text: microseconds from the origin with three decimals.
  EXPECT_NE(sink.text().find("{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":3.000,\"dur\":2.000,\"name\":\"overlap\","
                             "\"cat\":\"DataLoaderIter\",\"args\":{\"phase\":\"DataLoaderIter\"}}"),
            std::string::npos)
      << sink.text();
  const nlohmann::json trace = ParseTrace(sink.text());
  std::map<std::string, nlohmann::json> slice;
  for (const nlohmann::json& event : EventsOf(trace, "X")) slice[event["name"]] = event;
  ASSERT_EQ(slice.size(), 6u);
  EXPECT_EQ(slice["Step:ModeKeys.TRAIN"]["tid"], 2);
  EXPECT_EQ(slice["Step:ModeKeys.TRAIN"]["args"]["step"], 0);
  EXPECT_DOUBLE_EQ(slice["Step:ModeKeys.TRAIN"]["dur"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(slice["cudaLaunchKernel"]["ts"].get<double>(), 1.5);
  EXPECT_EQ(slice["cudaLaunchKernel"]["cat"], "cuda_runtime");
  EXPECT_EQ(slice["cudaLaunchKernel"]["args"]["note"], "say \"hi\", ok");
  EXPECT_EQ(slice["cudaLaunchKernel"]["args"]["correlation"], 77);
  EXPECT_EQ(slice["gemm_kernel"]["tid"], 1);
  EXPECT_EQ(slice["gemm_kernel"]["pid"], 2);  // GPU 0 is a process of its own
  EXPECT_DOUBLE_EQ(slice["gemm_kernel"]["args"]["occupancy"].get<double>(), 0.5);
  EXPECT_EQ(slice["overlap"]["tid"], 3);
  EXPECT_EQ(slice["backward"]["tid"], 2);
}

TEST(ChromeTraceExportTest, NoTrackHoldsOverlappingSiblings) {
  StringSink sink;
  ASSERT_TRUE(WriteChromeTrace(MakeExportTestModel(), sink).ok());
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> by_track;  // ns, from the text
  for (const nlohmann::json& event : EventsOf(ParseTrace(sink.text()), "X")) {
    const int64_t start = std::llround(event["ts"].get<double>() * 1000);
    by_track[event["tid"]].emplace_back(start, start + std::llround(event["dur"].get<double>() * 1000));
  }
  for (auto& [tid, slices] : by_track) {
    std::vector<int64_t> open;
    for (const auto& [start, end] : slices) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      EXPECT_TRUE(open.empty() || end <= open.back()) << "track " << tid << " slice at " << start;
      open.push_back(end);
    }
  }
  EXPECT_EQ(by_track[3].size(), 1u);
}

TEST(ChromeTraceExportTest, MetadataNamesProcessesAndThreads) {
  StringSink sink;
  ASSERT_TRUE(WriteChromeTrace(MakeExportTestModel(), sink).ok());
  std::map<std::pair<int, int>, std::string> names;
  for (const nlohmann::json& event : EventsOf(ParseTrace(sink.text()), "M")) {
    if (event["name"] == "process_name" || event["name"] == "thread_name") {
      names[{event["pid"], event["tid"]}] = event["args"]["name"];
    }
  }
  // Processes in (node, host processes, GPUs, system metrics) order.
  EXPECT_EQ(names[std::make_pair(1, 0)], "n1 · pid 10");
  EXPECT_EQ(names[std::make_pair(2, 0)], "n1 · GPU 0");
  EXPECT_EQ(names[std::make_pair(3, 0)], "n1 · system metrics");
  EXPECT_EQ(names[std::make_pair(4, 0)], "n2 · system metrics");
  EXPECT_EQ(names[std::make_pair(2, 1)], "stream 7");
  EXPECT_EQ(names[std::make_pair(1, 2)], "thread 11");
  EXPECT_EQ(names[std::make_pair(1, 3)], "thread 11 (overlap 1)");
  EXPECT_EQ(names.size(), 7u);
}

TEST(ChromeTraceExportTest, SystemSamplesAreCountersPerNode) {
  StringSink sink;
  ASSERT_TRUE(WriteChromeTrace(MakeExportTestModel(), sink).ok());
  const std::vector<nlohmann::json> counters = EventsOf(ParseTrace(sink.text()), "C");
  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[0]["name"], "cpu/cpu0/CPUUtilization");
  EXPECT_EQ(counters[0]["pid"], 3);
  EXPECT_DOUBLE_EQ(counters[0]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(counters[0]["args"]["value"].get<double>(), 50.5);
  EXPECT_DOUBLE_EQ(counters[1]["args"]["value"].get<double>(), 75.25);
  EXPECT_EQ(counters[2]["name"], "memory/MemoryUsedPercent");
  EXPECT_EQ(counters[2]["pid"], 4);
  EXPECT_DOUBLE_EQ(counters[2]["ts"].get<double>(), 0.5);
}

// The flows of `category`, in file order.
std::vector<nlohmann::json> FlowEventsOf(const nlohmann::json& trace, const std::string& phase,
                                         const std::string& category) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& event : EventsOf(trace, phase)) {
    if (event["cat"] == category) out.push_back(event);
  }
  return out;
}

TEST(ChromeTraceExportTest, FlowsArePairedOnTheSlicesTracks) {
  StringSink sink;
  ASSERT_TRUE(WriteChromeTrace(MakeExportTestModel(), sink).ok());
  const nlohmann::json trace = ParseTrace(sink.text());
  const std::vector<nlohmann::json> starts = FlowEventsOf(trace, "s", "ac2g");
  const std::vector<nlohmann::json> finishes = FlowEventsOf(trace, "f", "ac2g");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(starts[0]["id"], finishes[0]["id"]);
  EXPECT_EQ(starts[0]["pid"], 1);
  EXPECT_EQ(finishes[0]["pid"], 2);
  EXPECT_EQ(starts[0]["tid"], 2);
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), 1.5);
  EXPECT_EQ(finishes[0]["tid"], 1);
  EXPECT_EQ(finishes[0]["bp"], "e");
  EXPECT_DOUBLE_EQ(finishes[0]["ts"].get<double>(), 2.5);
  EXPECT_EQ(finishes[0]["cat"], "ac2g");
  EXPECT_EQ(finishes[0]["args"]["correlation"], 77);
  EXPECT_FALSE(starts[0].contains("bp"));
}

TEST(ChromeTraceExportTest, AStepLinksToTheFirstSliceItRanOnEveryOtherTrackOfItsRank) {
  StringSink sink;
  ASSERT_TRUE(WriteChromeTrace(MakeExportTestModel(), sink).ok());
  const nlohmann::json trace = ParseTrace(sink.text());
  const std::vector<nlohmann::json> starts = FlowEventsOf(trace, "s", "step_contents");
  const std::vector<nlohmann::json> finishes = FlowEventsOf(trace, "f", "step_contents");
  // Its own thread's slices nest under it already: only the GPU stream gets a flow.
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(starts[0]["id"], finishes[0]["id"]);
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), 0.0);  // the step's start
  EXPECT_EQ(starts[0]["tid"], 2);
  EXPECT_EQ(finishes[0]["pid"], 2);
  EXPECT_DOUBLE_EQ(finishes[0]["ts"].get<double>(), 2.5);  // the kernel's start
  EXPECT_FALSE(finishes[0].contains("args"));
}

TEST(ChromeTraceExportTest, ARangeKeepsWhatOverlapsItWholeAndTheCounterValueInForce) {
  StringSink sink;
  ChromeTraceOptions options;
  options.range.whole = false;
  options.range.start_ns = testing::kT0 + 6500;  // inside backward and the step
  options.range.end_ns = testing::kT0 + 7000;
  options.range.description = "test slice";
  auto stats = WriteChromeTrace(MakeExportTestModel(), sink, options);
  ASSERT_TRUE(stats.ok());
  const nlohmann::json trace = ParseTrace(sink.text());
  std::vector<std::string> slices;
  for (const nlohmann::json& event : EventsOf(trace, "X")) slices.push_back(event["name"]);
  EXPECT_EQ(slices, (std::vector<std::string>{"Step:ModeKeys.TRAIN", "backward"}));
  EXPECT_DOUBLE_EQ(EventsOf(trace, "X")[0]["dur"].get<double>(), 8.0);  // never cut
  // The CPU counter's sample before the range holds its value in force (the NaN is skipped);
  // the memory series of n2 has its only sample before the range, so it is kept as well.
  const std::vector<nlohmann::json> counters = EventsOf(trace, "C");
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["name"], "memory/MemoryUsedPercent");
  EXPECT_EQ(stats->skipped_samples, 1u);
  EXPECT_EQ(stats->flows, 0u);       // the launch and the kernel lie outside
  EXPECT_EQ(stats->step_flows, 0u);  // the kernel started before the range
  EXPECT_EQ(trace["otherData"]["range"], "test slice");
  EXPECT_EQ(trace["otherData"]["range_start_unix_ns"], testing::kT0 + 6500);
  // Only the tracks and processes with something written are named.
  std::vector<std::string> processes;
  for (const nlohmann::json& event : EventsOf(trace, "M")) {
    if (event["name"] == "process_name") processes.push_back(event["args"]["name"]);
  }
  EXPECT_EQ(processes, (std::vector<std::string>{"n1 · pid 10", "n1 · system metrics", "n2 · system metrics"}));
}

TEST(ChromeTraceExportTest, EmptyModelIsAnEmptyTrace) {
  StringSink sink;
  const analysis::Model empty = analysis::ModelBuilder(analysis::ModelSource::kKineto).Finish();
  ASSERT_TRUE(WriteChromeTrace(empty, sink).ok());
  const nlohmann::json trace = ParseTrace(sink.text());
  EXPECT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["traceEvents"].size(), 0u);
  EXPECT_EQ(trace["otherData"]["source"], "kineto");
}

TEST(ChromeTraceExportTest, UnwritablePathIsOneLineNamingIt) {
  auto stats = ExportChromeTrace(MakeExportTestModel(), "/proc/stepscope-no/x.trace.json");
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("/proc/stepscope-no"), std::string::npos) << stats.status().message();
  EXPECT_NE(stats.status().message().find("-o"), std::string::npos);
  EXPECT_EQ(stats.status().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace stepscope::exporting
