"""Trains a small MLP whose loop stalls every N steps (a slow checkpoint, a blocking log call):
the case StepOutlier exists for.

Plain PyTorch, no stepscope calls:

    stepscope run -- python3 examples/pytorch/periodic_stalls.py --steps 200 --stall-every 15

Each step does `--step-ms` of work (a sleep plus a small forward/backward, so step times are
steady); steps number k*N - 1 (the N-th, 2N-th, ... TRAIN step, counted from 0) additionally
sleep `--stall-ms`. It prints the stalled step numbers as `stalled_steps=[...]`. With
--stall-every 0 nothing stalls: a healthy run.
"""

import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--stall-every", type=int, default=15)
    parser.add_argument("--stall-ms", type=float, default=120.0)
    parser.add_argument("--step-ms", type=float, default=8.0)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    features = torch.randn(args.steps * 8, 16)
    labels = (features.sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=8)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    stalled = []
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        time.sleep(args.step_ms / 1000.0)
        if args.stall_every > 0 and (step + 1) % args.stall_every == 0:
            time.sleep(args.stall_ms / 1000.0)
            stalled.append(step)
    print(f"stalled_steps={stalled}")


if __name__ == "__main__":
    main()
