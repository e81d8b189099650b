"""Trains with a DataLoader for a long time, printing a line after each completed step, so a
test can SIGKILL it mid-epoch and check that every reported step was recorded.

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/killed_mid_epoch.py --epochs 3

Each line is `step <global index> epoch <epoch> batch <index>`, flushed at once; a step is
reported once its optimizer step returned.
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=640)
    parser.add_argument("--batch-size", type=int, default=32)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)
    features = torch.randn(args.samples, 32, generator=g)
    labels = (features[:, 0] > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=args.batch_size, shuffle=True)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for index, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            print(f"step {step} epoch {epoch} batch {index}", flush=True)
            step += 1


if __name__ == "__main__":
    main()
