// What the Prometheus endpoint of `stepscope run --metrics-port` costs (issue 16 §3: <= 0.1 % of
// one core at a 15 s scrape interval).
//
//   prometheus_exposition_benchmark [--polls N] [--scrapes N] [--repetitions R] [--interval_ms 500]
//                                   [--scrape_s 15]
//
// A node of 32 cores and 8 GPUs as the sampler polls it (234 samples a poll). Per poll the
// exposition publishes a copy of the poll (the sampler thread pays it); per scrape an HTTP GET
// /metrics renders and answers the text (the endpoint's threads pay it; the client runs in this
// process too, so the figure is an upper bound). Baseline, in the same process: the run's own system
// stream writing the same poll (SystemStreamSink::WriteSamples), which every run pays already.
// Medians of R repetitions of process CPU time; the cost per second of the job follows from the
// intervals: publish x polls/s + scrape / scrape interval.
#include <sys/resource.h>
#include <time.h>

#include <httplib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/clock.h"
#include "launcher/system_stream_sink.h"
#include "prometheus/exposition.h"
#include "prometheus/metrics_endpoint.h"

namespace stepscope {
namespace {

uint64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::vector<MetricSample> Poll(int round) {
  std::vector<MetricSample> samples;
  auto value = [&](int i) { return static_cast<double>((round * 7 + i * 13) % 100) + 0.25; };
  int i = 0;
  for (int core = -1; core < 32; ++core) {
    const std::string name = core < 0 ? "total" : "cpu" + std::to_string(core);
    for (const char* leaf : {"user_pct", "system_pct", "util_pct", "iowait_pct", "idle_pct"}) {
      samples.push_back({"cpu/" + name + "/" + leaf, value(i++)});
    }
  }
  for (const char* name : {"memory/used_pct", "memory/used_bytes", "memory/total_bytes", "disk/read_bytes_per_s",
                           "disk/write_bytes_per_s", "disk/read_iops", "disk/write_iops", "disk/iops",
                           "network/rx_bytes_per_s", "network/tx_bytes_per_s", "process/cpu_pct", "process/rss_bytes",
                           "process/count"}) {
    samples.push_back({name, value(i++) * 1e6});
  }
  for (int gpu = 0; gpu < 8; ++gpu) {
    for (const char* leaf : {"util_pct", "memory_used_bytes", "memory_total_bytes", "memory_used_pct", "power_w",
                             "temperature_c", "sm_clock_mhz"}) {
      samples.push_back({"gpu/gpu" + std::to_string(gpu) + "/" + leaf, value(i++)});
    }
  }
  return samples;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int Main(int argc, char** argv) {
  int polls = 2000, scrapes = 200, repetitions = 5;
  double interval_ms = 500, scrape_s = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (flag == "--polls") polls = static_cast<int>(v);
    else if (flag == "--scrapes") scrapes = static_cast<int>(v);
    else if (flag == "--repetitions") repetitions = static_cast<int>(v);
    else if (flag == "--interval_ms") interval_ms = v;
    else if (flag == "--scrape_s") scrape_s = v;
    else return std::fprintf(stderr, "unknown flag %s\n", flag.c_str()), 2;
  }
  std::vector<std::vector<MetricSample>> rounds;
  for (int r = 0; r < 16; ++r) rounds.push_back(Poll(r));

  const std::string dir = (std::filesystem::temp_directory_path() / "stepscope-exposition-benchmark").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const ClockPair anchor{MonotonicNowNs(), MonotonicNowNs()};
  auto sink = launcher::SystemStreamSink::Create(dir, R"({"kind":"system"})", anchor);
  if (!sink.ok()) return std::fprintf(stderr, "%s\n", sink.status().message().c_str()), 1;

  prometheus::Exposition exposition({"benchmark", "node-0", "0", 1.7e9});
  prometheus::MetricsEndpoint endpoint(&exposition);
  if (Status started = endpoint.Start("127.0.0.1", 0); !started.ok()) {
    return std::fprintf(stderr, "%s\n", started.message().c_str()), 1;
  }
  httplib::Client client("127.0.0.1", endpoint.port());
  client.set_keep_alive(false);  // a new connection per scrape, as Prometheus' 15 s scrapes make

  std::vector<double> baseline_ns, publish_ns, scrape_ns;
  size_t body_bytes = 0;
  for (int r = 0; r < repetitions; ++r) {
    uint64_t start = ProcessCpuNs();
    for (int p = 0; p < polls; ++p) (*sink)->WriteSamples(ReadTicks(), rounds[p % rounds.size()]);
    baseline_ns.push_back(static_cast<double>(ProcessCpuNs() - start) / polls);

    start = ProcessCpuNs();
    for (int p = 0; p < polls; ++p) exposition.PublishSystem(rounds[p % rounds.size()]);
    publish_ns.push_back(static_cast<double>(ProcessCpuNs() - start) / polls);

    start = ProcessCpuNs();
    for (int s = 0; s < scrapes; ++s) {
      auto response = client.Get("/metrics");
      if (!response || response->status != 200) return std::fprintf(stderr, "scrape failed\n"), 1;
      body_bytes = response->body.size();
    }
    scrape_ns.push_back(static_cast<double>(ProcessCpuNs() - start) / scrapes);
  }
  endpoint.Stop();
  (void)(*sink)->Finish();
  std::filesystem::remove_all(dir);

  const double baseline = Median(baseline_ns), publish = Median(publish_ns), scrape = Median(scrape_ns);
  const double polls_per_s = 1000.0 / interval_ms;
  const double cost_pct = (publish * polls_per_s + scrape / scrape_s) / 1e9 * 100;
  std::printf("poll of %zu samples; medians of %d repetitions (process CPU)\n", rounds[0].size(), repetitions);
  std::printf("  baseline: the run's system stream writing the poll  %9.1f us\n", baseline / 1e3);
  std::printf("  exposition: publish the poll                       %9.1f us  (%.2fx the baseline)\n", publish / 1e3,
              publish / baseline);
  std::printf("  a scrape (render, GET /metrics, %zu bytes, client)  %9.1f us\n", body_bytes, scrape / 1e3);
  std::printf("at %.0f ms polls and %.0f s scrapes: %.4f %% of one core (bar 0.1 %%): %s\n", interval_ms, scrape_s,
              cost_pct, cost_pct <= 0.1 ? "PASS" : "FAIL");
  return cost_pct <= 0.1 ? 0 : 1;
}

}  // namespace
}  // namespace stepscope

int main(int argc, char** argv) { return stepscope::Main(argc, argv); }
