"""Real PyTorch training recorded on a paced clock, for the rules' end-to-end tests.

The loop trains a small MLP for real under `stepscope run`, with the automatic instrumentation
off (STEPSCOPE_TORCH=0), and records what that instrumentation records for such a loop: the
loader's DataLoaderIterInitialize facts, TRAIN steps, and in each step its DataLoaderIter wait,
Forward, Backward and OptimizerStep spans. It records them with explicit timestamps
(stepscope._core's *_at calls) from a PacedClock, which moves by each phase's nominal length
only: a step lasts what the test asked for, on a quiet machine and a loaded one alike, so which
steps the rules find is decided by the arguments, not by the scheduler. (The instrumentation's
own timing is tests/pytorch's subject.)

    python3 paced_training.py --steps 200 --stall-every 15 [--stall-ms 120] [--step-ms 8]
                              [--data-ms 0.5] [--batch-size 8]

Steps number k*N - 1 stall for --stall-ms after their --step-ms of work; each step waits
--data-ms for its batch (with --num-workers 0, as a loop that loads in its own process). The
work and the wait vary by up to 1 % from step to step (a seeded generator: the same every run),
as real steps do: steps of one length to the tick would still differ by the nanosecond that
converting ticks rounds off, and outliers of a spread of one nanosecond are no test of a rule.
Prints stalled_steps=[...].
"""

import argparse
import os
import random
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from stepscope import _core

TRAIN = 0
# Nominal lengths of the compute phases, ms.
FORWARD_MS, BACKWARD_MS, OPTIMIZER_MS = 0.25, 0.25, 0.125


class PacedClock:
    """Recorder ticks for a time line that moves only by spend(): t0 + the time spent so far.

    Real time passes at least as fast (spend() sleeps until it has), so no timestamp lies ahead
    of the recorder's clock. The tick rate is measured once, between two (ticks, monotonic)
    pairs 100 ms apart; its error only scales every length alike.
    """

    def __init__(self):
        first_ticks, self._first_ns = self._pair()
        time.sleep(0.1)
        ticks, ns = self._pair()
        self._ticks_per_ns = (ticks - first_ticks) / (ns - self._first_ns)
        self._start_ticks, self._start_ns = ticks, ns
        self._spent_ns = 0

    @staticmethod
    def _pair():
        # A monotonic read bracketed by two tick reads; the narrowest bracket of a few.
        best = None
        for _ in range(20):
            before = _core.now()
            ns = time.monotonic_ns()
            after = _core.now()
            if best is None or after - before < best[0]:
                best = (after - before, (before + after) // 2, ns)
        return best[1], best[2]

    def ticks(self):
        return self._start_ticks + round(self._spent_ns * self._ticks_per_ns)

    def spend(self, ms):
        self._spent_ns += round(ms * 1e6)
        behind_ns = self._start_ns + self._spent_ns - time.monotonic_ns()
        if behind_ns > 0:
            time.sleep(behind_ns / 1e9)

    def span(self, name, ms):
        begin = self.ticks()
        self.spend(ms)
        _core.span_at(name, begin, self.ticks())


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--stall-every", type=int, default=15)
    parser.add_argument("--stall-ms", type=float, default=120.0)
    parser.add_argument("--step-ms", type=float, default=8.0)
    parser.add_argument("--data-ms", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=8)
    return parser.parse_args()


def main():
    args = parse_args()
    if os.environ.get("STEPSCOPE_TORCH") != "0" or not _core.is_enabled():
        raise SystemExit("run under `stepscope run` with STEPSCOPE_TORCH=0: this script records its steps itself")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    features = torch.randn(args.steps * args.batch_size, 16)
    labels = (features.sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=args.batch_size)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    clock = PacedClock()
    _core.mark_at("DataLoaderIterInitialize", clock.ticks())
    _core.args({"num_workers": 0, "pin_memory": False, "prefetch_factor": 0, "batch_size": args.batch_size,
                "persistent_workers": False, "drop_last": False, "cores": len(os.sched_getaffinity(0)),
                "dataset": "TensorDataset", "sampler": "SequentialSampler"})
    spread = random.Random(0)
    stalled = []
    batches = iter(loader)
    for step in range(args.steps):
        _core.step_begin_at(TRAIN, step, clock.ticks())
        x, y = next(batches)
        clock.span("DataLoaderIter", args.data_ms * spread.uniform(0.99, 1.01))
        loss = loss_fn(model(x), y)
        clock.span("Forward", FORWARD_MS)
        optimizer.zero_grad()
        loss.backward()
        clock.span("Backward", BACKWARD_MS)
        optimizer.step()
        clock.span("OptimizerStep", OPTIMIZER_MS)
        clock.spend(args.step_ms * spread.uniform(0.99, 1.01))
        if args.stall_every > 0 and (step + 1) % args.stall_every == 0:
            clock.spend(args.stall_ms)
            stalled.append(step)
        _core.step_end_at(TRAIN, step, clock.ticks())
    print(f"stalled_steps={stalled}")


if __name__ == "__main__":
    main()
