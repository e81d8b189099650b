"""A small PyTorch training loop with no stepscope calls, for the detail-window tests.

A two-layer MLP (8 -> 16 -> 2) on a map-style dataset, one TRAIN step per batch from a
DataLoader; optionally an evaluation loop afterwards. Each training step calls `train_step`
(which the Python-profiling tests look for) and sleeps --sleep seconds inside it, so that
DataLoader workers certainly produce the next batch while a step runs.

Prints `main_pid=<pid>` and `steps=<n>`.
"""

import argparse
import os
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


def train_step(model, optimizer, x, y, sleep_s):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    time.sleep(sleep_s)  # off the CPU: the off_cpu_time profile sees it
    return loss.item()


def wait_for(path):
    """Pauses the loop until `path` exists (the control test's handshake)."""
    while not os.path.exists(path):
        time.sleep(0.01)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--eval-steps", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.02)
    parser.add_argument("--wait-at-step", type=int, default=-1)
    parser.add_argument("--wait-for", default="")
    parser.add_argument("--run-until", type=float, default=0.0,
                        help="Unix time: repeat epochs until then (--steps is per epoch)")
    args = parser.parse_args()
    print(f"main_pid={os.getpid()}", flush=True)
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
            train_step(model, optimizer, x, y, args.sleep)
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
