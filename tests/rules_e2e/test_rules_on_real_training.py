"""The rules on real PyTorch training: what they must find, and what they must not (on steps
recorded on a paced clock), and the examples under automatic instrumentation."""

import pytest

from stepscope import _core


@pytest.fixture(scope="module")
def stalled(run_with_rules):
    # Steps of 9 ms; every 15th also stalls 120 ms.
    return run_with_rules("stalls", "--steps", 200, "--stall-every", 15)


@pytest.fixture(scope="module")
def starved(run_with_rules):
    # Each step waits 16 ms for its batch (8 samples of 2 ms, loaded in-process) for 0.6 ms of work.
    return run_with_rules("starved", "--steps", 60, "--stall-every", 0, "--step-ms", 0, "--data-ms", 16)


@pytest.fixture(scope="module")
def healthy(run_with_rules):
    # Steps of 21 ms, of which 0.5 ms wait for the batch: well under DataloaderStarvation's 5 %.
    return run_with_rules("healthy", "--steps", 150, "--stall-every", 0, "--step-ms", 20)


def finding_steps(rule):
    return sorted({step for finding in rule["findings"] for evidence in finding["evidence"]
                   for step in evidence["steps"]})


def test_step_outlier_names_exactly_the_stalled_steps(stalled, tmp_path):
    stalls = stalled.printed("stalled_steps")
    assert len(stalls) == 13
    rule = stalled.rule("StepOutlier")
    assert rule["RuleTriggered"] >= 1
    assert finding_steps(rule) == stalls
    # Each window after the first trigger adds the outliers known then (11 to 13 of them).
    triggered = rule["RuleTriggered"]
    assert 13 + 11 * (triggered - 1) <= rule["Violations"] <= 13 * triggered
    one_window = stalled.rule("StepOutlier", stalled.in_one_window(tmp_path))
    assert (one_window["RuleTriggered"], one_window["Violations"]) == (1, len(stalls))
    assert finding_steps(one_window) == stalls


def test_a_starved_loop_is_reported_with_its_data_wait(starved):
    starvation = starved.rule("DataloaderStarvation")
    (finding,) = starvation["findings"]
    assert finding["severity"] == "critical"
    # The advice follows the host's CPU while the test ran: with free cores, the DataLoader's
    # workers; on a host that other processes (a loaded CI machine) fill, those processes, and
    # never more workers (src/rules/cpu_headroom.h).
    advice = finding["recommendation"]
    if advice.startswith(("Other processes fill this host", "There is no CPU to spare")):
        assert "raise" not in advice.lower(), advice
    else:
        assert "num_workers" in advice, advice
    assert finding["estimated_saving"] > 0.5  # 16 ms of waiting per step of 16.6 ms
    assert all(evidence["steps"] for evidence in finding["evidence"])


def test_a_healthy_run_triggers_neither(healthy):
    assert healthy.rule("StepOutlier")["RuleTriggered"] == 0
    assert healthy.rule("Dataloader")["RuleTriggered"] == 0
    assert healthy.rule("DataloaderStarvation")["findings"] == []


def test_online_results_equal_offline_ones(stalled, starved):
    for run in (stalled, starved):
        online = {r["Rule"]: r for r in run.online["rules"]}
        offline = {r["Rule"]: r for r in run.offline["rules"]}
        assert online.keys() == offline.keys()
        for name in offline:
            assert online[name] == offline[name], name
        assert run.online["status"] == run.offline["status"]


def test_the_examples_run_with_the_rules_online_and_offline(run_with_rules):
    # Automatic instrumentation and real time: which findings come out depends on the machine's
    # load, so only what does not is checked. Each stall and each sample is a sleep, so a stalled
    # step lasts at least the stall, and a step's wait for its 8 samples at least 8 x 2 ms.
    stalls = run_with_rules("example-stalls", "--steps", 60, "--stall-every", 20, example="periodic_stalls.py")
    starved = run_with_rules("example-starved", "--steps", 20, "--num-workers", 0, example="slow_data.py")
    for run, steps in ((stalls, 60), (starved, 20)):
        events = _core.read_run(run.directory)["events"]
        train = {e["step"]: e for e in events if e["kind"] == "step" and e["phase"] == "TRAIN"}
        assert sorted(train) == list(range(steps))
        assert run.online == run.offline
    events = _core.read_run(stalls.directory)["events"]
    train = {e["step"]: e for e in events if e["kind"] == "step" and e["phase"] == "TRAIN"}
    assert stalls.printed("stalled_steps") == [19, 39, 59]
    assert all(train[n]["end_ns"] - train[n]["start_ns"] >= 120_000_000 for n in (19, 39, 59))
    waits = [e for e in _core.read_run(starved.directory)["events"] if e["kind"] == "span"
             and e["name"] == "DataLoaderIter"]
    assert len(waits) >= 20 and sorted(e["end_ns"] - e["start_ns"] for e in waits)[-20] >= 16_000_000
