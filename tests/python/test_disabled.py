"""Without a recorder every call is a no-op: nothing recorded, no files written."""

import json
import os


def test_every_call_is_a_no_op_when_not_recording(tmp_path, run_python):
    result = run_python("""
        import json
        import stepscope

        class Exploding:
            def __float__(self):
                raise AssertionError("a counter value must not be converted when not recording")

        @stepscope.annotate("decorated")
        def work(x):
            return x * 2

        assert not stepscope.is_enabled()
        for i in range(100):
            with stepscope.step():
                with stepscope.annotate("block") as block:
                    assert block.name == "block"
                assert work(i) == 2 * i
                stepscope.annotation_begin("manual")
                stepscope.annotation_end("manual")
                stepscope.mark("mark")
                stepscope.counter("loss", Exploding())
        stepscope.flush()
        print(json.dumps({"enabled": stepscope.is_enabled(), "stats": stepscope.stats()}))
    """)
    out = json.loads(result.stdout)
    assert out == {"enabled": False, "stats": {"events_recorded": 0, "events_dropped": 0, "bytes_written": 0,
                                                "blocks_flushed": 0}}
    assert sorted(os.listdir(tmp_path)) == ["script.py"]  # no run directory anywhere


def test_a_name_that_is_not_a_str_is_still_a_type_error_when_not_recording(run_python):
    result = run_python("""
        import stepscope
        errors = 0
        for call in (lambda: stepscope.annotate(None), lambda: stepscope.mark(3), lambda: stepscope.counter(b"x", 1)):
            try:
                call()
            except TypeError:
                errors += 1
        print(errors)
    """)
    assert result.stdout.strip() == "3"
