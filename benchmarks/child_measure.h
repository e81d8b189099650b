// Measuring work in child processes, so that each figure has its own peak RSS (the child's
// ru_maxrss, from wait4) and the measuring process stays small. A forked child's ru_maxrss starts
// from its parent's RSS at fork and survives exec, so the caller must hold nothing large when it
// starts one.
//
// Callers: the benchmarks (report_memory_benchmark). Single-threaded callers only (fork).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stepscope::benchmarks {

struct ChildOutcome {
  bool ok = false;         // forked: the child sent its result; executed: it exited with status 0
  std::string error;       // why not, when !ok
  double wall_s = 0;       // from fork to exit
  int64_t peak_rss_bytes = 0;
};

// Forks; the child runs `work(out)`, which fills the `bytes` bytes at `out` (plain data only),
// sends them back through a pipe and exits; the parent reads them into `out`.
ChildOutcome ForkAndMeasure(const std::function<void(void* out)>& work, void* out, size_t bytes);

// `work` fills a T (trivially copyable) in the child; the parent gets it in *result.
template <typename T>
ChildOutcome InChild(const std::function<void(T&)>& work, T* result) {
  return ForkAndMeasure([&](void* out) { work(*static_cast<T*>(out)); }, result, sizeof(T));
}

// Executes argv[0] with argv (its stdout to /dev/null; stderr stays).
ChildOutcome ExecAndMeasure(const std::vector<std::string>& argv);

// The regular files under `dir`, recursively, sorted by path.
std::vector<std::string> FilesUnder(const std::string& dir);

}  // namespace stepscope::benchmarks
