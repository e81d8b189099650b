"""A plain training loop driven by Hugging Face Accelerate on the CPU, in a few seconds:
`accelerator.prepare()` wraps the model, optimizer and DataLoaders (Accelerate's loader looks
one batch ahead to know which batch is last), `accelerator.accumulate()` accumulates gradients
over `--accumulate` batches, and an evaluation follows each epoch. Plain Accelerate: no
stepscope calls. Profile it with

    stepscope run -- python examples/frameworks/accelerate_loop.py

Its last line says what the loop processed: ``train_batches=<n> eval_batches=<n>
optimizer_steps=<n>`` (optimizer steps: the updates Accelerate really applied).
"""

import argparse

import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def synthetic(samples, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, 16, generator=g)
    return TensorDataset(x, (x.sum(dim=1) > 0).long())


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))

    def forward(self, x):
        return self.net(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accumulate", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=192)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(0)
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=args.accumulate)
    model = Classifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train = DataLoader(synthetic(args.samples, 1), batch_size=args.batch_size, shuffle=True)
    evaluation = DataLoader(synthetic(args.samples // 4, 2), batch_size=args.batch_size)
    model, optimizer, train, evaluation = accelerator.prepare(model, optimizer, train, evaluation)

    train_batches = eval_batches = optimizer_steps = 0
    for _ in range(args.epochs):
        model.train()
        for x, y in train:
            with accelerator.accumulate(model):
                loss = nn.functional.cross_entropy(model(x), y)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
                optimizer_steps += int(accelerator.sync_gradients)
            train_batches += 1
        model.eval()
        with torch.no_grad():
            for x, _ in evaluation:
                model(x)
                eval_batches += 1
    print(f"train_batches={train_batches} eval_batches={eval_batches} optimizer_steps={optimizer_steps}")


if __name__ == "__main__":
    main()
