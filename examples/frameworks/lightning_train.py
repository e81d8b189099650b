"""Trains a tiny regression model with the PyTorch Lightning Trainer on the CPU in a few seconds:
a validation loop every epoch, gradient accumulation, and a sized (map-style) or iterable
training set. Plain Lightning: no stepscope calls. Profile it with

    stepscope run -- python examples/frameworks/lightning_train.py --loader iterable

Its last line says what Lightning processed, counted by a callback:
``train_batches=<n> val_batches=<n> optimizer_steps=<n>`` (validation batches include the
sanity check Lightning runs before training).
"""

import argparse

import pytorch_lightning as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, TensorDataset

FEATURES = 16


def synthetic(samples, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, FEATURES, generator=g)
    return x, x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(samples, 1, generator=g)


class Stream(IterableDataset):
    """An iterable training set of unknown length, as streamed data is."""

    def __init__(self, samples, seed):
        self.x, self.y = synthetic(samples, seed)

    def __iter__(self):
        return iter(zip(self.x, self.y))


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_index):
        x, y = batch
        return nn.functional.mse_loss(self(x), y)

    def validation_step(self, batch, batch_index):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


class Counts(pl.Callback):
    def __init__(self):
        self.train_batches = self.val_batches = self.optimizer_steps = 0

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_index):
        self.train_batches += 1

    def on_validation_batch_end(self, trainer, module, outputs, batch, batch_index, dataloader_index=0):
        self.val_batches += 1

    def on_before_optimizer_step(self, trainer, module, optimizer):
        self.optimizer_steps += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loader", choices=("sized", "iterable"), default="sized")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--accumulate", type=int, default=4)
    args = parser.parse_args()

    torch.manual_seed(0)
    if args.loader == "sized":
        train = DataLoader(TensorDataset(*synthetic(args.samples, 1)), batch_size=args.batch_size, shuffle=True)
    else:
        train = DataLoader(Stream(args.samples, 1), batch_size=args.batch_size)
    val = DataLoader(TensorDataset(*synthetic(args.samples // 4, 2)), batch_size=args.batch_size)
    counts = Counts()
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, accumulate_grad_batches=args.accumulate,
                         callbacks=[counts], logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(Regressor(), train, val)
    print(f"train_batches={counts.train_batches} val_batches={counts.val_batches} "
          f"optimizer_steps={counts.optimizer_steps}")


if __name__ == "__main__":
    main()
