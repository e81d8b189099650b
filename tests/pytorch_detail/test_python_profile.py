"""The cprofile collector's timers (stepscope/torch/_python_profile.py), in this process with fake
clocks that only the profiled code moves, so each figure is exact whatever the machine's load."""

import time

from stepscope.torch import _python_profile

TRAIN = 0


class FakeClocks:
    """Wall time, the process's CPU time and this thread's CPU time, in seconds (binary fractions,
    so sums are exact)."""

    def __init__(self):
        self.wall = self.process = self.thread = 0.0

    def perf_counter(self):
        return self.wall

    def process_time(self):
        return self.process

    def thread_time(self):
        return self.thread

    def time_ns(self):
        return int(self.wall * 1e9)


def test_the_timers_read_the_clocks_they_are_named_after():
    assert _python_profile.TIMER_FUNCTIONS["total_time"] is time.perf_counter
    assert _python_profile.TIMER_FUNCTIONS["cpu_time"] is time.process_time
    assert _python_profile.TIMER_FUNCTIONS["off_cpu_time"] is _python_profile._off_cpu_clock


def test_off_cpu_time_is_wall_time_less_the_threads_cpu_time(monkeypatch):
    clocks = FakeClocks()
    monkeypatch.setattr(_python_profile, "time", clocks)
    clocks.wall, clocks.thread, clocks.process = 10.0, 2.5, 7.0  # other threads' CPU does not count
    assert _python_profile._off_cpu_clock() == 7.5


def test_the_cycle_gives_each_step_the_next_timer(monkeypatch):
    clocks = FakeClocks()
    monkeypatch.setattr(_python_profile, "time", clocks)
    monkeypatch.setitem(_python_profile.TIMER_FUNCTIONS, "total_time", clocks.perf_counter)
    monkeypatch.setitem(_python_profile.TIMER_FUNCTIONS, "cpu_time", clocks.process_time)

    def nap():  # 1/16 s off the CPU; meanwhile another thread burns 1/32 s of the process's CPU
        clocks.wall += 0.0625
        clocks.process += 0.03125

    def burn():  # 1/8 s on this thread's CPU
        clocks.wall += 0.125
        clocks.process += 0.125
        clocks.thread += 0.125

    collector = _python_profile.CProfileCollector("cycle")
    collector.start()
    for number in (9, 10, 11):
        nap()
        burn()
        collector.step_ended(TRAIN, number, number < 11)
    document = collector.stop()()
    assert [(p["step"], p["timer"]) for p in document["profiles"]] == [
        (9, "total_time"), (10, "cpu_time"), (11, "off_cpu_time")]
    cumulative = [{f["name"]: f["cumulative_s"] for f in p["functions"] if f["name"] in ("nap", "burn")}
                  for p in document["profiles"]]
    assert cumulative == [{"nap": 0.0625, "burn": 0.125},     # wall time
                          {"nap": 0.03125, "burn": 0.125},    # the process's CPU, other threads too
                          {"nap": 0.0625, "burn": 0.0}]       # wall time off this thread's CPU
