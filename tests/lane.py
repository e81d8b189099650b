"""The interpreter lane a pytest suite runs in, as a pytest plugin (`-p lane`) and a module the
tests import (`import lane`). tests/CMakeLists.txt registers every end-to-end suite once per lane
and sets STEPSCOPE_TEST_LANE:

- ``torch2``: the project's virtual environment (scripts/setup.sh, requirements/dev.txt): torch
  2.x from PyPI, whose profiler is Kineto, plus Lightning, transformers and accelerate;
- ``torch113``: Debian's /usr/bin/python3 with python3-torch 1.13.1, which has no Kineto (its
  profiler exports the legacy autograd JSON array).

Under ctest a lane that is not what it claims (torch missing, the wrong major version) stops the
suite with a usage error instead of letting tests skip: a lane that cannot fail is no lane. Run
by hand without STEPSCOPE_TEST_LANE, the lane is read off the interpreter and nothing is enforced.
"""

import os
import sys

import pytest

TORCH2 = "torch2"
TORCH113 = "torch113"

try:
    import torch as _torch
except ImportError:  # pragma: no cover - only by hand, on an interpreter without torch
    _torch = None

TORCH_VERSION = getattr(_torch, "__version__", None)
# What this interpreter's torch offers (None: no torch).
KINETO = bool(_torch is not None and _torch.autograd.kineto_available())


def _lane_of_interpreter():
    if TORCH_VERSION is None:
        return None
    return TORCH2 if int(TORCH_VERSION.split(".")[0]) >= 2 else TORCH113


LANE = os.environ.get("STEPSCOPE_TEST_LANE") or _lane_of_interpreter()


def is_torch2():
    return LANE == TORCH2


def pytest_configure(config):
    claimed = os.environ.get("STEPSCOPE_TEST_LANE")
    if not claimed:
        return
    if claimed not in (TORCH2, TORCH113):
        raise pytest.UsageError(f"STEPSCOPE_TEST_LANE={claimed!r}: expected {TORCH2} or {TORCH113}")
    actual = _lane_of_interpreter()
    if actual != claimed:
        raise pytest.UsageError(
            f"lane {claimed}: {sys.executable} has torch {TORCH_VERSION or '(none)'}, which is lane "
            f"{actual or '(none)'}; run scripts/setup.sh to (re)create the environments")
    if claimed == TORCH2 and not KINETO:
        raise pytest.UsageError(f"lane {TORCH2}: torch {TORCH_VERSION} in {sys.executable} has no Kineto")


def pytest_report_header(config):
    return f"stepscope lane: {LANE or '(none)'} ({sys.executable}, torch {TORCH_VERSION or '(none)'}, " \
           f"Kineto {'yes' if KINETO else 'no'})"
