// libFuzzer target for the /proc parsers (src/platform/linux/*_parser.h) and the sampler
// sources over them (src/sampler/): what the kernel writes is trusted in practice, but a
// container runtime, an unusual kernel or a FUSE /proc can serve anything, and the sampler runs
// inside the launcher of someone's training job, where a crash loses the run.
//
//   input: u8 file | u32 n | first poll's text (n bytes) | second poll's text (the rest)
//   file % 6: stat, meminfo, diskstats, net/dev, uptime, pid stats (one /proc/<pid>/stat text
//             per line, pid first, as tests/data/proc/*/pid_stats; the job's root is pid 6871,
//             the captured job tree)
//
// Each text goes to its parser, then the Linux sources poll a fake /proc holding the first text
// and again holding the second (the sources report deltas). Besides "no crash, no ASan report"
// it traps when a property fails:
//   - a parser or source error is one line;
//   - every sample is finite, and the shares of CPU time and memory lie in [0, 100] %.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_inputs.h"
#include "platform/linux/diskstats_parser.h"
#include "platform/linux/meminfo_parser.h"
#include "platform/linux/net_dev_parser.h"
#include "platform/linux/pid_stat_parser.h"
#include "platform/linux/proc_stat_parser.h"
#include "platform/linux/uptime_parser.h"
#include "sampler/fake_file_system.h"
#include "sampler/linux_sources.h"

namespace {

using namespace stepscope;
using stepscope::testing::FakeFileSystem;

constexpr int32_t kJobRootPid = 6871;
constexpr const char* kProcRoot = "/proc";

template <typename T>
void CheckParsed(const StatusOr<T>& parsed) {
  if (!parsed.ok()) FUZZ_CHECK(parsed.status().message().find('\n') == std::string::npos);
}

void Parse(uint8_t file, std::string_view text) {
  switch (file) {
    case 0: CheckParsed(ParseProcStat(text)); break;
    case 1: CheckParsed(ParseMeminfo(text)); break;
    case 2: CheckParsed(ParseDiskstats(text)); break;
    case 3: CheckParsed(ParseNetDev(text)); break;
    case 4: CheckParsed(ParseUptimeNs(text)); break;
    default: {
      size_t start = 0;
      while (start < text.size()) {
        size_t end = text.find('\n', start);
        end = end == std::string_view::npos ? text.size() : end + 1;
        CheckParsed(ParsePidStat(text.substr(start, end - start)));
        start = end;
      }
    }
  }
}

bool IsShare(const std::string& name) { return name.starts_with("cpu/") || name == "memory/used_pct"; }

void Place(FakeFileSystem& fs, uint8_t file, std::string_view text) {
  static constexpr const char* kPaths[] = {"/proc/stat", "/proc/meminfo", "/proc/diskstats", "/proc/net/dev",
                                           "/proc/uptime"};
  if (file < 5) {
    fs.SetFile(kPaths[file], std::string(text));
  } else {
    fs.SetPidStats(kProcRoot, std::string(text));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stepscope::fuzz::InputCursor in(std::string_view(reinterpret_cast<const char*>(data), size));
  const uint8_t file = in.Take<uint8_t>() % 6;
  const std::string_view first = in.TakeBytes(in.Take<uint32_t>());
  const std::string_view second = in.Rest();
  Parse(file, first);
  Parse(file, second);

  stepscope::testing::FakeFileSystem fs;
  // The process tree needs the uptime; it is fuzzed as itself (file 4), fixed otherwise.
  if (file != 4) fs.SetFile("/proc/uptime", "1000.00 1900.00\n");
  LinuxSourcesOptions options;
  options.proc_root = kProcRoot;
  options.job_root_pid = kJobRootPid;
  auto sources = CreateLinuxSources(fs, options);
  uint64_t monotonic_ns = 1'000'000'000'000;
  for (std::string_view text : {first, second}) {
    Place(fs, file, text);
    if (file != 4) fs.SetFile("/proc/uptime", monotonic_ns == 1'000'000'000'000 ? "1000.00 1900.00\n" : "1001.30 1902.00\n");
    for (auto& source : sources) {
      std::vector<MetricSample> samples;
      Status status = source->Poll(monotonic_ns, samples);
      if (!status.ok()) FUZZ_CHECK(status.message().find('\n') == std::string::npos);
      for (const MetricSample& sample : samples) {
        FUZZ_CHECK(std::isfinite(sample.value));
        if (IsShare(sample.name)) FUZZ_CHECK(sample.value >= 0 && sample.value <= 100);
      }
    }
    monotonic_ns += 1'300'000'000;
  }
  return 0;
}
