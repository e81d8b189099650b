// Writes the synthetic run of synthetic_run.h (and its SageMaker twin) for manual analysis:
//   make_synthetic_run OUT_DIR [--hours=24] [--cores=32] [--gpus=8] [--interval_ms=500]
//                      [--steps_per_s=4] [--seed=1] [--nodes=1] [--ranks_per_node=1] [--no-sagemaker]
// (--steps_per_s is each rank's: N nodes of R ranks record about N x R times one rank's events)
// then e.g. `stepscope rules OUT_DIR/stepscope/synthetic`.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "synthetic_run.h"

int main(int argc, char** argv) {
  using stepscope::benchmarks::SyntheticRunOptions;
  SyntheticRunOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--hours=")) options.duration_s = static_cast<int64_t>(std::atof(v) * 3600);
    else if (const char* v = value("--cores=")) options.cpu_cores = std::atoi(v);
    else if (const char* v = value("--gpus=")) options.gpus = std::atoi(v);
    else if (const char* v = value("--interval_ms=")) options.poll_interval_ms = std::atoll(v);
    else if (const char* v = value("--steps_per_s=")) options.train_steps_per_s = std::atof(v);
    else if (const char* v = value("--seed=")) options.seed = std::strtoull(v, nullptr, 10);
    else if (const char* v = value("--nodes=")) options.nodes = std::atoi(v);
    else if (const char* v = value("--ranks_per_node=")) options.ranks_per_node = std::atoi(v);
    else if (arg == "--no-sagemaker") options.write_sagemaker = false;
    else if (!arg.starts_with("--") && options.out_dir.empty()) options.out_dir = arg;
    else {
      std::fprintf(stderr, "make_synthetic_run: unknown argument '%s'; usage: make_synthetic_run OUT_DIR [--hours=24] "
                           "[--cores=32] [--gpus=8] [--interval_ms=500] [--steps_per_s=4] [--seed=1] [--nodes=1] "
                           "[--ranks_per_node=1] [--no-sagemaker]\n",
                   argv[i]);
      return 2;
    }
  }
  if (options.out_dir.empty()) {
    std::fprintf(stderr, "make_synthetic_run: pass the output directory first (make_synthetic_run OUT_DIR ...)\n");
    return 2;
  }
  auto summary = stepscope::benchmarks::WriteSyntheticRun(options);
  if (!summary.ok()) {
    std::fprintf(stderr, "make_synthetic_run: %s\n", summary.status().message().c_str());
    return 1;
  }
  std::printf("stepscope run: %s (%.1f MB)\nSageMaker twin: %s (%.1f MB)\n%lld polls, %lld samples, %lld events, "
              "%lld TRAIN / %lld EVAL steps, %lld slow\n",
              summary->stepscope_dir.c_str(), static_cast<double>(summary->stepscope_bytes) / 1e6,
              summary->sagemaker_dir.c_str(), static_cast<double>(summary->sagemaker_bytes) / 1e6,
              static_cast<long long>(summary->polls), static_cast<long long>(summary->samples),
              static_cast<long long>(summary->events), static_cast<long long>(summary->train_steps),
              static_cast<long long>(summary->eval_steps), static_cast<long long>(summary->slow_steps));
  if (options.nodes * options.ranks_per_node > 1) {
    std::printf("%d nodes x %d ranks: samples and events of all of them, steps of each rank\n", options.nodes,
                options.ranks_per_node);
  }
  return 0;
}
