"""Trains a small MLP with DistributedDataParallel over gloo on the CPU, one process per rank.

Plain PyTorch, no stepscope calls: start it with torchrun and profile it with

    stepscope run -- torchrun --standalone --nproc-per-node 2 examples/pytorch/train_ddp.py

Each rank reads its own shard (DistributedSampler: ceil(samples / world size) samples per rank
and epoch), so each rank records epochs * ceil(shard / batch_size) TRAIN steps (floor with
--drop-last), and prints its count as `rank=R ... train_iterations=N`.

`--slow-rank R --slow-ms MS` makes rank R sleep MS milliseconds in every step, after its batch
arrived and before its forward pass: a straggler. The other ranks then wait for it in backward,
where DDP all-reduces the gradients, so every rank's steps take about as long as the slow one's.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=640)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--drop-last", action="store_true")
    parser.add_argument("--slow-rank", type=int, default=-1, help="the rank to slow down (-1: none)")
    parser.add_argument("--slow-ms", type=float, default=0.0, help="sleep per step on --slow-rank, in ms")
    return parser.parse_args()


def make_dataset(samples, seed):
    """Two Gaussian blobs, 16 features, labels 0/1; the same on every rank for a given seed."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(2, (samples,), generator=g)
    features = torch.randn(samples, 16, generator=g) + labels[:, None].float()
    return TensorDataset(features, labels)


def main():
    args = parse_args()
    torch.set_num_threads(1)
    # torchrun sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT for each process.
    dist.init_process_group(backend="gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    torch.manual_seed(0)  # the same initial weights on every rank (DDP broadcasts rank 0's anyway)

    dataset = make_dataset(args.samples, seed=1)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=0,
                                 drop_last=args.drop_last)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                        num_workers=args.num_workers, drop_last=args.drop_last)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    slow_s = args.slow_ms / 1000.0 if rank == args.slow_rank else 0.0

    iterations = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total = 0.0
        for features, labels in loader:
            if slow_s > 0:
                time.sleep(slow_s)  # the straggler: work the other ranks must wait for
            optimizer.zero_grad()
            loss = loss_fn(model(features), labels)
            loss.backward()
            optimizer.step()
            total += loss.item()
            iterations += 1
        if rank == 0:
            print(f"epoch {epoch}: loss {total / max(len(loader), 1):.4f}", flush=True)
    print(f"rank={rank} local_rank={local_rank} world_size={world_size} train_iterations={iterations}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
