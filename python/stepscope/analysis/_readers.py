"""System and framework readers over a loaded run (``stepscope._core.load_run``)."""

import collections
import math

import numpy

from stepscope import _core

SystemMetricEvent = collections.namedtuple(
    "SystemMetricEvent", ["type", "name", "dimension", "value", "node_id", "timestamp_us"])
SystemMetricEvent.__doc__ = "One system sample, with SageMaker's fields (Type, Name, Dimension, Value, NodeId, Timestamp)."

FrameworkEvent = collections.namedtuple(
    "FrameworkEvent", ["phase", "name", "category", "node_id", "pid", "tid", "device", "start_us", "end_us",
                       "duration_us", "step", "args"])
FrameworkEvent.__doc__ = ("One framework event: phase as the rules use it ('Step:ModeKeys.TRAIN', 'Forward', "
                          "'cpu_functions', ...), times in µs since the epoch.")


def _framework_event(event):
    return FrameworkEvent(event["phase"], event["name"], event["category"], event["node"], event["pid"],
                          event["tid"], event["device"], event["start_ns"] / 1000.0, event["end_ns"] / 1000.0,
                          (event["end_ns"] - event["start_ns"]) / 1000.0, event["step"], event["args"])


class Run:
    """A run loaded for reading. ``system`` and ``framework`` are its readers."""

    def __init__(self, path):
        self.path = str(path)
        self.model = None
        self.refresh()

    def refresh(self):
        """Makes a live run's new data visible: reads only what was appended since the last read."""
        if self.model is None:
            self.model = _core.load_run(self.path)
        else:
            self.model.refresh()
        self.system = SystemMetricsReader(self.model)
        self.framework = FrameworkReader(self.model)
        return self

    @property
    def nodes(self):
        return self.model.nodes

    @property
    def processes(self):
        """The run's processes with their place in a distributed job: [{node, pid, parent_pid,
        rank, local_rank, world_size, group_rank}], -1 where unknown (model.h ProcessFacts)."""
        return self.model.processes


class SystemMetricsReader:
    """System samples by time range, as SageMaker's SystemMetricsReader."""

    def __init__(self, model):
        self._model = model
        self._series = model.series()

    def series(self, event_type=None, dimension=None, node=None):
        """Descriptions of the series that match (type 'cpu'/'gpu'/..., dimension, node name)."""
        return [s for s in self._series
                if (event_type is None or s["type"] == event_type)
                and (dimension is None or s["dimension"] == dimension)
                and (node is None or s["node"] == node)]

    def values(self, series):
        """(timestamps in µs, values) numpy arrays of one series (an entry of ``series()``)."""
        times_ns, values = self._model.series_values(series["index"])
        return times_ns / 1000.0, values

    def get_events(self, start_time_us, end_time_us, event_type=None, dimension=None, node=None):
        """Samples with start <= timestamp <= end, in time order."""
        events = []
        for series in self.series(event_type, dimension, node):
            times_ns, values = self._model.series_values(series["index"])
            # Compared in µs as floats, the unit callers pass and events carry: a bound taken from
            # an event's timestamp_us includes that event (ns would not survive the round trip).
            times_us = times_ns / 1000.0
            begin = numpy.searchsorted(times_us, start_time_us, side="left")
            end = numpy.searchsorted(times_us, end_time_us, side="right")
            for t, v in zip(times_us[begin:end].tolist(), values[begin:end].tolist()):
                events.append(SystemMetricEvent(series["type"], series["name"], series["dimension"], v,
                                                series["node"], t))
        events.sort(key=lambda e: (e.timestamp_us, e.node_id, e.type, e.name))
        return events

    def latest_timestamp_us(self):
        """The latest time up to which the run's data is complete (SageMaker:
        get_timestamp_of_latest_available_file)."""
        return self._model.complete_until_ns / 1000.0

    def first_timestamp_us(self):
        return self._model.first_ns / 1000.0


class FrameworkReader:
    """Framework events by time range and by step, as SageMaker's framework readers."""

    def __init__(self, model):
        self._model = model

    def get_events(self, start_time_us, end_time_us, phase=None):
        """Events overlapping [start, end] (µs), in start order; only `phase` when given."""
        # Widened to whole ns, then filtered in µs like SystemMetricsReader.get_events.
        events = self._model.events(math.floor(start_time_us * 1000), math.ceil(end_time_us * 1000), phase)
        return [e for e in map(_framework_event, events) if e.end_us >= start_time_us and e.start_us <= end_time_us]

    def steps(self, phase=None):
        """Step events, of one phase ('TRAIN', 'EVAL', ...) when given."""
        return [_framework_event(e) for e in self._model.steps(phase)]

    def events_by_step(self, step, phase="TRAIN", node=None):
        """The events inside step `step` of `phase` (on `node`, or the first node with that step)."""
        for candidate in self._model.steps(phase):
            if candidate["step"] != step or (node is not None and candidate["node"] != node):
                continue
            return [_framework_event(e) for e in self._model.events(candidate["start_ns"], candidate["end_ns"])
                    if e["node"] == candidate["node"] and e["start_ns"] >= candidate["start_ns"]
                    and not e["phase"].startswith("Step:ModeKeys.")]
        return []

    def latest_timestamp_us(self):
        return self._model.complete_until_ns / 1000.0


def open_run(path):
    """Loads a run directory (stepscope's own, or one `stepscope import` wrote) for reading."""
    return Run(path)
