"""A tiny training loop with no stepscope calls, for the operators-window tests on torch 2.x.

A two-layer MLP (8 -> 16 -> 2, batch 4, SGD), one TRAIN step per batch of a DataLoader without
workers. Optionally the script runs torch's profiler itself, the way users do:

  --user-profiler KIND    torch.profiler (torch.profiler.profile) or autograd
                          (torch.autograd.profiler.profile), around steps
  --user-from N --user-steps K   steps N .. N+K-1
  --user-trace PATH       where the script exports its own profiler's Chrome trace

Prints `main_pid=<pid>`, `steps=<n>` and, with a profiler of its own, `user_addmm=<calls>` (from
its own key_averages) once it stopped.
"""

import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def user_profiler(kind):
    if kind == "torch.profiler":
        return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True)
    return torch.autograd.profiler.profile(record_shapes=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--user-profiler", choices=("torch.profiler", "autograd"), default=None)
    parser.add_argument("--user-from", type=int, default=0)
    parser.add_argument("--user-steps", type=int, default=2)
    parser.add_argument("--user-trace", default="")
    args = parser.parse_args()
    print(f"main_pid={os.getpid()}", flush=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(args.steps * 4, 8), torch.randint(0, 2, (args.steps * 4,)))
    profiler = None
    steps = 0
    for x, y in DataLoader(data, batch_size=4):
        if args.user_profiler and steps == args.user_from:
            profiler = user_profiler(args.user_profiler)
            profiler.__enter__()
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss.item()
        steps += 1
        if profiler is not None and steps == args.user_from + args.user_steps:
            profiler.__exit__(None, None, None)
            calls = sum(a.count for a in profiler.key_averages() if a.key == "aten::addmm")
            print(f"user_addmm={calls}", flush=True)
            if args.user_trace:
                profiler.export_chrome_trace(args.user_trace)
            profiler = None
    print(f"steps={steps}", flush=True)


if __name__ == "__main__":
    main()
