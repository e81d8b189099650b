// What a GPU stream loads as, pinned by a golden: the same CUPTI records (every kind, names met
// again at the same address, an address reused for another name, devices and streams too large
// for their track fields, NVTX ranges, the tracer's state changes, CUPTI's drops) written by the
// GpuStreamWriter and read back through the stepscope loader give exactly the model events,
// args and flows in tests/data/gpu_stream/events.golden. The golden was made from the version-1
// encoding (one begin, end and argument record each), and tests/data/gpu_stream/v1/ holds a
// stream that encoding wrote: both must load to the golden, so the activity frames of version 2
// read exactly as the old records did and a run written before them still loads. So must
// tests/data/gpu_stream/v2_row_columns/, the same records in version 2's frames as they were
// before their columns were split by kind (rows in the tracer's order, one stream of columns).
//
// STEPSCOPE_REBASELINE=1 rewrites the golden from the current writer (review the diff).
#include "gpu_tracer/gpu_stream_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/stepscope_loader.h"

namespace stepscope {
namespace {

std::string TestData(const std::string& relative) {
  const char* root = std::getenv("STEPSCOPE_TEST_DATA");
  return std::string(root != nullptr ? root : "tests/data") + "/" + relative;
}

// The loaded model in a form that does not depend on insertion order, pid or the wall clock:
// events sorted by their text, times relative to the earliest event, flows by their ends' text.
std::string Dump(const analysis::Model& model) {
  int64_t first = INT64_MAX;
  for (const analysis::FrameworkEvent& event : model.events()) first = std::min(first, event.start_ns);
  std::vector<std::string> lines(model.events().size());
  for (size_t i = 0; i < model.events().size(); ++i) {
    const analysis::FrameworkEvent& e = model.events()[i];
    std::ostringstream line;
    line << (e.kind == analysis::EventKind::kSpan ? "span" : e.kind == analysis::EventKind::kInstant ? "instant" : "counter")
         << " start=" << e.start_ns - first << " end=" << e.end_ns - first << " device=" << e.device << " tid=" << e.tid
         << " name=\"" << model.String(e.name) << "\" category=" << model.String(e.category)
         << " phase=" << model.String(e.phase) << (e.unfinished ? " unfinished" : "") << " args{";
    bool comma = false;
    for (const analysis::EventArg& arg : model.Args(e)) {
      line << (comma ? ", " : "") << model.String(arg.key) << "=";
      comma = true;
      switch (arg.type) {
        case analysis::EventArg::Type::kInt:
        case analysis::EventArg::Type::kBool: line << arg.int_value; break;
        case analysis::EventArg::Type::kDouble: line << arg.double_value; break;
        case analysis::EventArg::Type::kString: line << "\"" << model.String(arg.string_value) << "\""; break;
      }
    }
    line << "}";
    lines[i] = line.str();
  }
  std::vector<std::string> flows;
  for (const analysis::Flow& flow : model.flows()) {
    flows.push_back("flow " + std::string(model.String(flow.category)) + " id=" + std::to_string(flow.id) + "\n  from " +
                    lines[flow.from] + "\n  to   " + lines[flow.to]);
  }
  std::vector<std::string> problems;
  for (const analysis::Problem& problem : model.problems()) problems.push_back("problem " + problem.name);
  uint64_t dropped = 0;
  for (const analysis::StreamFacts& stream : model.streams()) dropped += stream.dropped_events;
  std::sort(lines.begin(), lines.end());
  std::sort(flows.begin(), flows.end());
  std::sort(problems.begin(), problems.end());
  std::string out = "dropped_events " + std::to_string(dropped) + "\n";
  for (const auto* part : {&lines, &flows, &problems}) {
    for (const std::string& line : *part) out += line + "\n";
  }
  return out;
}

class GpuStreamWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("stepscope_gpu_stream_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Every kind of record the tracer hands over, in three CUPTI buffers.
  void WriteRecords(GpuStreamWriter& writer) {
    const uint64_t base = 5'000'000'000;
    writer.OnStateChange(base, GpuTracerState::kTracing, "started by the test");
    auto api = [&](GpuActivityKind kind, const char* name, uint32_t correlation, uint32_t cbid, uint64_t at_us) {
      GpuActivityRecord r;
      r.kind = kind;
      r.name = name;
      r.correlation = correlation;
      r.callback_id = cbid;
      r.thread_id = 4242;
      r.start_ns = base + at_us * 1000;
      r.end_ns = r.start_ns + 3'000;
      writer.OnRecord(r);
    };
    auto kernel = [&](const char* name, uint32_t device, uint32_t stream, uint32_t correlation, uint64_t at_us,
                      int32_t gx, int32_t gy, int32_t gz, int32_t bx, int32_t by, int32_t bz, uint16_t registers,
                      uint32_t shared) {
      GpuActivityRecord r;
      r.kind = GpuActivityKind::kKernel;
      r.name = name;
      r.device = device;
      r.context = 1;
      r.stream = stream;
      r.correlation = correlation;
      r.start_ns = base + at_us * 1000;
      r.end_ns = r.start_ns + 40'000 + correlation;
      r.grid[0] = gx, r.grid[1] = gy, r.grid[2] = gz;
      r.block[0] = bx, r.block[1] = by, r.block[2] = bz;
      r.registers_per_thread = registers;
      r.shared_memory_bytes = shared;
      writer.OnRecord(r);
    };
    auto copy = [&](GpuActivityKind kind, GpuMemcpyKind memcpy_kind, GpuMemoryKind src, GpuMemoryKind dst,
                    uint32_t device, uint32_t stream, uint32_t correlation, uint64_t bytes, uint64_t at_us) {
      GpuActivityRecord r;
      r.kind = kind;
      r.memcpy_kind = memcpy_kind;
      r.src_memory = src;
      r.dst_memory = dst;
      r.device = device;
      r.stream = stream;
      r.correlation = correlation;
      r.bytes = bytes;
      r.start_ns = base + at_us * 1000;
      r.end_ns = r.start_ns + 7'000;
      writer.OnRecord(r);
    };
    auto sync = [&](GpuSyncKind kind, uint32_t device, uint32_t stream, uint32_t correlation, uint64_t at_us) {
      GpuActivityRecord r;
      r.kind = GpuActivityKind::kSync;
      r.sync_kind = kind;
      r.device = device;
      r.stream = stream;
      r.correlation = correlation;
      r.start_ns = base + at_us * 1000;
      r.end_ns = r.start_ns + 9'000;
      writer.OnRecord(r);
    };
    auto marker = [&](uint8_t flags, uint32_t id, const char* name, uint64_t at_us) {
      GpuActivityRecord r;
      r.kind = GpuActivityKind::kMarker;
      r.marker_flags = flags;
      r.id = id;
      r.name = name;
      r.thread_id = 4242;
      r.start_ns = r.end_ns = base + at_us * 1000;
      writer.OnRecord(r);
    };
    // A name buffer whose address CUPTI reuses for another module's kernel.
    char reused[32];
    std::strcpy(reused, "alpha_kernel");

    marker(kGpuMarkerStart, 5, "forward", 1);
    api(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", 1, 211, 2);
    kernel("ampere_sgemm_128x64_nn", 0, 7, 1, 10, 128, 2, 1, 256, 1, 1, 64, 4096);
    api(GpuActivityKind::kDriverApi, "cuLaunchKernel", 2, 307, 12);
    kernel("k2", 1, 13, 2, 20, 1, 1, 1, 32, 4, 2, 16, 0);
    api(GpuActivityKind::kRuntimeApi, "cudaMemcpyAsync", 3, 41, 22);
    copy(GpuActivityKind::kMemcpy, GpuMemcpyKind::kHtoD, GpuMemoryKind::kPageable, GpuMemoryKind::kDevice, 0, 7, 3,
         1u << 20, 60);
    api(GpuActivityKind::kRuntimeApi, "cudaMemsetAsync", 4, 51, 24);
    copy(GpuActivityKind::kMemset, GpuMemcpyKind::kUnknown, GpuMemoryKind::kDevice, GpuMemoryKind::kUnknown, 0, 8, 4,
         4096, 70);
    marker(kGpuMarkerInstant, 0, "checkpoint", 25);
    kernel(reused, 0, 7, 5, 80, 64, 1, 1, 128, 1, 1, 32, 0);
    writer.OnCuptiDropped(3);
    writer.OnBufferDone();

    api(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", 6, 211, 100);
    kernel("ampere_sgemm_128x64_nn", 0, 7, 6, 110, 128, 2, 1, 256, 1, 1, 64, 4096);
    api(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", 7, 211, 101);
    kernel("ampere_sgemm_128x64_nn", 0, 8, 7, 115, 256, 1, 1, 128, 1, 1, 64, 8192);  // another launch config
    std::strcpy(reused, "beta_kernel_x");
    kernel(reused, 0, 7, 8, 160, 64, 1, 1, 128, 1, 1, 32, 0);
    kernel(nullptr, 0, 7, 9, 170, 1, 1, 1, 1, 1, 1, 8, 0);
    kernel("huge_ids", 200, 5'000'000, 10, 175, 2, 1, 1, 64, 1, 1, 24, 0);
    copy(GpuActivityKind::kMemcpy, static_cast<GpuMemcpyKind>(42), GpuMemoryKind::kPinned,
         static_cast<GpuMemoryKind>(99), kGpuNoValue, kGpuNoValue, 11, 12, 180);
    copy(GpuActivityKind::kMemcpy, GpuMemcpyKind::kDtoH, GpuMemoryKind::kDevice, GpuMemoryKind::kPinned, 0, 7, 12, 640,
         190);
    sync(GpuSyncKind::kStreamSync, 0, 7, 0, 200);
    sync(GpuSyncKind::kContextSync, kGpuNoValue, kGpuNoValue, 13, 210);
    {
      GpuActivityRecord r;
      r.kind = GpuActivityKind::kOverhead;
      r.id = 1u << 16;
      r.thread_id = 4242;
      r.start_ns = base + 215'000;
      r.end_ns = r.start_ns + 2'000;
      writer.OnRecord(r);
    }
    writer.OnBufferDone();

    marker(kGpuMarkerEnd, 5, nullptr, 220);
    api(GpuActivityKind::kRuntimeApi, nullptr, 14, 211, 230);
    api(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", 15, 211, 231);
    kernel("k2", 1, 13, 15, 240, 1, 1, 1, 32, 4, 2, 16, 0);
    writer.OnBufferDone();
    writer.OnStateChange(base + 300'000, GpuTracerState::kOff, "stopped by the test");
  }

  GpuStreamWriterOptions Options() {
    GpuStreamWriterOptions options;
    options.node_dir = dir_.string();
    options.pid = 4242;
    options.gpu_clock_ns = [] { return uint64_t{0}; };
    return options;
  }

  std::string ReadGolden() {
    std::ifstream in(TestData("gpu_stream/events.golden"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path dir_;
};

TEST_F(GpuStreamWriterTest, EveryRecordKindLoadsAsTheGoldenModelEvents) {
  {
    GpuStreamWriter writer(Options());
    WriteRecords(writer);
    writer.Finish(nlohmann::json::object());
    ASSERT_EQ(writer.error(), "");
  }
  auto model = analysis::LoadStepscopeRun(dir_.string());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const std::string dump = Dump(*model);
  const char* rebaseline = std::getenv("STEPSCOPE_REBASELINE");
  if (rebaseline != nullptr && std::string(rebaseline) == "1") {
    std::ofstream(TestData("gpu_stream/events.golden")) << dump;
    GTEST_SKIP() << "rebaselined " << TestData("gpu_stream");
  }
  EXPECT_EQ(dump, ReadGolden());
}

TEST_F(GpuStreamWriterTest, AStreamWrittenByTheVersion1EncodingLoadsAsTheGolden) {
  std::filesystem::copy(TestData("gpu_stream/v1"), dir_, std::filesystem::copy_options::recursive);
  auto model = analysis::LoadStepscopeRun(dir_.string());
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(Dump(*model), ReadGolden());
}

TEST_F(GpuStreamWriterTest, AStreamWrittenBeforeTheColumnsWereSplitByKindLoadsAsTheGolden) {
  std::filesystem::copy(TestData("gpu_stream/v2_row_columns"), dir_, std::filesystem::copy_options::recursive);
  auto model = analysis::LoadStepscopeRun(dir_.string());
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(Dump(*model), ReadGolden());
}

TEST_F(GpuStreamWriterTest, AKernelNameCyclingThroughMoreLaunchConfigurationsThanItKeepsLoadsEachKernelsOwn) {
  // One name, six grids in a mixed order (the writer keeps a name's last four), over two
  // buffers: each kernel loads with the grid it ran with, whether its configuration was recent,
  // evicted or new.
  std::vector<std::string> grids;
  {
    GpuStreamWriter writer(Options());
    for (uint32_t i = 0; i < 40; ++i) {
      GpuActivityRecord r;
      r.kind = GpuActivityKind::kKernel;
      r.name = "vectorized_elementwise_kernel";
      r.device = 0;
      r.stream = 7;
      r.correlation = i + 1;
      r.start_ns = 1'000'000'000 + uint64_t{i} * 10'000;
      r.end_ns = r.start_ns + 5'000;
      // Repeats, recent ones and ones evicted since: 16..512.
      static constexpr int kOrder[20] = {0, 0, 1, 0, 2, 1, 3, 4, 0, 5, 2, 2, 1, 4, 3, 5, 5, 0, 1, 3};
      const int32_t grid = 16 << kOrder[i % 20];
      r.grid[0] = grid, r.grid[1] = 1, r.grid[2] = 1;
      r.block[0] = 128, r.block[1] = 1, r.block[2] = 1;
      r.registers_per_thread = 32;
      writer.OnRecord(r);
      grids.push_back("[" + std::to_string(grid) + ", 1, 1]");
      if (i == 22) writer.OnBufferDone();
    }
    writer.OnBufferDone();
    writer.Finish(nlohmann::json::object());
    ASSERT_EQ(writer.error(), "");
  }
  auto model = analysis::LoadStepscopeRun(dir_.string());
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::vector<std::pair<int64_t, std::string>> loaded;
  for (const analysis::FrameworkEvent& e : model->events()) {
    if (model->String(e.category) != "kernel") continue;
    for (const analysis::EventArg& arg : model->Args(e)) {
      if (model->String(arg.key) == "grid") loaded.emplace_back(e.start_ns, std::string(model->String(arg.string_value)));
    }
  }
  std::sort(loaded.begin(), loaded.end());
  ASSERT_EQ(loaded.size(), grids.size());
  for (size_t i = 0; i < grids.size(); ++i) EXPECT_EQ(loaded[i].second, grids[i]) << "kernel " << i;
}

}  // namespace
}  // namespace stepscope
