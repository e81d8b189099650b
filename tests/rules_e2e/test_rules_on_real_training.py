"""The rules on real PyTorch training: what they must find, and what they must not."""

import pytest


@pytest.fixture(scope="module")
def stalled(run_with_rules):
    return run_with_rules("stalls", "periodic_stalls.py", "--steps", "200", "--stall-every", "15")


@pytest.fixture(scope="module")
def starved(run_with_rules):
    return run_with_rules("starved", "slow_data.py", "--steps", "60", "--num-workers", "0")


@pytest.fixture(scope="module")
def healthy(run_with_rules):
    # Default detail windows on: the steps they disturb must not read as outliers either. Steps of
    # 20 ms: fetching a batch in-process (~0.5 ms) stays well under DataloaderStarvation's 5 %.
    return run_with_rules("healthy", "periodic_stalls.py", "--steps", "150", "--stall-every", "0",
                          "--step-ms", "20", detail=True)


def finding_steps(rule):
    return sorted({step for finding in rule["findings"] for evidence in finding["evidence"]
                   for step in evidence["steps"]})


def test_step_outlier_names_exactly_the_stalled_steps(stalled):
    stalls = stalled.printed("stalled_steps")
    assert len(stalls) == 13
    rule = stalled.rule("StepOutlier")
    assert rule["RuleTriggered"] >= 1
    assert rule["Violations"] == len(stalls)
    assert finding_steps(rule) == stalls


def test_a_starved_loop_is_reported_with_its_data_wait(starved):
    starvation = starved.rule("DataloaderStarvation")
    (finding,) = starvation["findings"]
    assert finding["severity"] == "critical"
    assert "num_workers" in finding["recommendation"]
    assert finding["estimated_saving"] > 0.5  # 16 ms of waiting per step of well under 16 ms
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
