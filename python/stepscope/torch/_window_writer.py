"""Finishes closed detail windows off the training thread.

A window closes at a step boundary on the training thread. Only stopping its collector happens
there; converting what it collected (torch's event parsing, pstats, call trees: milliseconds to
seconds) and compressing and writing the file happen here, on one daemon thread per process, so
that the step after a window is not lengthened by them (it would read as a step outlier).

The thread holds the GIL while it converts, so the training thread may wait for it at Python
level for up to the interpreter's switch interval at a time; the work is spread over the next
steps instead of landing in one.

At exit the scheduler drains the queue (``drain``): every window that closed is written.
"""

import threading

from stepscope import _core

# At exit, how long to wait for windows still being converted before giving up on them.
DRAIN_TIMEOUT_S = 120.0


class BackgroundWriter:
    """Runs submitted jobs in order on one lazily started daemon thread."""

    def __init__(self):
        self._condition = threading.Condition()
        self._jobs = []
        self._busy = False
        self._thread = None

    def submit(self, job):
        with self._condition:
            self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stepscope-detail-writer", daemon=True)
                self._thread.start()
            self._condition.notify_all()

    def _run(self):
        while True:
            with self._condition:
                while not self._jobs:
                    self._condition.wait()
                job = self._jobs.pop(0)
                self._busy = True
            try:
                job()
            finally:
                # Let go of what the job held (a window's profiler data) now, not when the next
                # job arrives.
                job = None
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()

    def drain(self, timeout_s=DRAIN_TIMEOUT_S):
        """Waits until every submitted job ran; False if `timeout_s` passed first."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._jobs and not self._busy, timeout_s)

    def forget_after_fork(self):
        # The thread did not survive fork(); its jobs belong to the parent.
        self._condition = threading.Condition()
        self._jobs = []
        self._busy = False
        self._thread = None


class InlineWriter:
    """Runs each job at once on the calling thread: explicit windows (the caller waits for its
    file) and tests."""

    def submit(self, job):
        job()

    def drain(self, timeout_s=DRAIN_TIMEOUT_S):  # noqa: ARG002 -- same interface
        return True

    def forget_after_fork(self):
        pass


def span_on_this_thread(name, begin_ticks, args):
    """Records a span of stepscope's own work (DetailWindowStop, DetailWindowWrite)."""
    _core.span_at(name, begin_ticks, _core.now())
    _core.args(args)
