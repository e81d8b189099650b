"""Custom rules in Python, run by stepscope's own ProfilerReport driver beside the built-in ones.

A rule is a class with a name, parameters with defaults, ``evaluate(window)`` called once per
evaluation window (60 s by default, in time order) returning whether its condition held in that
window, and ``report()`` returning what it found (docs/custom-rules.md has a worked example)::

    class SlowForward(stepscope.analysis.Rule):
        name = "SlowForward"
        parameters = {"threshold_ms": 50}

        def __init__(self):
            self.slow = []

        def evaluate(self, window):
            for event in window.events(phase="Forward"):
                if event["end_ns"] - event["start_ns"] > self.params["threshold_ms"] * 1e6:
                    self.slow.append(event)
            return bool(self.slow)

        def report(self):
            return {"triggered": int(bool(self.slow)), "violations": len(self.slow), ...}

``self.params`` holds the parameters after overrides (``--rule SlowForward.threshold_ms=80``).
"""

import importlib.util
import inspect
import os

from stepscope import _core


class Rule:
    """Base class of custom rules; see the module docstring for the contract."""

    name = None
    description = ""
    recommendation = ""
    parameters = {}

    def evaluate(self, window):  # noqa: ARG002 -- documented interface
        return False

    def report(self):
        return {"triggered": 0, "violations": 0, "datapoints": 0, "details": {}, "findings": []}


def load_rules_file(path):
    """Instances of every Rule subclass defined in the Python file `path`. Errors name the file."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"custom rules file {path} does not exist")
    spec = importlib.util.spec_from_file_location(f"stepscope_custom_rules_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rules = [cls() for _, cls in inspect.getmembers(module, inspect.isclass)
             if issubclass(cls, Rule) and cls is not Rule and cls.__module__ == module.__name__]
    if not rules:
        raise ValueError(f"custom rules file {path} defines no subclass of stepscope.analysis.Rule")
    for rule in rules:
        if not rule.name or not isinstance(rule.name, str):
            raise ValueError(f"custom rules file {path}: {type(rule).__name__} needs a `name` (a string)")
    return rules


def run_rules(run, custom=(), parameters=(), only=(), out_dir=None, problems_prefix=""):
    """Evaluates the built-in rules (`only` those named, when given) and the `custom` rule
    instances over the run directory `run`; writes <out_dir>/<Rule>.json and rules.json when
    out_dir is given; returns the rules.json document. With `problems_prefix` (a command's
    name, "stepscope rules: "), the run's data-loss lines go to stderr first."""
    return _core.run_rules(os.fspath(run), list(custom), list(parameters), list(only),
                           os.fspath(out_dir) if out_dir else "", problems_prefix)
