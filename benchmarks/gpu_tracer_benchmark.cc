// The GPU tracer's cost from CUPTI's buffer to the store, and what a kernel costs at rest
// (issue 15 §5: <= 50 ns of CPU per record, <= 8 bytes per kernel record at rest).
//
//   gpu_tracer_benchmark [--records N] [--repeats R] [--trace KINETO_JSON[.gz]] [--keep DIR]
//                        [--no-read-back] [--zstd-level L]
//
// Two workloads, N records each (default 10,000,000), handed to the real GpuStreamWriter as the
// tracer hands them (OnRecord per record, OnBufferDone per CUPTI buffer of 8,192 records, the
// records of a 1 MiB buffer), into a real run directory on disk:
//   synthetic (default)  a whole-job trace as a training step makes it, at its most random: per
//                        launch a runtime call (cudaLaunchKernel, its correlation id) and its
//                        kernel (one of 60 names picked at random, from 4-character elementwise
//                        kernels to long templated GEMM names; grid, block, registers and shared
//                        memory fixed per name), every 20th launch a memcpy instead (HtoD,
//                        pinned, 1 MiB). Kernels of 5-400 us back to back on two streams, launches
//                        4-12 us apart on the host, all drawn at random.
//   --trace FILE         a real PyTorch profiler trace's GPU activity replayed: its kernels,
//                        copies and sets (names, streams, grids, blocks, times) and the runtime
//                        calls that launched them (whole-job mode keeps no others), in the order
//                        of their ends, as CUPTI completes them; repeated, shifted in time and
//                        correlation, until N records (tests/fixtures/kineto: a real job's steps).
//
// Cost: thread CPU time of the writer per record (median of R runs, default 5), beside the
// baseline in the same process: the same records copied once, a buffer of them at a time into
// memory reused per buffer (what touching them costs at least). Size: the stream's files after
// the writer finishes (log + ring header): per kernel record, of the workload's kernels written
// alone; per record; and all of it divided by the kernels (every launch's and copy's bytes
// counted against them too). A read-back through the stepscope loader checks every record came
// back.
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/stepscope_loader.h"
#include "gpu_tracer/gpu_stream_writer.h"
#include "importers/common/trace_bytes.h"

namespace stepscope {
namespace {

constexpr size_t kRecordsPerBuffer = 8192;

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Workload {
  std::deque<std::string> names;  // kept alive: records point into them
  std::vector<GpuActivityRecord> records;
  uint64_t kernels = 0;
  uint64_t device_records = 0;  // kernels, copies, sets: each comes back as a device event
  uint64_t launches = 0;        // runtime calls: each with a device record, a flow
  std::string what;
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
  w.what = "synthetic (60 kernel names at random, 2 streams)";
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
    ++w.device_records;
    ++w.launches;
    host_ns += static_cast<uint64_t>(gap(random));
    ++correlation;
  }
  return w;
}

// The kind the writer spells `name` (MemcpyKindName, MemoryKindName: Kineto's spellings),
// kUnknown for none.
template <typename Kind>
Kind KindNamed(std::string_view name, const char* (*spell)(Kind), uint8_t count) {
  for (uint8_t value = 1; value < count; ++value) {
    if (name == spell(static_cast<Kind>(value))) return static_cast<Kind>(value);
  }
  return Kind::kUnknown;
}

// "Memcpy DtoD (Device -> Device)", as Kineto names copies.
void ParseMemcpyName(std::string_view name, GpuActivityRecord& record) {
  const size_t space = name.find(' '), open = name.find(" ("), arrow = name.find(" -> "), close = name.rfind(')');
  if (space == std::string_view::npos || open == std::string_view::npos || arrow == std::string_view::npos ||
      close == std::string_view::npos || open <= space || arrow <= open || close <= arrow) {
    return;
  }
  record.memcpy_kind = KindNamed(name.substr(space + 1, open - space - 1), MemcpyKindName,
                                 static_cast<uint8_t>(GpuMemcpyKind::kPtoP) + 1);
  record.src_memory = KindNamed(name.substr(open + 2, arrow - open - 2), MemoryKindName,
                                static_cast<uint8_t>(GpuMemoryKind::kManagedStatic) + 1);
  record.dst_memory = KindNamed(name.substr(arrow + 4, close - arrow - 4), MemoryKindName,
                                static_cast<uint8_t>(GpuMemoryKind::kManagedStatic) + 1);
}

// The trace's device work and the runtime calls that launched it, as records in the order of
// their ends; exits with a one-line error when the file cannot be read or holds none.
Workload MakeTraceWorkload(const std::string& path, size_t count) {
  auto fail = [&path](const std::string& why) {
    std::fprintf(stderr, "gpu_tracer_benchmark: %s: %s\n", path.c_str(), why.c_str());
    std::exit(2);
  };
  auto read = analysis::ReadTraceFile(path, 0);
  if (!read.ok()) fail(read.status().message() + "; give a PyTorch profiler trace (.json or .json.gz)");
  const std::string& text = read->bytes;
  // Times are µs with three decimals since the epoch: 19 digits, more than a double holds (it
  // would round them to 256 ns); a long double's 64-bit mantissa keeps every nanosecond.
  using PreciseJson = nlohmann::basic_json<std::map, std::vector, std::string, bool, int64_t, uint64_t, long double>;
  const PreciseJson trace = PreciseJson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded() || !trace.contains("traceEvents")) fail("is not a PyTorch profiler trace");
  Workload w;
  std::map<std::string, const char*> interned;  // name -> its stable copy in w.names
  auto intern = [&](const std::string& name) {
    auto [it, inserted] = interned.emplace(name, nullptr);
    if (inserted) it->second = w.names.emplace_back(name).c_str();
    return it->second;
  };
  auto ns = [](const PreciseJson& value) { return static_cast<uint64_t>(std::llroundl(value.get<long double>() * 1000.0L)); };
  std::vector<GpuActivityRecord> device, calls;
  for (const PreciseJson& event : trace["traceEvents"]) {
    if (!event.is_object() || event.value("ph", "") != "X" || !event.contains("ts") || !event.contains("dur")) continue;
    const std::string category = event.value("cat", "");
    const PreciseJson args = event.value("args", PreciseJson::object());
    GpuActivityRecord r;
    r.start_ns = ns(event["ts"]);
    r.end_ns = r.start_ns + ns(event["dur"]);
    r.correlation = args.value("correlation", 0u);
    if (category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset") {
      r.device = args.value("device", 0u);
      r.context = args.value("context", 0u);
      r.stream = args.value("stream", 0u);
      if (category == "kernel") {
        r.kind = GpuActivityKind::kKernel;
        r.name = intern(event.value("name", ""));
        const PreciseJson grid = args.value("grid", PreciseJson::array()), block = args.value("block", PreciseJson::array());
        for (int d = 0; d < 3 && d < static_cast<int>(grid.size()); ++d) r.grid[d] = grid[d].get<int32_t>();
        for (int d = 0; d < 3 && d < static_cast<int>(block.size()); ++d) r.block[d] = block[d].get<int32_t>();
        r.registers_per_thread = args.value("registers per thread", uint16_t{0});
        r.shared_memory_bytes = args.value("shared memory", 0u);
      } else {
        r.kind = category == "gpu_memcpy" ? GpuActivityKind::kMemcpy : GpuActivityKind::kMemset;
        r.bytes = args.value("bytes", uint64_t{0});
        if (category == "gpu_memcpy") ParseMemcpyName(event.value("name", ""), r);
        else r.src_memory = GpuMemoryKind::kDevice;
      }
      device.push_back(r);
    } else if (category == "cuda_runtime") {
      r.kind = GpuActivityKind::kRuntimeApi;
      r.name = intern(event.value("name", ""));
      r.thread_id = event.value("tid", 0u);
      r.callback_id = args.value("cbid", 0u);
      calls.push_back(r);
    }
  }
  if (device.empty()) fail("holds no GPU activity (kernel, gpu_memcpy or gpu_memset events)");
  std::vector<uint32_t> launched;  // correlations of device work
  for (const GpuActivityRecord& r : device) launched.push_back(r.correlation);
  std::sort(launched.begin(), launched.end());
  std::vector<GpuActivityRecord> one_pass = device;
  for (const GpuActivityRecord& r : calls) {
    if (std::binary_search(launched.begin(), launched.end(), r.correlation)) one_pass.push_back(r);
  }
  std::stable_sort(one_pass.begin(), one_pass.end(),
                   [](const GpuActivityRecord& a, const GpuActivityRecord& b) { return a.end_ns < b.end_ns; });
  uint64_t first = UINT64_MAX, last = 0;
  uint32_t lowest = UINT32_MAX, highest = 0;
  for (const GpuActivityRecord& r : one_pass) {
    first = std::min(first, r.start_ns), last = std::max(last, r.end_ns);
    lowest = std::min(lowest, r.correlation), highest = std::max(highest, r.correlation);
  }
  // Each repetition starts 1 ms after the last ended, with correlations past the last's.
  const uint64_t period_ns = last - first + 1'000'000;
  const uint32_t correlation_step = highest - lowest + 1;
  w.records.reserve(count);
  for (uint64_t pass = 0; w.records.size() < count; ++pass) {
    for (GpuActivityRecord r : one_pass) {
      if (w.records.size() == count) break;
      r.start_ns += pass * period_ns;
      r.end_ns += pass * period_ns;
      r.correlation += static_cast<uint32_t>(pass) * correlation_step;
      w.kernels += r.kind == GpuActivityKind::kKernel;
      w.device_records += r.kind != GpuActivityKind::kRuntimeApi;
      w.launches += r.kind == GpuActivityKind::kRuntimeApi;
      w.records.push_back(r);
    }
  }
  w.what = "the trace " + std::filesystem::path(path).filename().string() + " (" + std::to_string(one_pass.size()) +
           " records a pass, " + std::to_string(interned.size()) + " names)";
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
  std::string keep, trace;
  bool read_back = true;  // off to profile the writer alone
  int zstd_level = GpuStreamWriterOptions().zstd_level;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--records" && i + 1 < argc) records = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--keep" && i + 1 < argc) keep = argv[++i];
    else if (arg == "--trace" && i + 1 < argc) trace = argv[++i];
    else if (arg == "--no-read-back") read_back = false;
    else if (arg == "--zstd-level" && i + 1 < argc) zstd_level = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: gpu_tracer_benchmark [--records N] [--repeats R] [--trace KINETO_JSON[.gz]] "
                           "[--keep DIR] [--no-read-back] [--zstd-level L]\n");
      return 2;
    }
  }
  const Workload workload = trace.empty() ? MakeWorkload(records) : MakeTraceWorkload(trace, records);
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
  std::printf("workload                %s\n", workload.what.c_str());
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
  std::printf("records                 %zu (%llu kernels, %llu copies and sets, %llu launches)\n",
              workload.records.size(), static_cast<unsigned long long>(workload.kernels),
              static_cast<unsigned long long>(workload.device_records - workload.kernels),
              static_cast<unsigned long long>(workload.launches));
  std::printf("writer CPU per record   %.1f ns (median of %d; bar 50 ns: %s), %.1f ns of it at buffer completion "
              "(the frame's streams, zstd, the write)\n",
              writer_ns, repeats, writer_ns <= 50 ? "PASS" : "FAIL", Median(buffer_done));
  std::printf("baseline (copy)         %.1f ns per record; writer / baseline = %.1fx\n", baseline_ns,
              writer_ns / baseline_ns);
  // What a kernel record costs: the same kernels written alone (the frames' shared bytes, the
  // names' declarations and the stream's files counted against them), beside every record's
  // bytes counted against the kernels, which is stricter the more launches and copies a kernel
  // brings (one launch each in the synthetic workload, 1.8 records in the trace).
  Workload kernels_alone;
  kernels_alone.what = "kernels alone";
  for (const GpuActivityRecord& record : workload.records) {
    if (record.kind == GpuActivityKind::kKernel) kernels_alone.records.push_back(record);
  }
  kernels_alone.kernels = kernels_alone.device_records = kernels_alone.records.size();
  const std::filesystem::path alone_dir = dir.string() + "-kernels";
  const Run alone = RunOnce(kernels_alone, alone_dir, zstd_level);
  std::filesystem::remove_all(alone_dir);
  const double per_kernel_alone = double(alone.bytes) / double(kernels_alone.kernels);
  const double per_kernel = double(last.bytes) / double(workload.kernels);
  std::printf("at rest                 %.2f bytes per kernel record (the kernels written alone; bar 8: %s); "
              "%.2f bytes per record\n",
              per_kernel_alone, per_kernel_alone <= 8 ? "PASS" : "FAIL", double(last.bytes) / double(workload.records.size()));
  std::printf("                        %llu bytes (log %llu) = %.2f bytes per kernel with every record counted "
              "against the kernels (%s 8)\n",
              static_cast<unsigned long long>(last.bytes), static_cast<unsigned long long>(last.log_bytes), per_kernel,
              per_kernel <= 8 ? "within" : "above");
  std::printf("read back               %llu device events (of %llu), %llu launch->device flows (of %llu)\n",
              static_cast<unsigned long long>(device_events), static_cast<unsigned long long>(workload.device_records),
              static_cast<unsigned long long>(flows), static_cast<unsigned long long>(workload.launches));
  const bool complete = device_events == workload.device_records && last.written == workload.records.size();
  if (keep.empty()) std::filesystem::remove_all(dir);
  return complete ? 0 : 1;
}
