// The real tracer against the fake libcupti: loading, refusals, the buffer pool's cap,
// out-of-order completion, whole-job filtering, yielding to another CUPTI user and a completion
// in a forked child. What lands in a run is checked in src/gpu_tracer's tests.
#include "platform/cupti/cupti_tracer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "platform/cupti/fake/fake_cupti_testing.h"

namespace stepscope {
namespace {

using ::testing::HasSubstr;

struct Recorded {
  GpuActivityKind kind;
  std::string name;
  uint32_t correlation;
};

class RecordingSink : public GpuActivitySink {
 public:
  void OnRecord(const GpuActivityRecord& record) override {
    records.push_back({record.kind, record.name != nullptr ? record.name : "", record.correlation});
  }
  void OnCuptiDropped(uint64_t count) override { dropped += count; }
  void OnBufferDone() override { ++buffers; }
  void OnStateChange(uint64_t, GpuTracerState state, std::string_view reason) override {
    states.push_back(std::string(GpuTracerStateName(state)) + ": " + std::string(reason));
  }
  std::vector<Recorded> records;
  uint64_t dropped = 0;
  int buffers = 0;
  std::vector<std::string> states;
};

FakeCuptiActivity Kernel(uint32_t correlation, const char* name) {
  FakeCuptiActivity a{};
  a.kind = FAKE_CUPTI_KERNEL;
  a.start = 1000 + correlation * 10;
  a.end = a.start + 5;
  a.stream = 7;
  a.correlation = correlation;
  a.name = name;
  return a;
}

FakeCuptiActivity Runtime(uint32_t correlation, uint32_t cbid) {
  FakeCuptiActivity a{};
  a.kind = FAKE_CUPTI_RUNTIME;
  a.start = 900 + correlation * 10;
  a.end = a.start + 3;
  a.thread_id = 4321;
  a.callback_id = cbid;
  a.correlation = correlation;
  return a;
}

constexpr uint32_t kCudaLaunchKernel = 211;  // CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
constexpr uint32_t kCudaGetDevice = 17;      // CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020

class CuptiTracerTest : public ::testing::Test {
 protected:
  CuptiTracerOptions Options() {
    CuptiTracerOptions options;
    options.library = testing::kFakeCuptiPath;
    options.buffer_bytes = 4096;
    options.max_pool_bytes = 4096 * 2;
    return options;
  }
  testing::FakeCupti fake_;
  RecordingSink sink_;
};

TEST_F(CuptiTracerTest, MissingLibraryIsUnavailableAndSaysTracingIsOff) {
  CuptiTracerOptions options = Options();
  options.library = "/nonexistent/libcupti.so.13";
  auto tracer = CuptiTracer::Start(options, &sink_);
  ASSERT_FALSE(tracer.ok());
  EXPECT_EQ(tracer.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(tracer.status().message(), HasSubstr("CUPTI not found"));
  EXPECT_THAT(tracer.status().message(), HasSubstr("GPU tracing is off"));
}

TEST_F(CuptiTracerTest, UnknownErrorMeansNoGpuAndTheSinkLearnsWhy) {
  fake_.set_result("cuptiActivityEnable", 999);  // CUPTI_ERROR_UNKNOWN: what CUPTI says without a GPU
  auto tracer = CuptiTracer::Start(Options(), &sink_);
  ASSERT_FALSE(tracer.ok());
  EXPECT_THAT(tracer.status().message(), HasSubstr("CUPTI_ERROR_UNKNOWN (999)"));
  EXPECT_THAT(tracer.status().message(), HasSubstr("no NVIDIA GPU or driver is usable"));
  ASSERT_EQ(sink_.states.size(), 1u);
  EXPECT_THAT(sink_.states[0], HasSubstr("off: cuptiActivityEnable"));
  // The slot is free again: a later tracer starts.
  fake_.set_result("cuptiActivityEnable", 0);
  EXPECT_TRUE(CuptiTracer::Start(Options(), &sink_).ok());
}

TEST_F(CuptiTracerTest, RefusedRegistrationNamesTheCallTheCodeAndTheNextStep) {
  fake_.set_result("cuptiActivityRegisterCallbacks", 35);  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
  auto tracer = CuptiTracer::Start(Options(), &sink_);
  ASSERT_FALSE(tracer.ok());
  EXPECT_THAT(tracer.status().message(), HasSubstr("cuptiActivityRegisterCallbacks failed"));
  EXPECT_THAT(tracer.status().message(), HasSubstr("(35)"));
  EXPECT_THAT(tracer.status().message(), HasSubstr("NVreg_RestrictProfilingToAdminUsers"));
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_KERNEL), 0);
}

TEST_F(CuptiTracerTest, OnlyOneTracerPerProcess) {
  auto first = CuptiTracer::Start(Options(), &sink_);
  ASSERT_TRUE(first.ok()) << first.status().message();
  RecordingSink other;
  auto second = CuptiTracer::Start(Options(), &other);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("already runs"));
}

TEST_F(CuptiTracerTest, WholeJobModeKeepsLaunchesAndDropsOtherCalls) {
  auto tracer = CuptiTracer::Start(Options(), &sink_);
  ASSERT_TRUE(tracer.ok()) << tracer.status().message();
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_KERNEL), 1);
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_RUNTIME), 1);
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_MEMSET), 0);
  const int buffer = fake_.Fill({Runtime(1, kCudaGetDevice), Runtime(2, kCudaLaunchKernel), Kernel(2, "k")});
  ASSERT_GE(buffer, 0);
  fake_.complete_buffer(buffer, 0);
  ASSERT_EQ(sink_.records.size(), 2u);
  EXPECT_EQ(sink_.records[0].name, "cudaLaunchKernel") << "the version suffix goes";
  EXPECT_EQ(sink_.records[1].kind, GpuActivityKind::kKernel);
  EXPECT_EQ((*tracer)->Stats().records_filtered, 1u);

  ASSERT_TRUE((*tracer)->SetMode(GpuTracingMode::kEverything).ok());
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_MEMSET), 1);
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_SYNC), 1);
  const int second = fake_.Fill({Runtime(3, kCudaGetDevice)});
  fake_.complete_buffer(second, 0);
  EXPECT_EQ(sink_.records.back().name, "cudaGetDevice");
  ASSERT_TRUE((*tracer)->SetMode(GpuTracingMode::kWholeJob).ok());
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_MEMSET), 0);
}

TEST_F(CuptiTracerTest, PoolAtItsCapRefusesBuffersAndCuptiDropsAreCounted) {
  auto tracer = CuptiTracer::Start(Options(), &sink_);  // room for two buffers
  ASSERT_TRUE(tracer.ok());
  const int a = fake_.Fill({Kernel(1, "a")});
  const int b = fake_.Fill({Kernel(2, "b")});
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  EXPECT_EQ(fake_.Fill({Kernel(3, "c"), Kernel(4, "d")}), -1) << "the pool is exhausted";
  // Out of order: the second buffer completes first.
  fake_.complete_buffer(b, 0);
  fake_.complete_buffer(a, 5);
  ASSERT_EQ(sink_.records.size(), 2u);
  EXPECT_EQ(sink_.records[0].name, "b");
  EXPECT_EQ(sink_.records[1].name, "a");
  EXPECT_EQ(sink_.dropped, 7u) << "5 CUPTI reported plus the 2 it had no buffer for";
  const CuptiTracerStats stats = (*tracer)->Stats();
  EXPECT_EQ(stats.buffers_refused, 1u);
  EXPECT_EQ(stats.records_dropped_by_cupti, 7u);
  EXPECT_EQ(stats.pool_bytes, 8192u);
  // Completed buffers are reused: the pool never grows past its cap.
  EXPECT_GE(fake_.Fill({Kernel(5, "e")}), 0);
  EXPECT_EQ((*tracer)->Stats().pool_bytes, 8192u);
}

TEST_F(CuptiTracerTest, YieldsToAnotherUserAndResumes) {
  auto tracer = CuptiTracer::Start(Options(), &sink_);
  ASSERT_TRUE(tracer.ok());
  const int pending = fake_.Fill({Kernel(1, "before")});
  ASSERT_GE(pending, 0);
  ASSERT_TRUE((*tracer)->Yield("torch.profiler starts an operators window").ok());
  EXPECT_EQ(fake_.pending_buffers(), 0u) << "every buffer came back before the other user took CUPTI";
  ASSERT_EQ(sink_.records.size(), 1u);
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_KERNEL), 0);
  EXPECT_EQ((*tracer)->state(), GpuTracerState::kYielded);

  fake_.take_over();  // Kineto registers its callbacks and traces
  EXPECT_EQ(fake_.callbacks_owner(), 2);
  const int theirs = fake_.Fill({Kernel(2, "kineto's")});
  fake_.complete_buffer(theirs, 0);
  EXPECT_EQ(sink_.records.size(), 1u) << "Kineto's records are Kineto's";

  ASSERT_TRUE((*tracer)->Resume("torch.profiler stopped").ok());
  EXPECT_EQ(fake_.callbacks_owner(), 1);
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_KERNEL), 1);
  fake_.complete_buffer(fake_.Fill({Kernel(3, "after")}), 0);
  ASSERT_EQ(sink_.records.size(), 2u);
  EXPECT_EQ(sink_.records[1].name, "after");
  EXPECT_THAT(sink_.states, ::testing::ElementsAre(HasSubstr("tracing: started in whole_job mode"),
                                                   "yielded: torch.profiler starts an operators window",
                                                   "tracing: torch.profiler stopped"));
  EXPECT_EQ((*tracer)->Stats().yields, 1u);
}

TEST_F(CuptiTracerTest, ResumeThatCuptiRefusesLeavesTracingOffWithTheReason) {
  auto tracer = CuptiTracer::Start(Options(), &sink_);
  ASSERT_TRUE(tracer.ok());
  ASSERT_TRUE((*tracer)->Yield("torch.profiler").ok());
  fake_.set_result("cuptiActivityRegisterCallbacks", 39);  // the other user never let go
  Status resumed = (*tracer)->Resume("torch.profiler stopped");
  ASSERT_FALSE(resumed.ok());
  EXPECT_THAT(resumed.message(), HasSubstr("another profiler"));
  EXPECT_EQ((*tracer)->state(), GpuTracerState::kOff);
  EXPECT_THAT((*tracer)->reason(), HasSubstr("could not resume after 'torch.profiler'"));
}

TEST_F(CuptiTracerTest, ACompletionInAForkedChildReachesNoSink) {
  auto tracer = CuptiTracer::Start(Options(), &sink_);
  ASSERT_TRUE(tracer.ok());
  const int buffer = fake_.Fill({Kernel(1, "in flight at fork")});
  ASSERT_GE(buffer, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    fake_.complete_buffer(buffer, 0);
    // The child's copy of the sink saw nothing: exit status 0 says so.
    _exit(sink_.records.empty() && (*tracer)->Stats().buffers_discarded_in_child == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  fake_.complete_buffer(buffer, 0);
  ASSERT_EQ(sink_.records.size(), 1u) << "the parent still gets its buffer";
}

TEST_F(CuptiTracerTest, StopFlushesEveryBufferAndDisables) {
  auto tracer = CuptiTracer::Start(Options(), &sink_);
  ASSERT_TRUE(tracer.ok());
  ASSERT_GE(fake_.Fill({Kernel(1, "last")}), 0);
  (*tracer)->Stop();
  EXPECT_EQ(sink_.records.size(), 1u);
  EXPECT_EQ(fake_.enabled(FAKE_CUPTI_KERNEL), 0);
  EXPECT_EQ((*tracer)->state(), GpuTracerState::kOff);
}

}  // namespace
}  // namespace stepscope
