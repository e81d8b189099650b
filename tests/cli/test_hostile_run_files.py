"""Readers open only regular files inside the run directory (issue 12): a manifest or a log that is a
FIFO hung every command, and one that is a link to /dev/zero or /dev/urandom read until it had
eaten 8-16 GB. Each case below is now one line on stderr and exit code 1; the subprocess timeout
is the bound on a hang, not a duration this test asserts."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from conftest import record_job

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it

# A hang shows as subprocess.TimeoutExpired after this long, far more than a refusal takes.
HANG_BOUND_S = 60

TRAINING = """
import stepscope
for _ in range(3):
    with stepscope.step(phase="TRAIN"):
        pass
"""

READERS = [["info"], ["rules"], ["report"], ["summary"], ["export", "--format", "csv"]]


@pytest.fixture(scope="module")
def finished_run(cli, tmp_path_factory):
    return record_job(cli, tmp_path_factory.mktemp("runs"), TRAINING)


def replace(path, make):
    os.unlink(path)
    make(str(path))


def fifo(path):
    os.mkfifo(path)


def link_to(target):
    return lambda path: os.symlink(target, path)


# (case, file in the node directory, how to replace it, what the error says about it)
CASES = [
    ("fifo manifest", "manifest.json", fifo, "is a FIFO, not a regular file"),
    ("fifo log", "system.log", fifo, "is a FIFO, not a regular file"),
    ("manifest linked to /dev/zero", "manifest.json", link_to("/dev/zero"), "is a symbolic link"),
    ("log linked to /dev/urandom", "system.log", link_to("/dev/urandom"), "is a symbolic link"),
]


@pytest.mark.parametrize("case,name,make,says", CASES, ids=[case[0] for case in CASES])
def test_a_hostile_file_in_a_run_is_one_line_for_every_reader(cli, finished_run, tmp_path, case, name, make, says):
    run = tmp_path / "j"
    shutil.copytree(finished_run, run, symlinks=True)
    replace(run / "n" / name, make)
    for command in READERS:
        result = subprocess.run([cli, command[0], str(run), *command[1:]], capture_output=True, text=True,
                                timeout=HANG_BOUND_S, stdin=subprocess.DEVNULL)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, (command, result.stderr)
        assert f"'{run / 'n' / name}' {says}" in lines[0], (command, lines[0])
        assert "Traceback" not in result.stderr and "terminate" not in result.stderr


def test_a_link_out_of_the_run_is_not_followed(cli, finished_run, tmp_path):
    # A manifest that is valid, but another run's: followed, the report would describe that run.
    run = tmp_path / "j"
    shutil.copytree(finished_run, run, symlinks=True)
    elsewhere = tmp_path / "elsewhere.json"
    shutil.copy(run / "n" / "manifest.json", elsewhere)
    replace(run / "n" / "manifest.json", link_to(str(elsewhere)))
    for command in READERS:
        result = subprocess.run([cli, command[0], str(run), *command[1:]], capture_output=True, text=True,
                                timeout=HANG_BOUND_S, stdin=subprocess.DEVNULL)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert result.stderr.count("\n") == 1, (command, result.stderr)
        assert "manifest.json' is a symbolic link, which stepscope does not follow here" in result.stderr, command


def test_a_fifo_control_file_does_not_stall_the_launcher(cli, tmp_path):
    """The launcher's control watcher reads control/<n>.json while the job runs: a FIFO there once
    blocked it for good, and the launcher with it when it stopped the watcher at the end."""
    stop = tmp_path / "stop"
    script = ("import os, sys, time\nprint('ready', flush=True)\ndeadline = time.monotonic() + 120\n"
              "while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:\n    time.sleep(0.02)\n")
    launcher = subprocess.Popen([cli, "run", "--out", str(tmp_path), "--job", "ctl", "--node", "n", "--no-detail",
                                 "--", PYTHON, "-c", script, str(stop)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    node = tmp_path / "ctl" / "n"
    entries = []
    try:
        assert launcher.stdout.readline().strip() == "ready"
        (node / "control").mkdir(exist_ok=True)  # the launcher may not have made it yet
        os.mkfifo(node / "control" / "1.json")
        # The watcher records every control file it meets in the manifest, refused ones too.
        deadline = time.monotonic() + HANG_BOUND_S
        while not entries and time.monotonic() < deadline:
            time.sleep(0.05)
            with open(node / "manifest.json") as f:
                entries = json.load(f)["control"]
    finally:
        stop.write_text("")
    _, stderr = launcher.communicate(timeout=HANG_BOUND_S)
    assert launcher.returncode == 0, stderr
    assert len(entries) == 1 and entries[0]["sequence"] == 1, entries
    assert "1.json' is a FIFO, not a regular file" in entries[0]["error"]
