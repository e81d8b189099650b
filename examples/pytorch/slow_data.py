"""Trains a small MLP on a dataset whose samples are slow to produce (decoding, augmentation),
loaded in the training process: the loop starves for data. The case DataloaderStarvation and
SageMaker's Dataloader rule exist for.

Plain PyTorch, no stepscope calls:

    stepscope run -- python3 examples/pytorch/slow_data.py --num-workers 0

Each sample costs `--sample-ms` (a sleep, like waiting on storage); with --num-workers 0 the
loop waits batch_size * sample_ms per step for a step whose compute takes far less.
"""

import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __init__(self, samples, sample_ms):
        g = torch.Generator().manual_seed(1)
        self.features = torch.randn(samples, 16, generator=g)
        self.labels = (self.features.sum(dim=1) > 0).long()
        self.sample_s = sample_ms / 1000.0

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        time.sleep(self.sample_s)
        return self.features[index], self.labels[index]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--sample-ms", type=float, default=2.0)
    parser.add_argument("--num-workers", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = DataLoader(SlowDataset(args.steps * args.batch_size, args.sample_ms), batch_size=args.batch_size,
                        num_workers=args.num_workers)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        steps += 1
    print(f"train_steps={steps}")


if __name__ == "__main__":
    main()
