#include "base/clock.h"

#include <fstream>
#include <string>

namespace stepscope {
namespace internal {
namespace {

// TSC is only usable as a clock when the kernel reports it constant and non-stop; otherwise
// frequency changes or deep sleep states would bend time.
bool DetectInvariantTsc() {
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
#endif
  return false;
}

// Decided by a prioritised constructor, not a dynamic initialiser: the recorder starts itself
// from a (default-priority) constructor when loaded under `stepscope run`, and a dynamic
// initialiser's order relative to it would depend on link order. Priority 101 runs first.
__attribute__((constructor(101))) void InitTickSource() { g_ticks_use_tsc = DetectInvariantTsc(); }

}  // namespace

bool g_ticks_use_tsc = false;

}  // namespace internal

TickSource CurrentTickSource() {
  return internal::g_ticks_use_tsc ? TickSource::kTsc : TickSource::kMonotonicNs;
}

ClockPair ReadClockPair(const ClockReaders& readers) {
  // Bracket the monotonic read with two tick reads and keep the tightest of a few tries, so
  // the pair's error is bounded by the (small) bracket width.
  ClockPair best{};
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t before = readers.ticks();
    uint64_t mono = readers.monotonic_ns();
    uint64_t after = readers.ticks();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, mono};
    }
  }
  return best;
}

double MeasureTicksPerNs(uint64_t spin_ns) {
  if (CurrentTickSource() == TickSource::kMonotonicNs) return 1.0;
  return MeasureTicksPerNs(spin_ns, ClockReaders{});
}

double MeasureTicksPerNs(uint64_t spin_ns, const ClockReaders& readers) {
  ClockPair start = ReadClockPair(readers);
  while (readers.monotonic_ns() - start.monotonic_ns < spin_ns) {
  }
  ClockPair end = ReadClockPair(readers);
  double ns = static_cast<double>(end.monotonic_ns - start.monotonic_ns);
  if (ns <= 0) return 1.0;
  return static_cast<double>(end.ticks - start.ticks) / ns;
}

}  // namespace stepscope
