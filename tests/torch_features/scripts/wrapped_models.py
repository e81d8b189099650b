"""A model trained through a wrapper and evaluated unwrapped, in a loop without a DataLoader
(the model's forward marks the steps). argv[1] is the wrapper:

  ddp        DistributedDataParallel (gloo, one process: world size 1)
  dp         DataParallel (on the CPU it calls the model itself)
  compiled   torch.compile(model) (torch 2.x)
  ddp_compiled  torch.compile(DistributedDataParallel(model)) (torch 2.x)

6 TRAIN iterations through the wrapper, then 4 EVAL iterations calling the model itself.
Plain PyTorch, no stepscope calls.
"""

import os
import socket
import sys

import torch
import torch.distributed as dist
from torch import nn

wrapper = sys.argv[1]
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        return self.body(x)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


model = Classifier()
if wrapper.startswith("ddp"):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    dist.init_process_group("gloo", rank=0, world_size=1)
    wrapped = nn.parallel.DistributedDataParallel(model)
    if wrapper == "ddp_compiled":
        wrapped = torch.compile(wrapped)
elif wrapper == "dp":
    wrapped = nn.DataParallel(model)
elif wrapper == "compiled":
    wrapped = torch.compile(model)
else:
    sys.exit(f"unknown wrapper {wrapper!r}")

optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
model.train()
for _ in range(6):
    optimizer.zero_grad()
    nn.functional.cross_entropy(wrapped(x), y).backward()
    optimizer.step()
model.eval()
with torch.no_grad():
    for _ in range(4):
        model(x)
if dist.is_initialized():
    dist.destroy_process_group()
print("done")
