"""Writes torch2_cpu_mlp.pt.trace.json.gz and torch2_cpu_mlp.expected.json, the torch 2.x trace
that src/importers/kineto/kineto_window_converter_unittest.cc converts and checks against torch's
own reading of the same profile.

Run with the torch 2.x lane's interpreter from this directory (the files are committed; rerun
only to refresh them for a new torch):

    ../../../.venv/bin/python make_torch2_trace.py

The profile: three training steps of a two-layer MLP (8 -> 16 -> 2, batch 4, SGD) under
``torch.profiler.profile(activities=[CPU], record_shapes=True)``, the way stepscope's operators
window runs it, plus two nested ``record_function("stepscope::nested")`` ranges around an add
(torch drops the inner one of a same-named parent with a single child: EventList._remove_dup_nodes).
The trace is what ``kineto_results.save()`` writes (= ``export_chrome_trace``). The expected
file holds torch's FunctionEvents and ``key_averages()`` in the operators document's units.
"""

import gzip
import json
import os

os.environ.setdefault("KINETO_LOG_LEVEL", "6")

import torch  # noqa: E402
from torch import nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "torch2_cpu_mlp"


def ns(value_us):
    return int(round(float(value_us) * 1000.0))


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.ones(4, 8), torch.zeros(4, dtype=torch.long)

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    step()  # warm-up: first calls allocate
    profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True)
    with profiler:
        for _ in range(3):
            step()
        with torch.profiler.record_function("stepscope::nested"):
            with torch.profiler.record_function("stepscope::nested"):
                x.add(1)
    results = profiler.profiler.kineto_results
    trace_start_ns = results.trace_start_ns()
    saved = os.path.join(HERE, f".{NAME}.json.tmp")
    results.save(saved)
    with open(saved, "rb") as f:
        text = f.read()
    os.unlink(saved)
    # mtime=0: the same trace gives the same bytes.
    with open(os.path.join(HERE, f"{NAME}.pt.trace.json.gz"), "wb") as out:
        with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as compressed:
            compressed.write(text)

    events = profiler.events()
    expected = {
        "torch_version": torch.__version__,
        "trace_start_ns": trace_start_ns,
        "events": sorted(
            ({"name": e.name, "start_ns": trace_start_ns + ns(e.time_range.start),
              "end_ns": trace_start_ns + ns(e.time_range.end), "cpu_ns": ns(e.cpu_time_total),
              "self_cpu_ns": max(0, ns(e.self_cpu_time_total)),
              "shapes": [list(s) if isinstance(s, (list, tuple)) else [] for s in e.input_shapes or []]}
             for e in events),
            key=lambda e: (e["start_ns"], -e["end_ns"], e["name"])),
        "operators": sorted(
            ({"name": a.key, "calls": int(a.count), "cpu_ns": ns(a.cpu_time_total),
              "self_cpu_ns": max(0, ns(a.self_cpu_time_total))} for a in profiler.key_averages()),
            key=lambda r: (-r["self_cpu_ns"], r["name"])),
    }
    with open(os.path.join(HERE, f"{NAME}.expected.json"), "w") as f:
        f.write(_one_item_a_line(expected))
    print(f"{len(events)} events, {len(expected['operators'])} operators, {len(text)} bytes of trace")


def _one_item_a_line(expected):
    """JSON with one event or operator a line: reviewable diffs at a third of indent's size."""
    lines = ["{"]
    for key, value in expected.items():
        if isinstance(value, list):
            items = ",\n".join("  " + json.dumps(item, separators=(",", ":")) for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ],")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines) + "\n}\n"


if __name__ == "__main__":
    main()
