/* A C program marking its structure with the stepscope C API.
 *
 *   stepscope run -- ./record_steps [steps]
 *
 * Under `stepscope run` the recorder starts by itself; run alone, every call is a no-op. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "stepscope/stepscope.h"

static double Work(int n) {
  double x = 0;
  for (int i = 0; i < n; ++i) x += (double)i * 0.5;
  return x;
}

int main(int argc, char** argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 10;
  uint32_t forward = stepscope_intern("forward", 7);
  uint32_t loss = stepscope_intern("loss", 4);
  uint32_t batch = stepscope_intern("batch_size", 10);
  for (int step = 0; step < steps; ++step) {
    stepscope_step_begin(STEPSCOPE_PHASE_TRAIN, STEPSCOPE_AUTO_STEP);
    stepscope_begin(forward);
    stepscope_arg_int(batch, 32);
    double value = Work(100000);
    stepscope_end(forward);
    stepscope_counter(loss, value / 1e9);
    stepscope_step_end(STEPSCOPE_PHASE_TRAIN, STEPSCOPE_AUTO_STEP);
  }
  stepscope_instant_name("done");
  stepscope_stats stats;
  stepscope_get_stats(&stats);
  printf("recorded %llu events, dropped %llu\n", (unsigned long long)stats.events_recorded,
         (unsigned long long)stats.events_dropped);
  return 0;
}
