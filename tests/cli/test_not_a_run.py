"""A directory that is not a stepscope run is refused (issue 12): a random manifest.json beside
garbage logs loaded as an empty run, and rules, report, summary and export exited 0 printing
"NoIssuesFound" and "started 1970-01-01". What makes a run is decided in one place
(src/store/run_directory.h): a node manifest with the fields docs/formats.md requires, or a
stream file stepscope wrote, or an imported run's model.stepscope."""
import os
import subprocess

import pytest

COMMANDS = [["rules"], ["report"], ["summary"], ["export", "--format", "csv"], ["info"]]

NOT_A_MANIFEST = '{"name": "my-project", "version": "1.0.0", "dependencies": {}}\n'


def garbage_run(root):
    """A job directory with one node holding a random manifest.json and garbage logs."""
    node = root / "job" / "algo-1"
    node.mkdir(parents=True)
    (node / "manifest.json").write_text(NOT_A_MANIFEST)
    (node / "system.log").write_bytes(os.urandom(4096))
    (node / "proc-12-abcd.log").write_text("2024-01-01 INFO training started\n" * 50)
    return root / "job"


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_random_manifest_and_garbage_logs_are_refused(cli, tmp_path, command):
    run = garbage_run(tmp_path)
    result = subprocess.run([cli, command[0], str(run), *command[1:]], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr == (
        f"stepscope {command[0]}: '{run}' holds no stepscope run: '{run}/algo-1/manifest.json' is not a node manifest "
        "(no schema_version, node, status, clock) and no stream file beside it starts with a stepscope header, and no "
        "model.stepscope; pass the directory that `stepscope run` or `stepscope import` printed (<out>/<job>)\n")
    assert not (run / "rules").exists() and not (run / "report.html").exists() and not (run / "export").exists()


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_garbage_logs_without_a_manifest_are_refused(cli, tmp_path, command):
    node = tmp_path / "job" / "algo-1"
    node.mkdir(parents=True)
    (node / "system.log").write_bytes(b"\0" * 64)
    result = subprocess.run([cli, command[0], str(node), *command[1:]], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1
    assert f"'{node}' holds no stepscope run: no stream file in '{node}' starts with a stepscope header" in result.stderr
