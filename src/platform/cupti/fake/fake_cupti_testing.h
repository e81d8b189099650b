// What a test uses to drive the fake libcupti: loads it by path (the same copy the tracer then
// dlopens) and resolves fake_cupti_control.h's functions. Test infrastructure only.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "platform/cupti/fake/fake_cupti_control.h"

namespace stepscope::testing {

inline constexpr char kFakeCuptiPath[] = STEPSCOPE_FAKE_CUPTI_PATH;

class FakeCupti {
 public:
  FakeCupti() {
    handle_ = dlopen(kFakeCuptiPath, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      std::fprintf(stderr, "cannot load the fake CUPTI %s: %s\n", kFakeCuptiPath, dlerror());
      std::abort();
    }
    Bind("fake_cupti_reset", &reset);
    Bind("fake_cupti_set_result", &set_result);
    Bind("fake_cupti_enabled", &enabled);
    Bind("fake_cupti_callbacks_owner", &callbacks_owner);
    Bind("fake_cupti_fill_buffer", &fill_buffer);
    Bind("fake_cupti_complete_buffer", &complete_buffer);
    Bind("fake_cupti_pending_buffers", &pending_buffers);
    Bind("fake_cupti_set_timestamp", &set_timestamp);
    Bind("fake_cupti_take_over", &take_over);
    reset();
  }
  ~FakeCupti() { dlclose(handle_); }

  int Fill(std::initializer_list<FakeCuptiActivity> activities) {
    std::vector<FakeCuptiActivity> list(activities);
    return fill_buffer(list.data(), list.size());
  }

  void (*reset)() = nullptr;
  void (*set_result)(const char*, int) = nullptr;
  int (*enabled)(int) = nullptr;
  int (*callbacks_owner)() = nullptr;
  int (*fill_buffer)(const FakeCuptiActivity*, size_t) = nullptr;
  void (*complete_buffer)(int, size_t) = nullptr;
  size_t (*pending_buffers)() = nullptr;
  void (*set_timestamp)(uint64_t) = nullptr;
  void (*take_over)() = nullptr;

 private:
  template <typename Fn>
  void Bind(const char* name, Fn* slot) {
    void* address = dlsym(handle_, name);
    if (address == nullptr) {
      std::fprintf(stderr, "the fake CUPTI lacks %s\n", name);
      std::abort();
    }
    *slot = reinterpret_cast<Fn>(address);
  }
  void* handle_ = nullptr;
};

}  // namespace stepscope::testing
