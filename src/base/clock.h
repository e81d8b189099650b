// The clocks stepscope records with, and how they map onto one another.
//
// One clock for everything on a node: CLOCK_MONOTONIC nanoseconds. The recorder's hot path
// reads the cheaper invariant TSC ("ticks") when the CPU has one and stores ticks; every stream
// also stores (ticks, monotonic ns) calibration pairs so readers convert ticks to monotonic ns
// offline (the idea of pytorch/kineto's ApproximateClock). Each node's manifest records one
// (monotonic ns, Unix-epoch ns) anchor taken at run start; readers add that offset so every
// timestamp a user sees is Unix-epoch nanoseconds, comparable across processes and with the
// system sampler, which stamps its samples with the same tick clock.
//
// Threading: all functions are safe from any thread; ReadTicks() is async-signal-safe.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace stepscope {

// Which source ReadTicks() uses; fixed at process start (TSC only when invariant).
enum class TickSource : uint8_t { kTsc = 1, kMonotonicNs = 2 };

namespace internal {
extern bool g_ticks_use_tsc;  // set once by a static initializer in clock.cc
}

inline uint64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t RealtimeNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The recorder's timestamp: TSC ticks where invariant, else CLOCK_MONOTONIC ns.
inline uint64_t ReadTicks() {
#if defined(__x86_64__) || defined(__i386__)
  if (internal::g_ticks_use_tsc) return __rdtsc();
#endif
  return MonotonicNowNs();
}

TickSource CurrentTickSource();

// A (ticks, monotonic ns) pair read as close together as possible.
struct ClockPair {
  uint64_t ticks = 0;
  uint64_t monotonic_ns = 0;
};

// The two clocks ReadClockPair() and MeasureTicksPerNs() read: the real ones unless a test
// passes scripted readers to check how the reads are combined.
struct ClockReaders {
  uint64_t (*ticks)() = ReadTicks;
  uint64_t (*monotonic_ns)() = MonotonicNowNs;
};

// Brackets a monotonic read with two tick reads, a few times, and keeps the narrowest bracket:
// its middle tick and the monotonic read it holds.
ClockPair ReadClockPair(const ClockReaders& readers = {});

// Ticks per nanosecond measured over about `spin_ns` of busy waiting; 1.0 for kMonotonicNs.
double MeasureTicksPerNs(uint64_t spin_ns);
// The same measurement between two ReadClockPair(readers), whatever the tick source.
double MeasureTicksPerNs(uint64_t spin_ns, const ClockReaders& readers);

// Converts ticks to monotonic ns with a line through two calibration pairs (or one pair and
// a rate). Readers build one from a stream's calibration records.
class TickConverter {
 public:
  TickConverter() = default;
  TickConverter(ClockPair anchor, double ticks_per_ns) : anchor_(anchor), ticks_per_ns_(ticks_per_ns) {}
  uint64_t ToMonotonicNs(uint64_t ticks) const {
    double delta = static_cast<double>(static_cast<int64_t>(ticks - anchor_.ticks));
    return anchor_.monotonic_ns + static_cast<int64_t>(delta / ticks_per_ns_);
  }
  double ticks_per_ns() const { return ticks_per_ns_; }
  const ClockPair& anchor() const { return anchor_; }

 private:
  ClockPair anchor_{};
  double ticks_per_ns_ = 1.0;
};

}  // namespace stepscope
