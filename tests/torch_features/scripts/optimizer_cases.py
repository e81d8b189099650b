"""Optimizer steps as torch users write them (argv[1]); plain PyTorch, no stepscope calls.

  closure      SGD.step(closure) in a DataLoader loop: forward and backward run in the closure
  lbfgs        LBFGS.step(closure) (several closure calls per step) in a loop without a
               DataLoader: the model's forward marks steps, the closure's must not
  grad_scaler  torch.amp.GradScaler on the CPU; batch 3's loss is made infinite, so the scaler
               skips that optimizer step (torch >= 2.3)
  scheduler    an LR scheduler (OneCycleLR) that wraps optimizer.step, stepped every batch
  accumulate   gradient accumulation: the optimizer steps every 4th batch

Each runs 12 TRAIN batches; the last line is JSON with what the script saw: {"batches": n,
"optimizer_steps": n, "skipped": [batch indices whose update was skipped]}.
"""

import json
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

case = sys.argv[1]
torch.manual_seed(0)
BATCHES = 12


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)

    def forward(self, x):
        return self.linear(x)


model = TinyNet()
loader = DataLoader(TensorDataset(torch.randn(BATCHES * 4, 4), torch.randn(BATCHES * 4, 1)), batch_size=4)
seen = {"batches": 0, "optimizer_steps": 0, "skipped": []}


def loss_of(x, y):
    return nn.functional.mse_loss(model(x), y)


def closure_for(optimizer, x, y):
    def closure():
        optimizer.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        return loss

    return closure


if case == "closure":
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        optimizer.step(closure_for(optimizer, x, y))
        seen["batches"] += 1
        seen["optimizer_steps"] += 1
elif case == "lbfgs":
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=3)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for _ in range(BATCHES):
        model(x)  # the loop's own forward: it marks the step
        optimizer.step(closure_for(optimizer, x, y))
        seen["batches"] += 1
        seen["optimizer_steps"] += 1
elif case == "grad_scaler":
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu")
    for index, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = loss_of(x, y)
        if index == 3:
            loss = loss * float("inf")
        scale_before = scaler.get_scale()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if scaler.get_scale() < scale_before:
            seen["skipped"].append(index)
        else:
            seen["optimizer_steps"] += 1
        seen["batches"] += 1
elif case == "scheduler":
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=BATCHES)
    for x, y in loader:
        optimizer.zero_grad()
        loss_of(x, y).backward()
        optimizer.step()
        scheduler.step()
        seen["batches"] += 1
        seen["optimizer_steps"] += 1
elif case == "accumulate":
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    for index, (x, y) in enumerate(loader):
        (loss_of(x, y) / 4).backward()
        if index % 4 == 3:
            optimizer.step()
            optimizer.zero_grad()
            seen["optimizer_steps"] += 1
        seen["batches"] += 1
else:
    sys.exit(f"unknown case {case!r}")
print(json.dumps(seen))
