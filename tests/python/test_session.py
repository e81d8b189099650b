"""stepscope.start/stop for scripts not launched by `stepscope run`."""

import json
import re
import socket

import pytest

import stepscope


def test_start_records_into_out_job_node_and_is_idempotent(tmp_path, run_python, read_run):
    out = tmp_path / "runs"
    result = run_python(f"""
        import json
        import stepscope
        first = stepscope.start(out={str(out)!r}, job="job", node="node-1")
        second = stepscope.start(out="elsewhere", job="other", node="other")
        with stepscope.annotate("work"):
            pass
        stepscope.stop()
        try:
            stepscope.start(out={str(out)!r}, job="again", node="node-1")
            restarted = True
        except RuntimeError as error:
            restarted = str(error)
        print(json.dumps({{"first": first, "second": second, "restarted": restarted}}))
    """)
    out_json = json.loads(result.stdout)
    assert out_json["first"] == str(out / "job" / "node-1")
    assert out_json["second"] == out_json["first"]
    assert "one session per process" in out_json["restarted"]
    run = read_run(out / "job")
    assert run.counts("span") == {"work": 1}
    assert [node["name"] for node in run.data["nodes"]] == ["node-1"]
    assert not (tmp_path / "elsewhere").exists() and not (out / "again").exists()


def test_start_defaults_to_script_timestamp_job_and_host_name(tmp_path, run_python):
    result = run_python("""
        import stepscope
        print(stepscope.start())
    """)
    node_dir = result.stdout.strip()
    root, job, node = node_dir.rsplit("/", 2)
    assert root == str(tmp_path / "stepscope-runs")
    assert re.fullmatch(r"script-\d{8}T\d{6}Z", job), job
    assert node == socket.gethostname()


def test_start_under_stepscope_run_keeps_the_given_directory(record):
    result = record("""
        import stepscope
        print(stepscope.start(out="ignored"))
    """)
    assert result.stdout.strip() == str(result.job_dir / "node")


def test_start_rejects_names_that_are_not_directory_names():
    with pytest.raises(ValueError, match="job name 'a/b' cannot be a directory name"):
        stepscope.start(job="a/b")
    with pytest.raises(ValueError, match="node id '..'"):
        stepscope.start(job="job", node="..")
    assert not stepscope.is_enabled()


def test_start_failure_says_why(run_python):
    result = run_python("""
        import stepscope
        try:
            stepscope.start(out="/proc/stepscope-cannot-write-here")
        except RuntimeError as error:
            print(error)
    """)
    assert "/proc/stepscope-cannot-write-here" in result.stdout
