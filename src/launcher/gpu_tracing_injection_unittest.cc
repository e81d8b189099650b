#include "launcher/gpu_tracing_injection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace stepscope::launcher {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class GpuTracingInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    parent_ = std::filesystem::temp_directory_path() / ("stepscope_injection_plan_" + std::to_string(getpid()));
    std::filesystem::create_directories(parent_ / "stepscope");
    std::ofstream(parent_ / "stepscope" / kGpuTracerLibraryName) << "ELF";
    facts_.requested_mode = "whole_job";
    facts_.gpu_available = true;
    facts_.cupti_found = true;
    facts_.package_parent = parent_.string();
  }
  void TearDown() override { std::filesystem::remove_all(parent_); }

  std::filesystem::path parent_;
  GpuTracingFacts facts_;
};

TEST_F(GpuTracingInjectionTest, AGpuWithCuptiAndTheLibraryInjectsTheRequestedMode) {
  facts_.requested_mode = "everything";
  const GpuTracingPlan plan = PlanGpuTracing(facts_);
  const std::string library = (parent_ / "stepscope" / kGpuTracerLibraryName).string();
  EXPECT_EQ(plan.mode, "everything");
  EXPECT_EQ(plan.reason, "");
  EXPECT_THAT(plan.environment,
              ElementsAre("CUDA_INJECTION64_PATH=" + library, "STEPSCOPE_GPU_TRACER_MODE=everything"));
}

TEST_F(GpuTracingInjectionTest, EachMissingPieceTurnsTracingOffWithItsReason) {
  struct Case {
    void (*change)(GpuTracingFacts&);
    const char* reason;
  };
  const Case cases[] = {
      {[](GpuTracingFacts& f) { f.requested_mode = "off"; }, "turned off"},
      {[](GpuTracingFacts& f) { f.gpu_available = false; }, "no NVIDIA GPU"},
      {[](GpuTracingFacts& f) { f.cupti_found = false, f.cupti_reason = "libcupti.so: not found"; },
       "libcupti.so: not found"},
      {[](GpuTracingFacts& f) { f.existing_injection = "/opt/nsys/libToolsInjection64.so"; },
       "another tool already injects"},
      {[](GpuTracingFacts& f) { f.package_parent = "/nonexistent"; }, "built without its GPU tracer"},
  };
  for (const Case& c : cases) {
    GpuTracingFacts facts = facts_;
    c.change(facts);
    const GpuTracingPlan plan = PlanGpuTracing(facts);
    EXPECT_EQ(plan.mode, "off") << c.reason;
    EXPECT_THAT(plan.reason, HasSubstr(c.reason));
    EXPECT_THAT(plan.environment, ElementsAre("STEPSCOPE_GPU_TRACER_MODE=off")) << c.reason;
  }
}

}  // namespace
}  // namespace stepscope::launcher
