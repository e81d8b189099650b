"""stepscope.torch.profile(): explicit windows around any code."""

import json
import os
import subprocess

import lane
import pytest

import stepscope.torch
from conftest import PYTHON, child_env, script
from stepscope.torch import _detail_store


@pytest.fixture(scope="module")
def explicit(tmp_path_factory):
    out = tmp_path_factory.mktemp("explicit")
    result = subprocess.run([PYTHON, script("explicit_profile.py"), str(out)], capture_output=True, text=True,
                            timeout=120, env=child_env())
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr, out


def test_each_block_is_a_window_with_its_own_file(explicit):
    paths, _, out = explicit
    names = sorted(os.listdir(out / "explicit" / "n" / "detail"))
    pid = os.path.basename(paths["operators"]).split("-")[1]
    traces = [f"operators-{pid}-0.pt.trace.json.gz", f"operators-{pid}-3.pt.trace.json.gz"] if lane.KINETO else []
    assert names == sorted([f"operators-{pid}-0.json.zst", f"operators-{pid}-3.json.zst", f"python-{pid}-1.json.zst",
                            f"python-{pid}-2.json.zst", *traces])
    assert paths == {"operators": str(out / "explicit" / "n" / "detail" / f"operators-{pid}-0.json.zst"),
                     "sampled": str(out / "explicit" / "n" / "detail" / f"python-{pid}-1.json.zst"),
                     "profiled": str(out / "explicit" / "n" / "detail" / f"python-{pid}-2.json.zst")}


def test_operators_block(explicit):
    doc = _detail_store.read_window(explicit[0]["operators"])
    assert doc["window"] == {"kind": "operators", "start_step": None, "num_steps": None, "start_unix_time": None,
                             "duration_s": None, "phase": "TRAIN", "profiler": None, "timer": None,
                             "source": "explicit", "index": 0}
    assert (doc["steps"], doc["steps_counted"], doc["complete"]) == (None, 0, True)
    (linear,) = [e for e in doc["events"] if e["name"] == "aten::linear"]
    assert linear["shapes"] == [[5, 8], [3, 8], [3]]
    assert {row["name"]: row["calls"] for row in doc["operators"]}["aten::addmm"] == 1


def test_sampling_block_builds_a_call_tree(explicit):
    doc = _detail_store.read_window(explicit[0]["sampled"])
    assert (doc["profiler"], doc["interval_s"], doc["samples_dropped"]) == ("sampling", 0.01, 0)
    # spin runs until the profiler has read the stack twice (explicit_profile.py): at least one
    # sample lies in it, however loaded the machine. Every sample is in spin, or in the profile()
    # block's own entry and exit around it: under stepscope.torch's code, whatever that code
    # called (the sampler thread's join at the exit ends in threading.py).
    spin = next(f for f in doc["functions"] if f["name"] == "spin")
    assert spin["file"] == script("explicit_profile.py") and spin["cumulative_samples"] >= 1
    tree = {n["id"]: n for n in doc["call_tree"]}
    package = os.path.dirname(stepscope.torch.__file__)
    for node in doc["call_tree"]:
        chain, up = [], node
        while up is not None:
            chain.append(up)
            up = tree.get(up["parent"])
        if node["self_samples"]:
            assert any(n["name"] == "spin" or n["file"].startswith(package) for n in chain), chain
        assert chain[-1]["name"] == "<module>" and chain[-1]["parent"] == -1
    assert sum(n["self_samples"] for n in doc["call_tree"]) == doc["samples"]


def test_cprofile_block_with_one_timer(explicit):
    doc = _detail_store.read_window(explicit[0]["profiled"])
    assert doc["timers"] == ["cpu_time"]
    ((profile),) = doc["profiles"]
    assert (profile["step"], profile["phase"], profile["timer"]) == (None, None, "cpu_time")
    assert [f["calls"] for f in profile["functions"] if f["name"] == "spin"] == [1]


def test_nested_windows_of_one_kind_are_refused(explicit):
    stderr = explicit[1]
    assert stderr == ("nested: stepscope.torch.profile: another operators window is open (window 3: "
                      "operators, explicit); profile one thing at a time\n")


def test_bad_arguments_are_refused_on_creation():
    with pytest.raises(ValueError, match=r"^stepscope.torch.profile: unknown detail kind 'kernels'; use operators, "
                                         r"python, dataloader or gpu$"):
        stepscope.torch.profile("kernels")
    with pytest.raises(ValueError, match=r"^stepscope.torch.profile: timer applies to the cprofile profiler only; "
                                         r"drop it for sampling$"):
        stepscope.torch.profile("python", profiler="sampling", timer="cpu_time")
    with pytest.raises(ValueError, match=r"^stepscope.torch.profile: profiler and timer apply to python windows "
                                         r"only, not to operators windows$"):
        stepscope.torch.profile("operators", timer="cpu_time")
