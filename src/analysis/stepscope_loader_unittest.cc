// Writes small runs with the real store writer (test_run_writer.h) and checks the loaded model
// exactly: series keys and values, phases, step numbers, args, the disturbed flag, node facts,
// detail operators and complete_until_ns.
#include "analysis/stepscope_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <tuple>
#include <vector>

#include "analysis/detail_operators.h"
#include "analysis/test_run_writer.h"
#include "base/file_system.h"

namespace stepscope::analysis {
namespace {

using testing::kTestEpochNs;
using testing::TestManifest;
using testing::TestStream;
using store::Phase;

constexpr int64_t T = kTestEpochNs;

class StepscopeLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = ::testing::TempDir() + "/stepscope-loader-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    node_ = job_ + "/algo-1";
    ASSERT_TRUE(CreateDirectories(node_ + "/detail").ok());
  }
  void WriteManifest(const std::string& status, const std::string& extra = "") {
    ASSERT_TRUE(WriteFileAtomically(node_ + "/manifest.json", TestManifest("algo-1", status, extra)).ok());
  }

  std::string job_;
  std::string node_;
};

const SystemSeries* FindSeries(const Model& model, std::string_view type, std::string_view name,
                               std::string_view dimension) {
  for (const SystemSeries& series : model.series()) {
    if (model.String(series.type) == type && model.String(series.name) == name &&
        model.String(series.dimension) == dimension) {
      return &series;
    }
  }
  return nullptr;
}

std::vector<const FrameworkEvent*> EventsNamed(const Model& model, std::string_view name) {
  std::vector<const FrameworkEvent*> found;
  for (const FrameworkEvent& event : model.events()) {
    if (model.String(event.name) == name) found.push_back(&event);
  }
  return found;
}

// The run most tests read: a system stream and one training process on node algo-1.
//   tid 11: TRAIN steps 0..3 each 1000 ns from 1000, EVAL step 0 [5000, 5500];
//           Forward [1100, 1500] (module "Net") in step 0; DetailWindow:operators [2000, 3000]
//           exactly over step 1 (touching steps 0 and 2); loss counter 2.5 at 1900;
//           annotation my_region [4100, 4200] with lr 0.1 and note "x".
//   tid 12: DetailWindowWrite [3500, 3600] inside step 2.
void WriteTrainingProcess(TestStream& proc) {
  proc.StepBegin(11, 1000, Phase::kTrain, 0);
  proc.Instant(11, 1000, "Lifecycle:FirstStep");
  proc.Begin(11, 1100, "Forward");
  proc.StringArg(11, "module", "Net");
  proc.End(11, 1500, "Forward");
  proc.Counter(11, 1900, "loss", 2.5);
  proc.StepEnd(11, 2000, Phase::kTrain, 0);
  proc.StepBegin(11, 2000, Phase::kTrain, 1);
  proc.Begin(11, 2000, "DetailWindow:operators");
  proc.StepEnd(11, 3000, Phase::kTrain, 1);
  proc.End(11, 3000, "DetailWindow:operators");
  proc.IntArg(11, "window", 0);
  proc.StepBegin(11, 3000, Phase::kTrain, 2);
  proc.StepEnd(11, 4000, Phase::kTrain, 2);
  proc.StepBegin(11, 4000, Phase::kTrain, 3);
  proc.Begin(11, 4100, "my_region");
  proc.DoubleArg(11, "lr", 0.1);
  proc.StringArg(11, "note", "x");
  proc.End(11, 4200, "my_region");
  proc.StepEnd(11, 5000, Phase::kTrain, 3);
  proc.StepBegin(11, 5000, Phase::kEval, 0);
  proc.StepEnd(11, 5500, Phase::kEval, 0);
  proc.Begin(12, 3500, "DetailWindowWrite");
  proc.End(12, 3600, "DetailWindowWrite");
}

void WriteSystemSamples(TestStream& system) {
  system.Sample(1000, "cpu/cpu0/util_pct", 50);
  system.Sample(1000, "cpu/cpu1/util_pct", 70);
  system.Sample(1000, "cpu/cpu0/iowait_pct", 3);
  system.Sample(1000, "cpu/total/util_pct", 60);
  system.Sample(1000, "memory/used_pct", 40);
  system.Sample(1000, "network/rx_bytes_per_s", 1000);
  system.Sample(1000, "gpu/gpu0/util_pct", 90);
  system.Sample(1000, "gpu/gpu1/memory_total_bytes", 16e9);
  system.Sample(1000, "process/rss_bytes", 123);
  system.Sample(2000, "cpu/cpu0/util_pct", 55);
  system.Sample(6000, "gpu/gpu1/memory_total_bytes", 32e9);
}

TEST_F(StepscopeLoaderTest, LoadsSamplesIntoSageMakerKeyedSeries) {
  WriteManifest("exited");
  {
    TestStream system(node_, "system", 100, /*system=*/true);
    ASSERT_TRUE(system.ok());
    WriteSystemSamples(system);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->source(), ModelSource::kStepscope);
  ASSERT_EQ(model->series().size(), 9u);

  const SystemSeries* cpu0 = FindSeries(*model, "cpu", "cpu0", "CPUUtilization");
  ASSERT_NE(cpu0, nullptr);
  EXPECT_EQ(cpu0->node, 0u);
  EXPECT_EQ(cpu0->time_ns, (std::vector<int64_t>{T + 1000, T + 2000}));
  EXPECT_EQ(cpu0->value, (std::vector<double>{50, 55}));
  const SystemSeries* iowait = FindSeries(*model, "cpu", "cpu0", "I/OWaitPercentage");
  ASSERT_NE(iowait, nullptr);
  EXPECT_EQ(iowait->value, (std::vector<double>{3}));
  const SystemSeries* memory = FindSeries(*model, "memory", "MemoryUsedPercent", "");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->value, (std::vector<double>{40}));
  const SystemSeries* rx = FindSeries(*model, "network", "ReceiveBytesPerSecond", "Algorithm");
  ASSERT_NE(rx, nullptr);
  EXPECT_EQ(rx->value, (std::vector<double>{1000}));
  const SystemSeries* gpu = FindSeries(*model, "gpu", "gpu0", "GPUUtilization");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->value, (std::vector<double>{90}));
  // Metrics without a SageMaker counterpart are kept under "stepscope".
  const SystemSeries* total = FindSeries(*model, "stepscope", "cpu/total/util_pct", "");
  ASSERT_NE(total, nullptr);
  EXPECT_EQ(total->time_ns, (std::vector<int64_t>{T + 1000}));
  EXPECT_EQ(total->value, (std::vector<double>{60}));
  ASSERT_NE(FindSeries(*model, "stepscope", "process/rss_bytes", ""), nullptr);
  ASSERT_NE(FindSeries(*model, "stepscope", "gpu/gpu1/memory_total_bytes", ""), nullptr);
  EXPECT_EQ(FindSeries(*model, "cpu", "total", "CPUUtilization"), nullptr);
  EXPECT_EQ(model->first_ns(), T + 1000);
  EXPECT_EQ(model->last_ns(), T + 6000);
  EXPECT_TRUE(model->problems().empty());
}

TEST_F(StepscopeLoaderTest, NodeFactsComeFromTheManifestThenFromSamples) {
  WriteManifest("exited", R"("instance_type":"ml.p3.8xlarge","instance_count":2,)"
                          R"("capabilities":{"gpu":{"available":true,"gpus":["Tesla V100","Tesla V100"]}})");
  {
    TestStream system(node_, "system", 100, true);
    WriteSystemSamples(system);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->nodes().size(), 1u);
  const NodeFacts& node = model->nodes()[0];
  EXPECT_EQ(node.name, "algo-1");
  EXPECT_EQ(node.instance_type, "ml.p3.8xlarge");
  EXPECT_EQ(node.instance_count, 2);
  EXPECT_EQ(node.gpu_count, 2);   // from the manifest's GPU list
  EXPECT_EQ(node.cpu_cores, 2);   // cpu0 and cpu1 sampled (cpu/total is not a core)
  // The latest memory_total_bytes per GPU; gpu0 reported none.
  EXPECT_EQ(node.gpu_memory_bytes, (std::vector<int64_t>{0, 32'000'000'000}));
  EXPECT_TRUE(node.has_manifest);
  EXPECT_EQ(node.manifest.instance_type, "ml.p3.8xlarge");
  EXPECT_EQ(node.directory, node_);
}

TEST_F(StepscopeLoaderTest, WithoutGpuCapabilityGpusAreCountedFromSamples) {
  WriteManifest("exited", R"("cpu_cores":8)");
  {
    TestStream system(node_, "system", 100, true);
    WriteSystemSamples(system);
  }
  auto model = LoadStepscopeRun(node_);  // a node directory works too
  ASSERT_TRUE(model.ok()) << model.status().message();
  const NodeFacts& node = model->nodes()[0];
  EXPECT_EQ(node.cpu_cores, 8);  // the manifest wins
  EXPECT_EQ(node.gpu_count, 2);  // gpu0 and gpu1 metrics seen
  EXPECT_EQ(node.instance_type, "");
  EXPECT_EQ(node.instance_count, 0);
}

TEST_F(StepscopeLoaderTest, StepsSpansInstantsAndCountersGetPhasesAndArgs) {
  WriteManifest("exited");
  {
    TestStream system(node_, "system", 100, true);  // the launcher's: without it, system data is lost
    TestStream proc(node_, "proc-200-abcd", 200, false);
    ASSERT_TRUE(proc.ok());
    WriteTrainingProcess(proc);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(model->problems().empty());

  ASSERT_EQ(model->steps().size(), 5u);
  std::vector<std::string> phases;
  std::vector<int64_t> numbers;
  for (uint32_t index : model->steps()) {
    const FrameworkEvent& step = model->events()[index];
    phases.emplace_back(model->String(step.phase));
    numbers.push_back(step.step);
    EXPECT_EQ(model->String(step.name), model->String(step.phase));
    EXPECT_EQ(step.kind, EventKind::kSpan);
    EXPECT_EQ(step.pid, 200);
    EXPECT_EQ(step.tid, 11);
    EXPECT_EQ(step.node, 0u);
    EXPECT_EQ(step.end_ns - step.start_ns, step.phase == model->FindString("Step:ModeKeys.EVAL") ? 500 : 1000);
  }
  EXPECT_EQ(phases, (std::vector<std::string>{"Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN",
                                              "Step:ModeKeys.TRAIN", "Step:ModeKeys.EVAL"}));
  EXPECT_EQ(numbers, (std::vector<int64_t>{0, 1, 2, 3, 0}));
  EXPECT_EQ(model->StepsInRange("Step:ModeKeys.TRAIN", 1, 2).size(), 2u);

  auto forward = EventsNamed(*model, "Forward");
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(model->String(forward[0]->phase), "Forward");
  EXPECT_EQ(forward[0]->start_ns, T + 1100);
  EXPECT_EQ(forward[0]->end_ns, T + 1500);
  EXPECT_EQ(forward[0]->step, -1);
  const EventArg* module = model->FindArg(*forward[0], "module");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->type, EventArg::Type::kString);
  EXPECT_EQ(model->String(module->string_value), "Net");

  auto region = EventsNamed(*model, "my_region");
  ASSERT_EQ(region.size(), 1u);
  EXPECT_EQ(model->String(region[0]->phase), "my_region");
  ASSERT_NE(model->FindArg(*region[0], "lr"), nullptr);
  EXPECT_EQ(model->FindArg(*region[0], "lr")->double_value, 0.1);
  EXPECT_EQ(model->String(model->FindArg(*region[0], "note")->string_value), "x");

  auto window = EventsNamed(*model, "DetailWindow:operators");
  ASSERT_EQ(window.size(), 1u);
  EXPECT_EQ(model->String(window[0]->phase), "stepscope");
  ASSERT_NE(model->FindArg(*window[0], "window"), nullptr);
  EXPECT_EQ(model->FindArg(*window[0], "window")->int_value, 0);
  auto write = EventsNamed(*model, "DetailWindowWrite");
  ASSERT_EQ(write.size(), 1u);
  EXPECT_EQ(write[0]->tid, 12);
  EXPECT_EQ(model->String(write[0]->phase), "stepscope");

  auto first_step = EventsNamed(*model, "Lifecycle:FirstStep");
  ASSERT_EQ(first_step.size(), 1u);
  EXPECT_EQ(first_step[0]->kind, EventKind::kInstant);
  EXPECT_EQ(model->String(first_step[0]->phase), "stepscope");
  EXPECT_EQ(first_step[0]->start_ns, first_step[0]->end_ns);

  auto loss = EventsNamed(*model, "loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0]->kind, EventKind::kCounter);
  EXPECT_EQ(model->String(loss[0]->phase), "loss");
  ASSERT_NE(model->FindArg(*loss[0], "value"), nullptr);
  EXPECT_EQ(model->FindArg(*loss[0], "value")->double_value, 2.5);
  EXPECT_EQ(model->events().size(), 11u);  // 5 steps, 4 spans, 1 instant, 1 counter
}

TEST_F(StepscopeLoaderTest, StepsOverlappingDetailWindowsOrTheirWriterAreDisturbed) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-200-abcd", 200, false);
    WriteTrainingProcess(proc);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::vector<std::string> disturbed;
  for (uint32_t index : model->steps()) {
    const FrameworkEvent& step = model->events()[index];
    if (!model->IsDisturbedStep(step)) continue;
    disturbed.push_back(std::string(model->String(step.phase)) + "#" + std::to_string(step.step));
  }
  // Step 1 lies in the window, step 2 holds the writer; steps 0 and 2 only touch the window.
  EXPECT_EQ(disturbed, (std::vector<std::string>{"Step:ModeKeys.TRAIN#1", "Step:ModeKeys.TRAIN#2"}));
}

TEST_F(StepscopeLoaderTest, DetailOperatorsBecomeCpuAndGpuFunctions) {
  WriteManifest("exited");
  {
    TestStream system(node_, "system", 100, true);  // the launcher's: without it, system data is lost
    TestStream proc(node_, "proc-200-abcd", 200, false);
    WriteTrainingProcess(proc);
  }
  const std::string doc = R"({"format_version":1,"kind":"operators","pid":200,"events":[)"
                          R"({"name":"aten::linear","tid":1,"start_ns":)" + std::to_string(T + 2200) +
                          R"(,"end_ns":)" + std::to_string(T + 2300) +
                          R"(,"cpu_ns":100,"self_cpu_ns":40,"shapes":[[4,8],[16,8]]},)"
                          R"({"name":"aten::mm","tid":1,"start_ns":)" + std::to_string(T + 2210) +
                          R"(,"end_ns":)" + std::to_string(T + 2290) +
                          R"(,"cpu_ns":80,"self_cpu_ns":80,"shapes":[[2,[3]],5,[]],"async":true,"device_ns":7,"self_device_ns":7},)"
                          R"({"tid":1,"start_ns":5,"end_ns":6}],)"
                          R"("device_events":[{"name":"volta_sgemm_128x64_nn","device_type":"cuda","device":1,"start_ns":)" +
                          std::to_string(T + 2250) + R"(,"end_ns":)" + std::to_string(T + 2280) + R"(},)"
                          R"json({"name":"Memcpy HtoD (Pageable -> Device)","device_type":"cuda","device":0,"start_ns":)json" +
                          std::to_string(T + 2220) + R"(,"end_ns":)" + std::to_string(T + 2230) + "}]}";
  ASSERT_TRUE(testing::WriteZstdFile(node_ + "/detail/operators-200-0.json.zst", doc));
  // Other kinds of detail documents are not operators.
  ASSERT_TRUE(testing::WriteZstdFile(node_ + "/detail/python-200-1.json.zst", R"({"kind":"python"})"));

  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto linear = EventsNamed(*model, "aten::linear");
  ASSERT_EQ(linear.size(), 1u);
  EXPECT_EQ(model->String(linear[0]->phase), "cpu_functions");
  EXPECT_EQ(model->String(linear[0]->category), "cpu_op");
  EXPECT_EQ(linear[0]->start_ns, T + 2200);
  EXPECT_EQ(linear[0]->end_ns, T + 2300);
  EXPECT_EQ(linear[0]->pid, 200);
  EXPECT_EQ(linear[0]->tid, 1);
  EXPECT_EQ(linear[0]->device, -1);
  EXPECT_EQ(model->FindArg(*linear[0], "cpu_ns")->int_value, 100);
  EXPECT_EQ(model->FindArg(*linear[0], "self_cpu_ns")->int_value, 40);
  EXPECT_EQ(model->String(model->FindArg(*linear[0], "shapes")->string_value), "[[4,8],[16,8]]");
  EXPECT_EQ(model->FindArg(*linear[0], "async"), nullptr);
  auto mm = EventsNamed(*model, "aten::mm");
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_EQ(model->FindArg(*mm[0], "async")->int_value, 1);
  EXPECT_EQ(model->String(model->FindArg(*mm[0], "shapes")->string_value), "[[2,?],?,[]]");
  EXPECT_EQ(model->FindArg(*mm[0], "device_ns")->int_value, 7);

  auto kernel = EventsNamed(*model, "volta_sgemm_128x64_nn");
  ASSERT_EQ(kernel.size(), 1u);
  EXPECT_EQ(model->String(kernel[0]->phase), "gpu_functions-dev:1");
  EXPECT_EQ(model->String(kernel[0]->category), "kernel");
  EXPECT_EQ(kernel[0]->device, 1);
  EXPECT_EQ(kernel[0]->pid, 200);
  auto copy = EventsNamed(*model, "Memcpy HtoD (Pageable -> Device)");
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(model->String(copy[0]->phase), "gpu_functions-dev:0");
  EXPECT_EQ(model->String(copy[0]->category), "gpu_memcpy");

  EXPECT_EQ(model->events().size(), 11u + 4u);
  // The nameless operator is skipped and said so.
  ASSERT_EQ(model->problems().size(), 1u);
  EXPECT_NE(model->problems()[0].sentence.find("operators-200-0.json.zst': 1 operator events"), std::string::npos)
      << model->problems()[0].sentence;
}

TEST_F(StepscopeLoaderTest, AnUnreadableDetailDocumentIsAProblemNotAFailure) {
  WriteManifest("exited");
  {
    TestStream system(node_, "system", 100, true);  // the launcher's: without it, system data is lost
    TestStream proc(node_, "proc-200-abcd", 200, false);
    WriteTrainingProcess(proc);
  }
  ASSERT_TRUE(WriteFileAtomically(node_ + "/detail/operators-200-0.json.zst", "not zstd at all").ok());
  ASSERT_TRUE(testing::WriteZstdFile(node_ + "/detail/operators-200-1.json.zst", "{truncated"));
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->events().size(), 11u);
  ASSERT_EQ(model->problems().size(), 2u);
  EXPECT_NE(model->problems()[0].sentence.find("operators-200-0.json.zst' is not a zstd file"), std::string::npos)
      << model->problems()[0].sentence;
  EXPECT_NE(model->problems()[1].sentence.find("operators-200-1.json.zst' does not hold a JSON object"), std::string::npos)
      << model->problems()[1].sentence;
}

TEST_F(StepscopeLoaderTest, AFinishedRunIsCompleteUpToItsLastTimestamp) {
  WriteManifest("killed");
  TestStream proc(node_, "proc-200-abcd", 200, false);  // even with a writer still alive
  WriteTrainingProcess(proc);
  {
    TestStream system(node_, "system", 100, true);
    WriteSystemSamples(system);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->last_ns(), T + 6000);
  EXPECT_EQ(model->complete_until_ns(), T + 6000);
}

TEST_F(StepscopeLoaderTest, ALiveRunIsCompleteUpToItsSlowestLiveStream) {
  WriteManifest("running");
  TestStream proc(node_, "proc-200-abcd", 200, false);
  WriteTrainingProcess(proc);  // latest record: 5500
  TestStream system(node_, "system", 100, true);
  WriteSystemSamples(system);  // latest record: 6000
  {
    // A worker that has exited: its older data does not hold the run back.
    TestStream worker(node_, "proc-300-beef", 300, false);
    worker.Begin(1, 1200, "DataLoaderWorker");
    worker.End(1, 1300, "DataLoaderWorker");
  }
  auto live = LoadStepscopeRun(job_);
  ASSERT_TRUE(live.ok()) << live.status().message();
  EXPECT_EQ(live->last_ns(), T + 6000);
  EXPECT_EQ(live->complete_until_ns(), T + 5500);

  proc.Close();  // the training process exits; the sampler goes on
  auto later = LoadStepscopeRun(job_);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->complete_until_ns(), T + 6000);

  system.Close();  // the launcher died without writing its manifest: no live writer at all
  auto dead = LoadStepscopeRun(job_);
  ASSERT_TRUE(dead.ok());
  EXPECT_EQ(dead->complete_until_ns(), dead->last_ns());
}

TEST_F(StepscopeLoaderTest, EventsOfTwoNodesKeepTheirNodeIndex) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-200-abcd", 200, false);
    proc.StepBegin(1, 1000, Phase::kTrain, 0);
    proc.StepEnd(1, 2000, Phase::kTrain, 0);
  }
  const std::string other = job_ + "/algo-2";
  ASSERT_TRUE(CreateDirectories(other).ok());
  ASSERT_TRUE(WriteFileAtomically(other + "/manifest.json", TestManifest("algo-2", "exited")).ok());
  {
    TestStream proc(other, "proc-200-abcd", 200, false);  // the same pid on another host
    proc.StepBegin(1, 1500, Phase::kTrain, 0);
    proc.StepEnd(1, 2500, Phase::kTrain, 0);
    proc.Begin(1, 1600, "DetailWindow:operators");
    proc.End(1, 1700, "DetailWindow:operators");
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->nodes().size(), 2u);
  EXPECT_EQ(model->nodes()[0].name, "algo-1");
  EXPECT_EQ(model->nodes()[1].name, "algo-2");
  ASSERT_EQ(model->steps().size(), 2u);
  const FrameworkEvent& first = model->events()[model->steps()[0]];
  const FrameworkEvent& second = model->events()[model->steps()[1]];
  EXPECT_EQ(first.node, 0u);
  EXPECT_EQ(second.node, 1u);
  EXPECT_EQ(model->StepsInRange("Step:ModeKeys.TRAIN", 0, 0, 1).size(), 1u);
  // The window on algo-2 disturbs only algo-2's step.
  EXPECT_FALSE(model->IsDisturbedStep(first));
  EXPECT_TRUE(model->IsDisturbedStep(second));
}

// torchrun on one node: its agent (no rank variables), two workers with the variables the
// recorder copies into each stream's meta, and a DataLoader worker forked by rank 1.
TEST_F(StepscopeLoaderTest, ProcessesCarryTheRanksTheirStreamsRecorded) {
  WriteManifest("exited");
  {
    TestStream agent(node_, "proc-300-a", 300, false, "", 299);
    agent.Instant(1, 500, "Lifecycle:ProcessStart");
    TestStream rank0(node_, "proc-301-b", 301, false,
                     R"("ranks":{"RANK":"0","LOCAL_RANK":"0","WORLD_SIZE":"2","GROUP_RANK":"0"})", 300);
    rank0.StepBegin(1, 1000, Phase::kTrain, 0);
    rank0.StepEnd(1, 2000, Phase::kTrain, 0);
    TestStream rank1(node_, "proc-302-c", 302, false,
                     R"("ranks":{"RANK":"1","LOCAL_RANK":"1","WORLD_SIZE":"2","GROUP_RANK":"0"})", 300);
    rank1.StepBegin(1, 1000, Phase::kTrain, 0);
    rank1.StepEnd(1, 2100, Phase::kTrain, 0);
    TestStream worker(node_, "proc-303-d", 303, false, R"("ranks":{"RANK":"1","LOCAL_RANK":"x1","WORLD_SIZE":""})", 302);
    worker.Begin(1, 1100, "DataLoaderWorker");
    worker.End(1, 1200, "DataLoaderWorker");
    TestStream system(node_, "system", 299, true);
    system.Sample(1000, "cpu/cpu0/util_pct", 10);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->processes().size(), 4u);  // the system stream is no process of the job
  const ProcessFacts* agent = model->FindProcess(0, 300);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(std::tie(agent->parent_pid, agent->rank, agent->local_rank, agent->world_size, agent->group_rank),
            std::make_tuple(299, -1, -1, -1, -1));
  const ProcessFacts* rank1 = model->FindProcess(0, 302);
  ASSERT_NE(rank1, nullptr);
  EXPECT_EQ(std::tie(rank1->parent_pid, rank1->rank, rank1->local_rank, rank1->world_size, rank1->group_rank),
            std::make_tuple(300, 1, 1, 2, 0));
  EXPECT_EQ(model->RankOf(0, 301), 0);
  // The worker inherited RANK; values that are not non-negative integers are unknown.
  const ProcessFacts* worker = model->FindProcess(0, 303);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(std::tie(worker->rank, worker->local_rank, worker->world_size), std::make_tuple(1, -1, -1));
  EXPECT_EQ(model->RanksOnNode(0), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(model->FindProcess(0, 299), nullptr);
  EXPECT_EQ(model->RankOf(0, 299), -1);
}

std::vector<Problem> ProblemsNamed(const Model& model, std::string_view name) {
  std::vector<Problem> found;
  for (const Problem& problem : model.problems()) {
    if (problem.name == name) found.push_back(problem);
  }
  return found;
}

// Issue 12: a process log the launcher listed and that is gone was a quiet zero.
TEST_F(StepscopeLoaderTest, AMissingProcessLogIsDataLoss) {
  WriteManifest("exited", R"("streams":["proc-200-abcd","proc-300-beef","system"])");
  {
    TestStream proc(node_, "proc-200-abcd", 200, false);
    WriteTrainingProcess(proc);
    TestStream system(node_, "system", 100, true);
    WriteSystemSamples(system);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->problems().size(), 1u) << model->problems()[0].sentence;
  const Problem& missing = model->problems()[0];
  EXPECT_EQ(missing.name, "missing_process_log");
  EXPECT_EQ(missing.severity, ProblemSeverity::kDataLoss);
  EXPECT_EQ(missing.count, 1u);
  EXPECT_NE(missing.sentence.find("node 'algo-1' has no proc-300-beef.log (process 300)"), std::string::npos)
      << missing.sentence;
}

// Issue 12: a node without its system log showed no samples and said nothing.
TEST_F(StepscopeLoaderTest, AMissingSystemLogIsDataLoss) {
  WriteManifest("exited");  // no stream list (a launcher that died, or an older one)
  {
    TestStream proc(node_, "proc-200-abcd", 200, false);
    WriteTrainingProcess(proc);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const auto missing = ProblemsNamed(*model, "missing_system_log");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].severity, ProblemSeverity::kDataLoss);
  EXPECT_NE(missing[0].sentence.find("node 'algo-1' has no system.log"), std::string::npos) << missing[0].sentence;
  EXPECT_EQ(model->problems().size(), 1u);

  // Listed by the launcher too: said once.
  WriteManifest("exited", R"("streams":["proc-200-abcd","system"])");
  auto listed = LoadStepscopeRun(job_);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(ProblemsNamed(*listed, "missing_system_log").size(), 1u);
  EXPECT_EQ(listed->problems().size(), 1u);

  // A launcher that never got to start its sampler lost nothing.
  WriteManifest("starting");
  auto starting = LoadStepscopeRun(job_);
  ASSERT_TRUE(starting.ok());
  EXPECT_TRUE(starting->problems().empty());
}

// Issue 12: drops were one number blamed on full buffers whatever their cause.
TEST_F(StepscopeLoaderTest, DropsAreDataLossProblemsByCause) {
  WriteManifest("exited");
  {
    TestStream proc(node_, "proc-200-abcd", 200, false);
    WriteTrainingProcess(proc);
    proc.CountDropped(5, store::RingFile::DropCause::kBuffersFull);
    proc.CountDropped(3, store::RingFile::DropCause::kWriteFailed);
    TestStream system(node_, "system", 100, true);
    WriteSystemSamples(system);
  }
  auto model = LoadStepscopeRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->problems().size(), 2u);
  const auto full = ProblemsNamed(*model, "events_dropped_buffers_full");
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].count, 5u);
  EXPECT_EQ(full[0].severity, ProblemSeverity::kDataLoss);
  EXPECT_NE(full[0].sentence.find("process 200 on node 'algo-1' dropped 5 events because its buffers were full"),
            std::string::npos)
      << full[0].sentence;
  const auto unwritable = ProblemsNamed(*model, "events_dropped_write_failed");
  ASSERT_EQ(unwritable.size(), 1u);
  EXPECT_EQ(unwritable[0].count, 3u);
  EXPECT_NE(unwritable[0].sentence.find("dropped 3 events because its log could not be written"), std::string::npos)
      << unwritable[0].sentence;
}

TEST(StepscopeLoader, ErrorsNameThePath) {
  auto missing = LoadStepscopeRun("/nonexistent/stepscope-loader-run");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/stepscope-loader-run"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::analysis
