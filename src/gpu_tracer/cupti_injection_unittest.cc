// libstepscope_cupti.so loaded as the CUDA driver loads it (dlopen, InitializeInjection), with the
// environment `stepscope run` gives the job, tracing through the fake libcupti.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/stepscope_loader.h"
#include "base/clock.h"
#include "platform/cupti/fake/fake_cupti_testing.h"

namespace stepscope {
namespace {

template <typename Fn>
Fn Symbol(void* library, const char* name) {
  void* address = dlsym(library, name);
  EXPECT_NE(address, nullptr) << name;
  return reinterpret_cast<Fn>(address);
}

// A fresh node directory in the environment `stepscope run` gives the job, with the fake CUPTI.
std::filesystem::path NodeDirectoryForTheJob(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  setenv("STEPSCOPE_NODE_DIR", dir.c_str(), 1);
  setenv("STEPSCOPE_CUPTI_LIBRARY", testing::kFakeCuptiPath, 1);
  return dir;
}

TEST(CuptiInjectionTest, TheDriversInitializationStartsTracingIntoTheNodeDirectory) {
  testing::FakeCupti fake;
  const std::filesystem::path dir = NodeDirectoryForTheJob("stepscope_injection");
  void* library = dlopen(STEPSCOPE_CUPTI_INJECTION_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  EXPECT_EQ(dlsym(library, "_ZN9stepscope14GpuStreamWriter8OnRecordERKNS_17GpuActivityRecordE"), nullptr)
      << "only the C entry points are exported";
  ASSERT_EQ(Symbol<int (*)()>(library, "InitializeInjection")(), 1);
  EXPECT_EQ(fake.callbacks_owner(), 1);
  EXPECT_EQ(fake.enabled(FAKE_CUPTI_KERNEL), 1);

  FakeCuptiActivity kernel{};
  kernel.kind = FAKE_CUPTI_KERNEL;
  kernel.stream = 7;
  kernel.correlation = 1;
  kernel.start = MonotonicNowNs();
  kernel.end = kernel.start + 1000;
  kernel.name = "first_kernel";
  fake.complete_buffer(fake.fill_buffer(&kernel, 1), 0);

  // The Python package around torch.profiler, and before a process leaves with os._exit.
  EXPECT_EQ(Symbol<int (*)(const char*)>(library, "stepscope_gpu_tracing_yield")("torch.profiler"), 0);
  EXPECT_EQ(fake.enabled(FAKE_CUPTI_KERNEL), 0);
  EXPECT_EQ(Symbol<int (*)(const char*)>(library, "stepscope_gpu_tracing_resume")("torch.profiler stopped"), 0);
  EXPECT_EQ(Symbol<int (*)(int)>(library, "stepscope_gpu_tracing_set_mode")(1), 0);
  EXPECT_EQ(fake.enabled(FAKE_CUPTI_MEMSET), 1);
  kernel.name = "second_kernel";
  kernel.correlation = 2;
  ASSERT_GE(fake.fill_buffer(&kernel, 1), 0);
  EXPECT_EQ(Symbol<int (*)()>(library, "stepscope_gpu_tracing_flush")(), 0);
  EXPECT_EQ(fake.pending_buffers(), 0u);

  auto model = analysis::LoadStepscopeRun(dir.string());
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::vector<std::string> kernels;
  for (const auto& event : model->events()) {
    if (event.device >= 0) kernels.push_back(std::string(model->String(event.name)));
  }
  EXPECT_THAT(kernels, ::testing::ElementsAre("first_kernel", "second_kernel"));
  // The library's tracer lives until this process exits (atexit stops it); the files go with the
  // directory.
  std::filesystem::remove_all(dir);
}

TEST(CuptiInjectionTest, WithoutANodeDirectoryTheJobRunsUntraced) {
  testing::FakeCupti fake;
  unsetenv("STEPSCOPE_NODE_DIR");
  void* library = dlopen(STEPSCOPE_CUPTI_INJECTION_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  EXPECT_EQ(Symbol<int (*)()>(library, "InitializeInjection")(), 1) << "never fails the driver's initialization";
  EXPECT_EQ(fake.callbacks_owner(), 0);
  EXPECT_EQ(Symbol<int (*)(int)>(library, "stepscope_gpu_tracing_set_mode")(1), -1) << "no tracer runs";
}

TEST(CuptiInjectionTest, ATorchProfilerStartedBeforeTheFirstCudaCallKeepsCuptiUntilItEnds) {
  testing::FakeCupti fake;
  const std::filesystem::path dir = NodeDirectoryForTheJob("stepscope_injection_yield");
  void* library = dlopen(STEPSCOPE_CUPTI_INJECTION_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  // The Python package opens the library and yields; the profiler's cuInit then loads it.
  EXPECT_EQ(Symbol<int (*)(const char*)>(library, "stepscope_gpu_tracing_yield")("torch profiler started"), 0);
  ASSERT_EQ(Symbol<int (*)()>(library, "InitializeInjection")(), 1);
  EXPECT_EQ(fake.callbacks_owner(), 0) << "CUPTI is left to the profiler";
  EXPECT_EQ(Symbol<int (*)(const char*)>(library, "stepscope_gpu_tracing_resume")("torch profiler ended"), 0);
  EXPECT_EQ(fake.callbacks_owner(), 1);
  EXPECT_EQ(fake.enabled(FAKE_CUPTI_KERNEL), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stepscope
