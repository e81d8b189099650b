"""Trains a small CNN on synthetic images: plain PyTorch, no stepscope calls.

Runs on two CPU cores in about 20 s with the defaults. Profile it, with no change to the
script, with:

    stepscope run -- python3 examples/train_cnn.py

Its last line is machine-readable for benchmarks/overhead_benchmark.py:
``train_loop_seconds=<s> train_steps=<n> median_train_step_ms=<ms> mean_train_step_ms=<ms>
median_train_step_cpu_ms=<ms>``, timed inside the script so process start-up and teardown do
not count (the CPU time is this process's, all its threads, without the loader's workers).
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

NUM_CLASSES = 10
IMAGE_SHAPE = (3, 32, 32)


class SyntheticImages(Dataset):
    """Noisy images of one smooth pattern per class, the same for a given index every time.

    With `augment`, each fetch also does some CPU work like a real input pipeline: a random
    crop of a padded copy, a random horizontal flip and a brightness change.
    """

    def __init__(self, size, seed, augment):
        self.size = size
        self.seed = seed
        self.augment = augment
        # Low-resolution patterns scaled up stay recognisable after a shifted crop.
        g = torch.Generator().manual_seed(1234)
        coarse = torch.randn(NUM_CLASSES, IMAGE_SHAPE[0], 4, 4, generator=g)
        self.patterns = F.interpolate(coarse, size=IMAGE_SHAPE[1:], mode="bilinear",
                                      align_corners=False)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        label = int(torch.randint(NUM_CLASSES, (1,), generator=g))
        image = 0.1 * self.patterns[label] + torch.randn(IMAGE_SHAPE, generator=g)
        if self.augment:
            image = self._augment(image)
        return image, label

    @staticmethod
    def _augment(image):
        # Uses the global RNG, which the DataLoader seeds differently in each worker and epoch.
        padded = F.pad(image, (4, 4, 4, 4), mode="reflect")
        top, left = torch.randint(0, 9, (2,)).tolist()
        image = padded[:, top:top + IMAGE_SHAPE[1], left:left + IMAGE_SHAPE[2]]
        if torch.rand(()) < 0.5:
            image = image.flip(-1)
        return image * (0.8 + 0.4 * torch.rand(()))


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                                 nn.ReLU(inplace=True), nn.MaxPool2d(2))

        self.features = nn.Sequential(block(3, 16), block(16, 32), block(32, 64))  # -> 64x4x4
        self.classifier = nn.Linear(64 * 4 * 4, NUM_CLASSES)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def train_epoch(model, loader, optimizer, step_seconds, step_cpu_seconds):
    """One epoch; appends each step's wall time to `step_seconds`, its CPU time (this process)
    to `step_cpu_seconds`."""
    model.train()
    batches = iter(loader)
    total_loss = 0.0
    for _ in range(len(loader)):
        # The step's time also covers waiting for the batch, so it is the loop's real time.
        step_start, step_cpu_start = time.perf_counter(), time.process_time()
        images, labels = next(batches)
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        step_seconds.append(time.perf_counter() - step_start)
        step_cpu_seconds.append(time.process_time() - step_cpu_start)
    return total_loss / len(loader)


def evaluate(model, loader):
    model.eval()
    batches = iter(loader)
    total_loss, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for _ in range(len(loader)):
            images, labels = next(batches)
            logits = model(images)
            total_loss += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += (logits.argmax(1) == labels).sum().item()
            seen += len(labels)
    return total_loss / seen, correct / seen


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--steps-per-epoch", type=int, default=100,
                        help="training steps per epoch (evaluation takes a quarter as many)")
    parser.add_argument("--lr", type=float, default=0.02)
    args = parser.parse_args()
    for name in ("epochs", "batch_size", "steps_per_epoch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.num_workers < 0:
        parser.error("--num-workers must not be negative")
    return args


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)

    train_set = SyntheticImages(args.steps_per_epoch * args.batch_size, seed=1, augment=True)
    eval_steps = max(1, args.steps_per_epoch // 4)
    eval_set = SyntheticImages(eval_steps * args.batch_size, seed=2, augment=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.num_workers)
    eval_loader = DataLoader(eval_set, batch_size=args.batch_size,
                             num_workers=args.num_workers)

    model = SmallCnn()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    step_seconds, step_cpu_seconds = [], []
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        train_loss = train_epoch(model, train_loader, optimizer, step_seconds,
                                 step_cpu_seconds)
        eval_loss, accuracy = evaluate(model, eval_loader)
        print(f"epoch {epoch}/{args.epochs}: train loss {train_loss:.3f}, "
              f"eval loss {eval_loss:.3f}, eval accuracy {accuracy:.1%}", flush=True)
    loop_seconds = time.perf_counter() - start
    print(f"training took {loop_seconds:.1f} s")
    print(f"train_loop_seconds={loop_seconds:.6f} train_steps={len(step_seconds)} "
          f"median_train_step_ms={1e3 * statistics.median(step_seconds):.4f} "
          f"mean_train_step_ms={1e3 * statistics.fmean(step_seconds):.4f} "
          f"median_train_step_cpu_ms={1e3 * statistics.median(step_cpu_seconds):.4f}", flush=True)


if __name__ == "__main__":
    main()
