"""Trains with a DataLoader and raises an exception at a given step of epoch 2, like a job
that hits a bad batch.

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/raises_mid_epoch.py --raise-at 3

Epoch 1 completes (ceil(samples / batch_size) steps); in epoch 2 the loop completes
--raise-at steps (0-based index of the failing batch), then, in the next one, raises after the
forward pass. The exception is not caught: Python exits with code 1.
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class BadBatchError(RuntimeError):
    pass


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--raise-at", type=int, default=3,
                        help="0-based index of the batch of epoch 2 that raises")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)
    features = torch.randn(args.samples, 16, generator=g)
    labels = (features.sum(1) > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=args.batch_size, shuffle=True)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    completed = 0
    for epoch in (1, 2):
        model.train()
        for index, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(x), y)
            if epoch == 2 and index == args.raise_at:
                print(f"completed_steps={completed}", flush=True)
                raise BadBatchError(f"bad batch {index} in epoch {epoch}")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            completed += 1


if __name__ == "__main__":
    main()
