"""Trains on pre-made batch tensors (no DataLoader), then evaluates each epoch.

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/no_dataloader.py

Without a DataLoader, each forward of the model (the first module the script calls) begins a
step: per epoch, --train-batches TRAIN steps then --eval-batches EVAL steps. The loss is an
nn.Module too (nn.CrossEntropyLoss), called at top level: it belongs to the open step.
"""

import argparse

import torch
from torch import nn


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-batches", type=int, default=12)
    parser.add_argument("--eval-batches", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    return parser.parse_args()


def make_batches(count, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    result = []
    for _ in range(count):
        labels = torch.randint(3, (batch_size,), generator=g)
        features = torch.randn(batch_size, 20, generator=g) + labels[:, None].float()
        result.append((features, labels))
    return result


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    train_batches = make_batches(args.train_batches, args.batch_size, seed=1)
    eval_batches = make_batches(args.eval_batches, args.batch_size, seed=2)
    model = nn.Sequential(nn.Linear(20, 48), nn.ReLU(), nn.Linear(48, 3))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    train_iterations = eval_iterations = 0
    for epoch in range(args.epochs):
        model.train()
        for features, labels in train_batches:
            optimizer.zero_grad()
            loss = loss_fn(model(features), labels)
            loss.backward()
            optimizer.step()
            train_iterations += 1
        model.eval()
        correct = 0
        with torch.no_grad():
            for features, labels in eval_batches:
                correct += (model(features).argmax(1) == labels).sum().item()
                eval_iterations += 1
        print(f"epoch {epoch}: eval accuracy {correct / (args.eval_batches * args.batch_size):.1%}")
    print(f"train_iterations={train_iterations} eval_iterations={eval_iterations}")


if __name__ == "__main__":
    main()
