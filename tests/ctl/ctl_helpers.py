"""Helpers shared by the tests of tests/ctl (plain functions; fixtures live in conftest.py)."""
import json
import os
import sys
import time

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it


def read_json(path):
    with open(path) as f:
        return json.load(f)


def wait_for_line(proc, prefix, timeout=60):
    """Reads the job's stdout until a line starting with `prefix`; returns it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"the job ended before printing {prefix!r}: {proc.stderr.read()}")
        if line.startswith(prefix):
            return line.strip()
    raise AssertionError(f"no {prefix!r} from the job within {timeout} s")


def wait_until_running(node_dir, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if read_json(os.path.join(node_dir, "manifest.json")).get("status") == "running":
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"{node_dir} never reached status running")


def wait_until(condition, what, timeout=60):
    """Polls `condition()` until it holds; the timeout only keeps a broken run from hanging."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        time.sleep(0.05)


def wait_for_manifest_controls(node_dir, count, timeout=60):
    """Waits until the launcher recorded `count` control files in the node's manifest; returns them."""
    def controls():
        try:
            return read_json(os.path.join(node_dir, "manifest.json")).get("control", [])
        except (OSError, ValueError):
            return []

    wait_until(lambda: len(controls()) >= count, f"{count} control entries in {node_dir}/manifest.json", timeout)
    return controls()
