"""Trains a small MLP on synthetic data with a DataLoader: the plainest PyTorch loop.

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/plain_loop.py --epochs 2

Each batch of each epoch is one TRAIN step: epochs * ceil(samples / batch_size) steps
(floor with --drop-last).
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=320)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--pin-memory", action="store_true")
    parser.add_argument("--drop-last", action="store_true")
    return parser.parse_args()


def make_dataset(samples, seed):
    """Two Gaussian blobs, 16 features, labels 0/1; the same for a given seed."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(2, (samples,), generator=g)
    features = torch.randn(samples, 16, generator=g) + labels[:, None].float()
    return TensorDataset(features, labels)


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = DataLoader(make_dataset(args.samples, seed=1), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.num_workers, pin_memory=args.pin_memory,
                        drop_last=args.drop_last)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    iterations = 0
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for features, labels in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(features), labels)
            loss.backward()
            optimizer.step()
            total += loss.item()
            iterations += 1
        print(f"epoch {epoch}: loss {total / len(loader):.4f}")
    print(f"train_iterations={iterations}")


if __name__ == "__main__":
    main()
