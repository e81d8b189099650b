"""Explicit detail windows with stepscope.torch.profile(), in a script that starts recording
itself (no `stepscope run`). argv: the output root. Prints the files as JSON."""

import json
import sys
import time

import torch

import stepscope
import stepscope.torch


def spin(seconds):
    """Python work on the CPU for `seconds`."""
    end = time.perf_counter() + seconds
    total = 0
    while time.perf_counter() < end:
        total += 1
    return total


def main():
    stepscope.start(out=sys.argv[1], job="explicit", node="n")
    model = torch.nn.Linear(8, 3)
    with stepscope.torch.profile("operators") as operators:
        model(torch.randn(5, 8))
    with stepscope.torch.profile("python", profiler="sampling") as sampled:
        spin(0.3)
    with stepscope.torch.profile("python", timer="cpu_time") as profiled:
        spin(0.01)
    try:
        with stepscope.torch.profile("operators"):
            with stepscope.torch.profile("operators"):
                pass
    except RuntimeError as error:
        print(f"nested: {error}", file=sys.stderr)
    print(json.dumps({"operators": operators.path, "sampled": sampled.path, "profiled": profiled.path}))


if __name__ == "__main__":
    main()
