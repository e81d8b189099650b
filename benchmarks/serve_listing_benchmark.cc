// The dashboard's job list over a root of many runs (issue 14 §1: "a root with 200 runs lists in
// under a second"). Creates --runs runs (default 200) under a temporary root, each a node
// directory with a manifest written by the launcher's writer (store/run_manifest.h) and the
// stream files a finished run leaves, then in one process, --repetitions times each (median
// reported):
//   manifests  store::ReadRunManifest of every run's node: the floor, what listing must read
//   listing    server::ListRuns(root): what GET /api/runs does before filtering
// Exit status 1 when the listing's median misses 1 s.
//
// Usage: serve_listing_benchmark [--runs=200] [--repetitions=15] [--root=DIR (kept)]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "server/run_catalog.h"
#include "store/run_manifest.h"

namespace {

constexpr double kBarSeconds = 1.0;

double MedianSeconds(int repetitions, const std::function<size_t()>& work, size_t* count) {
  std::vector<double> seconds;
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    *count = work();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

// One finished run as `stepscope run` leaves it: <root>/<job>/<node>/manifest.json and streams.
bool WriteRun(const std::string& root, int index) {
  using namespace stepscope;
  const std::string job = "train-" + std::to_string(index);
  const std::string node_dir = root + "/" + job + "/algo-1";
  std::filesystem::create_directories(node_dir + "/control");
  store::RunManifest manifest;
  manifest.job = job;
  manifest.node = "algo-1";
  manifest.hosts = {"algo-1"};
  manifest.command = {"python3", "train.py", "--epochs", "3"};
  manifest.status = store::ManifestStatus::kExited;
  manifest.exit.known = true;
  manifest.has_clock = true;
  manifest.clock_realtime_ns = 1'790'000'000'000'000'000 + int64_t{index} * 3'600'000'000'000;
  manifest.start_time_ns = manifest.clock_realtime_ns;
  manifest.end_time_ns = manifest.start_time_ns + 1'800'000'000'000;
  manifest.instance_type = "p3.2xlarge";
  manifest.streams_listed = true;
  manifest.streams = {"system", "python-1234", "python-1240"};
  if (!WriteFileAtomically(node_dir + "/manifest.json", store::ManifestText(manifest)).ok()) return false;
  for (const std::string& stream : manifest.streams) {
    if (!WriteFileAtomically(node_dir + "/" + stream + ".log", std::string(4096, '\0')).ok()) return false;
  }
  return WriteFileAtomically(root + "/" + job + "/report.html", "<!doctype html>").ok();
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200, repetitions = 15;
  std::string root;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--runs=", 7) == 0) runs = std::max(1, std::atoi(argv[i] + 7));
    else if (std::strncmp(argv[i], "--repetitions=", 14) == 0) repetitions = std::max(1, std::atoi(argv[i] + 14));
    else if (std::strncmp(argv[i], "--root=", 7) == 0) root = argv[i] + 7;
    else {
      std::fprintf(stderr, "usage: serve_listing_benchmark [--runs=200] [--repetitions=15] [--root=DIR]\n");
      return 2;
    }
  }
  const bool temporary = root.empty();
  if (temporary) root = std::filesystem::temp_directory_path() / ("serve-listing-" + std::to_string(getpid()));
  std::filesystem::create_directories(root);
  for (int i = 0; i < runs; ++i) {
    if (!WriteRun(root, i)) {
      std::fprintf(stderr, "serve_listing_benchmark: cannot write runs under %s\n", root.c_str());
      return 1;
    }
  }

  size_t read = 0, listed = 0;
  const double manifests_s = MedianSeconds(repetitions, [&] {
    size_t ok = 0;
    for (int i = 0; i < runs; ++i) {
      ok += stepscope::store::ReadRunManifest(root + "/train-" + std::to_string(i) + "/algo-1").ok();
    }
    return ok;
  }, &read);
  const double listing_s = MedianSeconds(repetitions, [&] {
    auto listing = stepscope::server::ListRuns({root, false});
    return listing.ok() ? listing->size() : 0;
  }, &listed);

  std::printf("runs                         %d (%s)\n", runs, root.c_str());
  std::printf("read %zu manifests            %8.2f ms (median of %d)\n", read, manifests_s * 1e3, repetitions);
  std::printf("ListRuns, %zu runs listed     %8.2f ms (median of %d)  %.2fx the manifests\n", listed,
              listing_s * 1e3, repetitions, manifests_s > 0 ? listing_s / manifests_s : 0.0);
  std::printf("bar: listing <= %.0f ms       %s\n", kBarSeconds * 1e3, listing_s <= kBarSeconds ? "met" : "MISSED");
  if (temporary) std::filesystem::remove_all(root);
  return listed == static_cast<size_t>(runs) && listing_s <= kBarSeconds ? 0 : 1;
}
