"""Trains and evaluates a small model in one of the ways torch 2.x compiles (argv[1]):

  eager      no compilation (the reference)
  compile    torch.compile(model)
  method     model.compile()
  fullgraph  torch.compile(model, fullgraph=True)
  step       a @torch.compile'd training step (forward, loss, backward, optimizer step)
  export     torch.export.export(model) for evaluation, the eager model for training

2 epochs of 8 TRAIN batches and 8 EVAL batches each. Prints, as the last line, the dynamo
counters as JSON: {"graph_breaks": {reason: count}, "unique_graphs": n, "train_batches": n,
"eval_batches": n} so that a test can compare a run under stepscope with a plain run.
Plain PyTorch: no stepscope calls.
"""

import json
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

mode = sys.argv[1]
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 1)), batch_size=8)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.layers(x)


model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
if mode == "compile":
    trained = evaluated = torch.compile(model)
elif mode == "method":
    model.compile()
    trained = evaluated = model
elif mode == "fullgraph":
    trained = evaluated = torch.compile(model, fullgraph=True)
elif mode == "export":
    trained = model
    evaluated = torch.export.export(model, (torch.randn(8, 8),)).module()
else:
    trained = evaluated = model


def train_step(x, y):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(trained(x), y)
    loss.backward()
    optimizer.step()
    return loss


if mode == "step":
    train_step = torch.compile(train_step)

train_batches = eval_batches = 0
for epoch in range(2):
    model.train()
    for x, y in loader:
        train_step(x, y)
        train_batches += 1
    model.eval()
    with torch.no_grad():
        for x, _ in loader:
            evaluated(x)
            eval_batches += 1

counters = {"graph_breaks": {}, "unique_graphs": 0}
if "torch._dynamo" in sys.modules:
    from torch._dynamo.utils import counters as dynamo_counters

    counters = {"graph_breaks": dict(dynamo_counters["graph_break"]),
                "unique_graphs": dynamo_counters["stats"]["unique_graphs"]}
counters.update(train_batches=train_batches, eval_batches=eval_batches)
print(json.dumps(counters))
