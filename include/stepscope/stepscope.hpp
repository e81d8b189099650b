// stepscope recorder: the C++ API. Header-only sugar over the C API (stepscope.h).
//
//   void Train() {
//     STEPSCOPE_SCOPE("train");                 // span for the enclosing scope
//     for (int i = 0; i < n; ++i) {
//       stepscope::StepScope step(stepscope::Phase::kTrain);   // step i (auto-numbered)
//       { STEPSCOPE_SCOPE("forward"); ... }
//       stepscope::Counter("loss", loss);
//     }
//   }
//
// STEPSCOPE_SCOPE interns its literal once per call site (a function-local static), so the
// hot path is: one relaxed load when off; a TSC read and a 24-byte store when on.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "stepscope/stepscope.h"

namespace stepscope {

enum class Phase : int { kTrain = 0, kEval = 1, kPredict = 2, kGlobal = 3 };

inline uint32_t Intern(std::string_view name) { return stepscope_intern(name.data(), name.size()); }
inline void Begin(uint32_t name_id) { stepscope_begin(name_id); }
inline void End(uint32_t name_id) { stepscope_end(name_id); }
inline void Instant(std::string_view name) { stepscope_instant(Intern(name)); }
inline void Counter(std::string_view name, double value) { stepscope_counter(Intern(name), value); }
inline void StepBegin(Phase phase, int64_t number = STEPSCOPE_AUTO_STEP) {
  stepscope_step_begin(static_cast<stepscope_phase>(phase), number);
}
inline void StepEnd(Phase phase, int64_t number = STEPSCOPE_AUTO_STEP) {
  stepscope_step_end(static_cast<stepscope_phase>(phase), number);
}

// A span from construction to destruction. Records nothing (and costs one load) when the
// recorder is off at construction; a scope that began always ends.
class Scope {
 public:
  explicit Scope(uint32_t name_id) : name_id_(stepscope_enabled_fast() ? name_id : 0) {
    if (name_id_ != 0) stepscope_begin(name_id_);
  }
  ~Scope() {
    if (name_id_ != 0) stepscope_end(name_id_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  uint32_t name_id_;
};

// A training (or evaluation, ...) step from construction to destruction.
class StepScope {
 public:
  explicit StepScope(Phase phase, int64_t number = STEPSCOPE_AUTO_STEP) : phase_(phase), number_(number) {
    StepBegin(phase_, number_);
  }
  ~StepScope() { StepEnd(phase_, number_); }
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;

 private:
  Phase phase_;
  int64_t number_;
};

namespace internal {
// Interns a call site's literal once; racing first calls intern the same id (idempotent).
inline uint32_t ResolveSite(std::atomic<uint32_t>& site, const char* literal) {
  uint32_t id = site.load(std::memory_order_relaxed);
  if (__builtin_expect(id == 0, 0) && stepscope_enabled_fast()) {
    id = Intern(literal);
    site.store(id, std::memory_order_relaxed);
  }
  return id;
}
}  // namespace internal

}  // namespace stepscope

#define STEPSCOPE_INTERNAL_CAT2(a, b) a##b
#define STEPSCOPE_INTERNAL_CAT(a, b) STEPSCOPE_INTERNAL_CAT2(a, b)

// Records a span named `literal` for the rest of the enclosing scope. The id is interned at
// the first call that finds the recorder on.
#define STEPSCOPE_SCOPE(literal)                                                  \
  static std::atomic<uint32_t> STEPSCOPE_INTERNAL_CAT(stepscope_site_, __LINE__){0};     \
  ::stepscope::Scope STEPSCOPE_INTERNAL_CAT(stepscope_scope_, __LINE__)(                 \
      ::stepscope::internal::ResolveSite(STEPSCOPE_INTERNAL_CAT(stepscope_site_, __LINE__), literal))
