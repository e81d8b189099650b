"""Explicit detail windows with stepscope.torch.profile(), in a script that starts recording
itself (no `stepscope run`). argv: the output root. Prints the files as JSON."""

import json
import sys
import time

import torch

import stepscope
import stepscope.torch


class StackReads:
    """Counts sys._current_frames() calls: the sampling profiler reads the stack so."""

    def __init__(self):
        self.count = 0
        self._read = sys._current_frames
        sys._current_frames = self._counted

    def _counted(self):
        frames = self._read()
        self.count += 1
        return frames


def spin(seconds, stack_reads=None):
    """Python work on the CPU for `seconds`; with `stack_reads`, also until the profiler has
    read the stack twice, the second read beginning while spin ran, however loaded the machine."""
    end = time.perf_counter() + seconds
    first = stack_reads.count if stack_reads is not None else 0
    total = 0
    while time.perf_counter() < end or (stack_reads is not None and stack_reads.count < first + 2):
        total += 1
    return total


def main():
    stepscope.start(out=sys.argv[1], job="explicit", node="n")
    model = torch.nn.Linear(8, 3)
    with stepscope.torch.profile("operators") as operators:
        model(torch.randn(5, 8))
    with stepscope.torch.profile("python", profiler="sampling") as sampled:
        spin(0.3, StackReads())
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
