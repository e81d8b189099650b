"""Trains a small MLP, then evaluates it after every epoch (model.eval() + torch.no_grad()).

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/train_eval.py --epochs 2

Per epoch: ceil(train_samples / batch_size) TRAIN steps, then ceil(eval_samples / batch_size)
EVAL steps.
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-samples", type=int, default=256)
    parser.add_argument("--eval-samples", type=int, default=96)
    parser.add_argument("--batch-size", type=int, default=32)
    return parser.parse_args()


def make_dataset(samples, seed):
    """Two Gaussian blobs, 16 features, labels 0/1; the same for a given seed."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(2, (samples,), generator=g)
    features = torch.randn(samples, 16, generator=g) + labels[:, None].float()
    return TensorDataset(features, labels)


def train_epoch(model, loader, optimizer, loss_fn):
    model.train()
    for features, labels in loader:
        optimizer.zero_grad()
        loss_fn(model(features), labels).backward()
        optimizer.step()
    return len(loader)


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for features, labels in loader:
            correct += (model(features).argmax(1) == labels).sum().item()
    return correct / len(loader.dataset)


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    train_loader = DataLoader(make_dataset(args.train_samples, seed=1),
                              batch_size=args.batch_size, shuffle=True)
    eval_loader = DataLoader(make_dataset(args.eval_samples, seed=2), batch_size=args.batch_size)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    train_iterations = eval_iterations = 0
    for epoch in range(args.epochs):
        train_iterations += train_epoch(model, train_loader, optimizer, loss_fn)
        accuracy = evaluate(model, eval_loader)
        eval_iterations += len(eval_loader)
        print(f"epoch {epoch}: eval accuracy {accuracy:.1%}")
    print(f"train_iterations={train_iterations} eval_iterations={eval_iterations}")


if __name__ == "__main__":
    main()
