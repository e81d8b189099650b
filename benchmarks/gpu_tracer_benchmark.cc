// The GPU tracer's cost from CUPTI's buffer to the store, and what a kernel costs at rest
// (issue 15 §5: <= 50 ns of CPU per record, <= 8 bytes per kernel record at rest).
//
//   gpu_tracer_benchmark [--records N] [--repeats R] [--keep DIR] [--no-read-back] [--zstd-level L]
//
// A whole-job trace as a training step makes it: per launch a runtime call
// (cudaLaunchKernel, its correlation id) and its kernel (one of 60 names, from 4-character
// elementwise kernels to long templated GEMM names; grid, block, registers and shared memory
// fixed per name), every 20th launch a memcpy instead (HtoD, pinned, 1 MiB) — N records in
// all (default 10,000,000), handed to the real GpuStreamWriter as the tracer hands them
// (OnRecord per record, OnBufferDone per CUPTI buffer of 8,192 records), into a real run
// directory on disk. Timestamps advance as on a busy GPU: kernels of 5-400 µs back to back on
// two streams, launches 4-12 µs apart on the host.
//
// Cost: thread CPU time of the writer per record (median of R runs, default 5), beside the
// baseline in the same process: the same records copied once, a buffer of them at a time into
// memory reused per buffer (what touching them costs at least). Size: the stream's files after the writer finishes (log + ring header),
// divided by the kernels written, with every other record's bytes counted against them too.
// A read-back through the stepscope loader checks every record came back.
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "analysis/stepscope_loader.h"
#include "gpu_tracer/gpu_stream_writer.h"

namespace stepscope {
namespace {

constexpr size_t kRecordsPerBuffer = 8192;

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Workload {
  std::vector<std::string> names;  // kept alive: records point into them
  std::vector<GpuActivityRecord> records;
  uint64_t kernels = 0;
};

Workload MakeWorkload(size_t count) {
  Workload w;
  std::mt19937_64 random(7);
  for (int i = 0; i < 60; ++i) {
    if (i % 3 == 0) {
      w.names.push_back("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)_" +
                        std::to_string(i));
    } else if (i % 3 == 1) {
      w.names.push_back("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_" +
                        std::to_string(i));
    } else {
      w.names.push_back("k" + std::to_string(i));
    }
  }
  w.records.reserve(count);
  uint64_t host_ns = 1'000'000'000, device_ns[2] = {host_ns + 50'000, host_ns + 50'000};
  uint32_t correlation = 1;
  std::uniform_int_distribution<int> pick(0, 59), gap(4'000, 12'000), duration(5'000, 400'000);
  while (w.records.size() + 2 <= count) {
    const int name = pick(random);
    const uint32_t stream = 7 + static_cast<uint32_t>(correlation % 2);
    GpuActivityRecord launch;
    launch.kind = GpuActivityKind::kRuntimeApi;
    launch.name = correlation % 20 == 0 ? "cudaMemcpyAsync" : "cudaLaunchKernel";
    launch.start_ns = host_ns;
    launch.end_ns = host_ns + 3'000;
    launch.correlation = correlation;
    launch.thread_id = 4242;
    launch.callback_id = correlation % 20 == 0 ? 41 : 211;
    w.records.push_back(launch);
    GpuActivityRecord work;
    work.device = 0;
    work.context = 1;
    work.stream = stream;
    work.correlation = correlation;
    uint64_t& clock = device_ns[stream - 7];
    work.start_ns = std::max(clock, host_ns + 5'000);
    work.end_ns = work.start_ns + static_cast<uint64_t>(duration(random));
    clock = work.end_ns + 1'000;
    if (correlation % 20 == 0) {
      work.kind = GpuActivityKind::kMemcpy;
      work.memcpy_kind = GpuMemcpyKind::kHtoD;
      work.src_memory = GpuMemoryKind::kPinned;
      work.dst_memory = GpuMemoryKind::kDevice;
      work.bytes = 1u << 20;
    } else {
      work.kind = GpuActivityKind::kKernel;
      work.name = w.names[static_cast<size_t>(name)].c_str();
      work.grid[0] = 108 * (1 + name % 4), work.grid[1] = 1 + name % 2, work.grid[2] = 1;
      work.block[0] = 128 << (name % 3), work.block[1] = 1, work.block[2] = 1;
      work.registers_per_thread = static_cast<uint16_t>(32 + name % 96);
      work.shared_memory_bytes = static_cast<uint32_t>((name % 5) * 16384);
      ++w.kernels;
    }
    w.records.push_back(work);
    host_ns += static_cast<uint64_t>(gap(random));
    ++correlation;
  }
  return w;
}

uint64_t FileBytes(const std::filesystem::path& dir, const std::string& stream) {
  uint64_t bytes = 0;
  for (const char* suffix : {".log", ".ring"}) {
    struct stat info;
    if (stat((dir / (stream + suffix)).c_str(), &info) == 0) bytes += static_cast<uint64_t>(info.st_size);
  }
  return bytes;
}

struct Run {
  double writer_ns_per_record = 0;
  double buffer_done_ns_per_record = 0;  // the part spent when buffers completed (frame, zstd, write)
  double baseline_ns_per_record = 0;
  uint64_t bytes = 0;
  uint64_t log_bytes = 0;
  uint64_t written = 0;
  std::string stream;
};

Run RunOnce(const Workload& w, const std::filesystem::path& dir, int zstd_level) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Run run;
  // Baseline: the records copied once, as cheaply as anything could touch them, read as the
  // writer reads them (every record, from memory) into a CUPTI buffer's worth of records reused
  // per buffer, as the writer reuses its columns. Copying into one fresh vector of all of them
  // (as this did first) timed the kernel zero-filling 24 new pages per 1,000 records: 55 ns a
  // record, where the copy itself costs a few.
  std::vector<GpuActivityRecord> copy(kRecordsPerBuffer);
  uint64_t checksum = 0;
  uint64_t began = ThreadCpuNs();
  for (size_t first = 0; first < w.records.size(); first += kRecordsPerBuffer) {
    const size_t count = std::min(kRecordsPerBuffer, w.records.size() - first);
    std::memcpy(copy.data(), w.records.data() + first, count * sizeof(GpuActivityRecord));
    // Kept: the compiler may not drop a copy whose result is read.
    asm volatile("" : : "r"(copy.data()) : "memory");
    checksum += copy[count - 1].start_ns;
  }
  run.baseline_ns_per_record = double(ThreadCpuNs() - began) / double(w.records.size());
  if (checksum == 0) std::abort();

  GpuStreamWriterOptions options;
  options.node_dir = dir.string();
  options.pid = getpid();
  options.gpu_clock_ns = [] { return uint64_t{0}; };
  options.zstd_level = zstd_level;
  GpuStreamWriter writer(options);
  began = ThreadCpuNs();
  size_t in_buffer = 0;
  uint64_t buffer_done_ns = 0;
  for (const GpuActivityRecord& record : w.records) {
    writer.OnRecord(record);
    if (++in_buffer == kRecordsPerBuffer) {
      const uint64_t done_began = ThreadCpuNs();
      writer.OnBufferDone();
      buffer_done_ns += ThreadCpuNs() - done_began;
      in_buffer = 0;
    }
  }
  writer.OnBufferDone();
  writer.Finish(nlohmann::json::object());
  run.writer_ns_per_record = double(ThreadCpuNs() - began) / double(w.records.size());
  run.buffer_done_ns_per_record = double(buffer_done_ns) / double(w.records.size());
  if (!writer.error().empty()) {
    std::fprintf(stderr, "gpu_tracer_benchmark: %s\n", writer.error().c_str());
    std::exit(1);
  }
  run.stream = writer.stream_name();
  run.written = writer.records_written();
  run.bytes = FileBytes(dir, run.stream);
  struct stat info;
  run.log_bytes = stat((dir / (run.stream + ".log")).c_str(), &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
  return run;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace
}  // namespace stepscope

int main(int argc, char** argv) {
  using namespace stepscope;
  size_t records = 10'000'000;
  int repeats = 5;
  std::string keep;
  bool read_back = true;  // off to profile the writer alone
  int zstd_level = GpuStreamWriterOptions().zstd_level;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--records" && i + 1 < argc) records = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--keep" && i + 1 < argc) keep = argv[++i];
    else if (arg == "--no-read-back") read_back = false;
    else if (arg == "--zstd-level" && i + 1 < argc) zstd_level = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: gpu_tracer_benchmark [--records N] [--repeats R] [--keep DIR] [--no-read-back] "
                           "[--zstd-level L]\n");
      return 2;
    }
  }
  const Workload workload = MakeWorkload(records);
  const std::filesystem::path dir =
      keep.empty() ? std::filesystem::temp_directory_path() / ("stepscope_gpu_tracer_bench_" + std::to_string(getpid()))
                   : std::filesystem::path(keep);
  std::vector<double> writer, baseline, buffer_done;
  Run last;
  for (int r = 0; r < repeats; ++r) {
    last = RunOnce(workload, dir, zstd_level);
    writer.push_back(last.writer_ns_per_record);
    baseline.push_back(last.baseline_ns_per_record);
    buffer_done.push_back(last.buffer_done_ns_per_record);
  }
  if (!read_back) {
    std::printf("writer CPU per record   %.1f ns (median of %d; %.1f ns of it at buffer completion); baseline %.1f ns; "
                "%.2f bytes per kernel\n",
                Median(writer), repeats, Median(buffer_done), Median(baseline), double(last.bytes) / double(workload.kernels));
    if (keep.empty()) std::filesystem::remove_all(dir);
    return 0;
  }
  // Every record back through the loader: the figures are for a stream that reads.
  auto model = analysis::LoadStepscopeRun(dir.string());
  if (!model.ok()) {
    std::fprintf(stderr, "gpu_tracer_benchmark: the stream does not load: %s\n", model.status().message().c_str());
    return 1;
  }
  uint64_t device_events = 0, flows = model->flows().size();
  for (const auto& event : model->events()) device_events += event.device >= 0 ? 1 : 0;
  const double writer_ns = Median(writer), baseline_ns = Median(baseline);
  std::printf("records                 %zu (%llu kernels, %zu memcpy, %zu launches)\n", workload.records.size(),
              static_cast<unsigned long long>(workload.kernels), workload.records.size() / 2 - workload.kernels,
              workload.records.size() / 2);
  std::printf("writer CPU per record   %.1f ns (median of %d; bar 50 ns: %s), %.1f ns of it at buffer completion "
              "(the frame's streams, zstd, the write)\n",
              writer_ns, repeats, writer_ns <= 50 ? "PASS" : "FAIL", Median(buffer_done));
  std::printf("baseline (copy)         %.1f ns per record; writer / baseline = %.1fx\n", baseline_ns,
              writer_ns / baseline_ns);
  const double per_kernel = double(last.bytes) / double(workload.kernels);
  std::printf("at rest                 %llu bytes (log %llu) = %.2f bytes per kernel, all records counted "
              "(bar 8: %s); %.2f bytes per record\n",
              static_cast<unsigned long long>(last.bytes), static_cast<unsigned long long>(last.log_bytes), per_kernel,
              per_kernel <= 8 ? "PASS" : "FAIL", double(last.bytes) / double(workload.records.size()));
  std::printf("read back               %llu device events, %llu launch->kernel flows (of %zu)\n",
              static_cast<unsigned long long>(device_events), static_cast<unsigned long long>(flows),
              workload.records.size() / 2);
  const bool complete = device_events == workload.records.size() / 2 && last.written == workload.records.size();
  if (keep.empty()) std::filesystem::remove_all(dir);
  return complete ? 0 : 1;
}
