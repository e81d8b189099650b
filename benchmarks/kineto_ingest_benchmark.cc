// Kineto JSON ingest speed (SPEC §6: "Kineto JSON ingest >= 400 MB/s per core").
//
// For each trace (default: every .gz in tests/fixtures/kineto), the bytes are inflated once,
// then, --repetitions times each, in this process:
//   import    KinetoImporter::AddText + Finish on a copy of the decompressed text, made before
//             the timing: parse, staging, flow linking, model build and sort (the figure the
//             bar is about)
//   e2e       ImportKineto({path}): read + gzip inflate + import (zlib's inflate alone is
//             ~300-500 MB/s, so this figure includes a cost outside the parser)
//   baseline  simdjson's DOM parse of the same bytes with a reused parser (runtime-dispatched
//             kernel; a floor no importer on top of simdjson can beat)
// MB/s are decompressed bytes (10^6) per second of the median repetition, as thread CPU time
// (= per core: the importer is single-threaded) and as wall time. The total line divides the
// summed bytes by the summed medians. Exit status 1 when the total import CPU figure misses
// the bar.
//
// Usage: kineto_ingest_benchmark [--repetitions=9] [FILE...]

#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "importers/common/trace_bytes.h"
#include "importers/kineto/kineto_importer.h"

namespace stepscope {
namespace {

constexpr double kBarMBps = 400.0;

struct Clock {
  double cpu_s;
  double wall_s;
};

Clock Now() {
  timespec cpu;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return {static_cast<double>(cpu.tv_sec) + cpu.tv_nsec * 1e-9, wall};
}

struct Medians {
  double cpu_s = 0;
  double wall_s = 0;
};

// `setup` runs before each repetition, outside the timing.
template <typename Fn, typename Setup>
Medians Measure(int repetitions, Fn&& fn, Setup&& setup) {
  std::vector<double> cpu, wall;
  for (int i = 0; i < repetitions; ++i) {
    setup();
    const Clock start = Now();
    fn();
    const Clock end = Now();
    cpu.push_back(end.cpu_s - start.cpu_s);
    wall.push_back(end.wall_s - start.wall_s);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  return {cpu[cpu.size() / 2], wall[wall.size() / 2]};
}

template <typename Fn>
Medians Measure(int repetitions, Fn&& fn) {
  return Measure(repetitions, std::forward<Fn>(fn), [] {});
}

std::vector<std::string> DefaultFiles() {
  const std::string dir = std::string(STEPSCOPE_FIXTURES_DIR) + "/kineto";
  std::vector<std::string> files;
  if (DIR* handle = opendir(dir.c_str())) {
    while (dirent* entry = readdir(handle)) {
      const std::string name = entry->d_name;
      if (name.size() > 3 && name.ends_with(".gz")) files.push_back(dir + "/" + name);
    }
    closedir(handle);
  }
  std::sort(files.begin(), files.end());
  return files;
}

int Run(int argc, char** argv) {
  int repetitions = 9;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::sscanf(argv[i], "--repetitions=%d", &repetitions) == 1 && repetitions > 0) continue;
    if (std::strncmp(argv[i], "--", 2) == 0) {
      std::fprintf(stderr, "usage: kineto_ingest_benchmark [--repetitions=9] [FILE...]\n");
      return 2;
    }
    files.push_back(argv[i]);
  }
  if (files.empty()) files = DefaultFiles();
  if (files.empty()) {
    std::fprintf(stderr, "kineto_ingest_benchmark: no traces found; pass .pt.trace.json[.gz] files\n");
    return 2;
  }

  std::printf("%-44s %8s %9s %9s %9s %9s %9s %7s\n", "trace", "MB", "import", "import", "e2e", "baseline", "base",
              "import/");
  std::printf("%-44s %8s %9s %9s %9s %9s %9s %7s\n", "", "(dec.)", "CPU MB/s", "wall MB/s", "CPU MB/s", "CPU MB/s",
              "wall MB/s", "base");
  double total_bytes = 0, total_import_cpu = 0, total_import_wall = 0, total_e2e_cpu = 0, total_base_cpu = 0;
  simdjson::dom::parser dom;
  for (const std::string& path : files) {
    auto decoded = analysis::ReadTraceFile(path, simdjson::SIMDJSON_PADDING);
    if (!decoded.ok()) {
      std::fprintf(stderr, "%s\n", decoded.status().message().c_str());
      return 2;
    }
    const std::string& bytes = decoded->bytes;
    bool failed = false;
    // The importer parses the text in place (AddText); the copy it consumes is made outside
    // the timing, as the file read is (that is the e2e column).
    std::string text;
    const Medians import = Measure(
        repetitions,
        [&] {
          analysis::KinetoImporter importer;
          failed |= !importer.AddText(path, std::move(text)).ok();
          analysis::Model model = std::move(importer).Finish();
          failed |= model.events().empty();
        },
        [&] {
          text.reserve(bytes.size() + simdjson::SIMDJSON_PADDING);
          text.assign(bytes);
        });
    const Medians e2e = Measure(repetitions, [&] { failed |= !analysis::ImportKineto({path}).ok(); });
    const Medians base = Measure(repetitions, [&] {
      simdjson::dom::element root;
      failed |= dom.parse(bytes.data(), bytes.size(), false).get(root) != simdjson::SUCCESS;
    });
    if (failed) {
      std::fprintf(stderr, "%s: import or parse failed\n", path.c_str());
      return 2;
    }
    const double mb = bytes.size() / 1e6;
    const std::string name = path.substr(path.find_last_of('/') + 1);
    std::printf("%-44.44s %8.2f %9.0f %9.0f %9.0f %9.0f %9.0f %7.2f\n", name.c_str(), mb, mb / import.cpu_s,
                mb / import.wall_s, mb / e2e.cpu_s, mb / base.cpu_s, mb / base.wall_s, base.cpu_s / import.cpu_s);
    total_bytes += mb;
    total_import_cpu += import.cpu_s;
    total_import_wall += import.wall_s;
    total_e2e_cpu += e2e.cpu_s;
    total_base_cpu += base.cpu_s;
  }
  const double import_mbps = total_bytes / total_import_cpu;
  std::printf("%-44s %8.2f %9.0f %9.0f %9.0f %9.0f %9s %7.2f\n", "total", total_bytes, import_mbps,
              total_bytes / total_import_wall, total_bytes / total_e2e_cpu, total_bytes / total_base_cpu, "",
              total_base_cpu / total_import_cpu);
  std::printf("median of %d repetitions; bar: import >= %.0f MB/s per core: %s\n", repetitions, kBarMBps,
              import_mbps >= kBarMBps ? "met" : "MISSED");
  return import_mbps >= kBarMBps ? 0 : 1;
}

}  // namespace
}  // namespace stepscope

int main(int argc, char** argv) { return stepscope::Run(argc, argv); }
