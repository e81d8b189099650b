"""Trains a small CNN on synthetic images whose augmentation is CPU-heavy, in two DataLoader
worker processes.

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/augment_workers.py

Each epoch starts its own workers (persistent_workers is off unless --persistent-workers), and
every batch is produced by one worker: epochs * ceil(samples / batch_size) TRAIN steps and as
many worker batches.
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class AugmentedImages(Dataset):
    """Random 3x32x32 images, each fetch blurred `blur_passes` times (the CPU-heavy part),
    randomly cropped and flipped. Deterministic for a given index and epoch seed."""

    def __init__(self, samples, blur_passes):
        self.samples = samples
        self.blur_passes = blur_passes
        self.kernel = torch.full((3, 1, 3, 3), 1.0 / 9.0)

    def __len__(self):
        return self.samples

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        label = int(torch.randint(4, (1,), generator=g))
        image = torch.randn(1, 3, 40, 40, generator=g) + label
        for _ in range(self.blur_passes):
            image = F.conv2d(image, self.kernel, padding=1, groups=3)
        # The global RNG is seeded per worker and epoch by the DataLoader.
        top, left = torch.randint(0, 9, (2,)).tolist()
        image = image[0, :, top:top + 32, left:left + 32]
        if torch.rand(()) < 0.5:
            image = image.flip(-1)
        return image, label


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=192)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--blur-passes", type=int, default=20)
    parser.add_argument("--persistent-workers", action="store_true")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = DataLoader(AugmentedImages(args.samples, args.blur_passes),
                        batch_size=args.batch_size, shuffle=True, num_workers=args.num_workers,
                        persistent_workers=args.persistent_workers and args.num_workers > 0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(4),
                          nn.Flatten(), nn.Linear(8 * 8 * 8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    iterations = 0
    for epoch in range(args.epochs):
        model.train()
        for images, labels in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            iterations += 1
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    print(f"train_iterations={iterations}")


if __name__ == "__main__":
    main()
