"""A small PyTorch training loop with no stepscope calls, for the detail-window tests.

A two-layer MLP (8 -> 16 -> 2) on a map-style dataset, one TRAIN step per batch from a
DataLoader; optionally an evaluation loop afterwards. Each training step calls `train_step`
(which the Python-profiling tests look for) and sleeps --sleep seconds inside it, so that
DataLoader workers certainly produce the next batch while a step runs.

Prints `main_pid=<pid>` and `steps=<n>`.

Two handshakes make what a test checks independent of how fast a loaded machine runs the loop:
--wait-at-step/--wait-for pause before a step until a file exists; --wait-for-control-at pauses
before a step until the job's control thread has handed a control file to the window scheduler
(so it is applied at the next step boundary); --sample-steps makes those steps wait inside
train_step, off the CPU, until the sampling profiler has read the loop's stack twice.
"""

import argparse
import os
import sys
import threading
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FEATURES = 8


class Numbers(Dataset):
    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return torch.full((FEATURES,), float(index)), index % 2


# Only a bound for a broken handshake to fail the job instead of hanging it.
PATIENCE_S = 120.0


class StackReads:
    """Counts sys._current_frames() calls: the sampling profiler reads the loop's stack so."""

    def __init__(self):
        self.count = 0
        self._read = sys._current_frames
        sys._current_frames = self._counted

    def _counted(self):
        frames = self._read()
        self.count += 1
        return frames


def train_step(model, optimizer, x, y, sleep_s, stack_reads=None):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if stack_reads is None:
        time.sleep(sleep_s)  # off the CPU: the off_cpu_time profile sees it
        return loss.item()
    # The second read after this point began while this loop ran: its stack ends in train_step
    # (time.sleep is a builtin, not a Python frame). Written out here, not in a helper, so that
    # train_step is the innermost Python function.
    deadline, first = time.monotonic() + PATIENCE_S, stack_reads.count
    while stack_reads.count < first + 2:
        if time.monotonic() > deadline:
            raise SystemExit("the sampling profiler never read the training thread's stack")
        time.sleep(0.001)
    return loss.item()


def wait_for(path):
    """Pauses the loop until `path` exists (the control test's handshake)."""
    while not os.path.exists(path):
        time.sleep(0.01)


def control_handed_over():
    """An Event set once the window scheduler's control thread hands it a control file."""
    from stepscope.torch import _windows

    scheduler = _windows.scheduler()
    handed_over = threading.Event()
    hand_over = scheduler.hand_over_controls

    def hand_over_and_tell(controls):
        hand_over(controls)
        handed_over.set()

    scheduler.hand_over_controls = hand_over_and_tell
    return handed_over


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--eval-steps", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.02)
    parser.add_argument("--wait-at-step", type=int, default=-1)
    parser.add_argument("--wait-for", default="")
    parser.add_argument("--wait-for-control-at", type=int, default=-1,
                        help="pause before this step until a control file reached the window scheduler")
    parser.add_argument("--sample-steps", type=int, nargs="*", default=[],
                        help="steps whose train_step waits for two reads of the sampling profiler")
    parser.add_argument("--run-until", type=float, default=0.0,
                        help="Unix time: repeat epochs until then (--steps is per epoch)")
    args = parser.parse_args()
    print(f"main_pid={os.getpid()}", flush=True)
    stack_reads = StackReads() if args.sample_steps else None
    handed_over = control_handed_over() if args.wait_for_control_at >= 0 else None
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(Numbers(args.steps * args.batch_size), batch_size=args.batch_size,
                        num_workers=args.workers)
    steps = 0
    model.train()
    while True:
        for x, y in loader:
            if steps == args.wait_at_step:
                print(f"waiting_at={steps}", flush=True)
                wait_for(args.wait_for)
            if steps == args.wait_for_control_at:
                print(f"waiting_at={steps}", flush=True)
                if not handed_over.wait(PATIENCE_S):
                    raise SystemExit("no control file reached the window scheduler")
            train_step(model, optimizer, x, y, args.sleep, stack_reads if steps in args.sample_steps else None)
            steps += 1
        if time.time() >= args.run_until:
            break
    if args.eval_steps:
        model.eval()
        eval_loader = DataLoader(Numbers(args.eval_steps * args.batch_size), batch_size=args.batch_size,
                                 num_workers=0)
        with torch.no_grad():
            for x, _ in eval_loader:
                model(x)
    print(f"steps={steps}", flush=True)


if __name__ == "__main__":
    main()
