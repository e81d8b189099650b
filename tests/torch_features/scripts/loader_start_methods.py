"""A DataLoader with 2 workers started by argv[1] (fork, spawn or forkserver), over a map-style
or an iterable dataset (argv[2]: map | iterable), with persistent workers or not (argv[3]:
persistent | fresh): 2 epochs of 6 batches. Plain PyTorch, no stepscope calls. Prints
"batches=<n>" and "workers=<pids>" (the worker pids that produced batches)."""

import json
import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

EPOCHS, BATCHES, BATCH = 2, 6, 4


class Samples(Dataset):
    def __len__(self):
        return BATCHES * BATCH

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        return torch.randn(8, generator=g), torch.tensor(float(os.getpid()))


class SampleStream(IterableDataset):
    """Each worker streams its own half of the samples."""

    def __iter__(self):
        info = get_worker_info()
        workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
        for index in range(worker, BATCHES * BATCH, workers):
            g = torch.Generator().manual_seed(index)
            yield torch.randn(8, generator=g), torch.tensor(float(os.getpid()))


def main():
    start_method, kind, persistence = sys.argv[1:4]
    dataset = Samples() if kind == "map" else SampleStream()
    loader = DataLoader(dataset, batch_size=BATCH, num_workers=2, multiprocessing_context=start_method,
                        persistent_workers=persistence == "persistent")
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches, worker_pids = 0, set()
    for _ in range(EPOCHS):
        for x, pids in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
            batches += 1
            worker_pids.update(int(p) for p in pids.tolist())
    print(f"batches={batches}")
    print("workers=" + json.dumps(sorted(worker_pids)))


if __name__ == "__main__":
    main()
