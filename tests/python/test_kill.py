"""A process killed with SIGKILL keeps every event it reported as recorded."""

import os
import signal

REPORTED_BEFORE_KILL = 2000


def test_sigkill_mid_loop_loses_no_reported_event(tmp_path, spawn_python, read_run):
    job_dir = tmp_path / "job"
    child = spawn_python("""
        import sys
        import stepscope
        count = 0
        while True:
            with stepscope.annotate("tick"):
                pass
            stepscope.mark("tock")
            count += 1
            sys.stdout.write(f"{count}\\n")
            sys.stdout.flush()
    """, job_dir / "node")
    last = 0
    try:
        for line in child.stdout:
            last = int(line)
            if last >= REPORTED_BEFORE_KILL:
                break
        os.kill(child.pid, signal.SIGKILL)
        for line in child.stdout:  # lines already in the pipe were reported too
            last = int(line)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert last >= REPORTED_BEFORE_KILL

    run = read_run(job_dir)
    finished = [span for span in run.spans("tick") if not span["unfinished"]]
    # Killed between the report and the next event (== last), or after recording one more.
    assert last <= len(finished) <= last + 1
    assert last <= len(run.of_kind("instant", "tock")) <= last + 1
    assert len(run.spans("tick")) <= last + 1
    assert run.streams[0]["dropped_events"] == 0
