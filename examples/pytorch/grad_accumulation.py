"""Trains with gradient accumulation: optimizer.step() every --accumulate batches (and at the
end of each epoch for a partial group).

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/grad_accumulation.py --accumulate 4

Steps are loop iterations, so every batch is one TRAIN step (epochs * batches), with
epochs * ceil(batches / accumulate) optimizer steps among them.
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=336)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--accumulate", type=int, default=4)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)
    features = torch.randn(args.samples, 16, generator=g)
    targets = features.sum(1, keepdim=True) + 0.1 * torch.randn(args.samples, 1, generator=g)
    loader = DataLoader(TensorDataset(features, targets), batch_size=args.batch_size,
                        shuffle=True)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    iterations = optimizer_steps = 0
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        for index, (x, y) in enumerate(loader):
            loss = nn.functional.mse_loss(model(x), y) / args.accumulate
            loss.backward()
            iterations += 1
            if (index + 1) % args.accumulate == 0 or index + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
                optimizer_steps += 1
        print(f"epoch {epoch}: last loss {loss.item() * args.accumulate:.4f}")
    print(f"train_iterations={iterations} optimizer_steps={optimizer_steps}")


if __name__ == "__main__":
    main()
