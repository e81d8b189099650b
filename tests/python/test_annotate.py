"""stepscope.annotate as a context manager and decorator, and annotation_begin/end."""

import collections
import contextlib
import functools

import pytest

import stepscope


def contains(outer, inner):
    return outer["tid"] == inner["tid"] and outer["start_ns"] <= inner["start_ns"] <= inner["end_ns"] <= outer["end_ns"]


def test_context_manager_records_nested_spans_with_exact_counts(record):
    result = record("""
        import stepscope
        assert stepscope.is_enabled()
        for _ in range(2):
            with stepscope.annotate("outer"):
                for _ in range(3):
                    with stepscope.annotate("inner") as annotation:
                        assert annotation.name == "inner"
    """)
    run = result.run
    assert run.problems == []
    assert run.counts("span") == {"outer": 2, "inner": 6}
    assert not any(span["unfinished"] for span in run.spans())
    outers = run.spans("outer")
    for inner in run.spans("inner"):
        assert sum(contains(outer, inner) for outer in outers) == 1
    assert len(run.streams) == 1


def test_decorator_with_a_name_and_bare_decorator_named_after_the_qualname(record):
    result = record("""
        import stepscope

        @stepscope.annotate("load")
        def load(i):
            return i * 2

        class Model:
            @stepscope.annotate
            def forward(self, x):
                return x + 1

        @stepscope.annotate
        def helper():
            with stepscope.annotate("inside-helper"):
                return "done"

        assert [load(i) for i in range(4)] == [0, 2, 4, 6]
        model = Model()
        assert [model.forward(i) for i in range(3)] == [1, 2, 3]
        assert helper() == "done"
    """)
    run = result.run
    assert run.problems == []
    assert run.counts("span") == {"load": 4, "Model.forward": 3, "helper": 1, "inside-helper": 1}
    assert not any(span["unfinished"] for span in run.spans())
    (outer,) = run.spans("helper")
    (inner,) = run.spans("inside-helper")
    assert contains(outer, inner)


def test_decorator_keeps_the_function_metadata():
    def load(path, *, mode="r"):
        """Loads a file."""
        return path, mode

    wrapped = stepscope.annotate("load")(load)
    bare = stepscope.annotate(load)
    for function in (wrapped, bare):
        assert function.__name__ == "load"
        assert function.__doc__ == "Loads a file."
        assert function.__wrapped__ is load
        assert function("a", mode="b") == ("a", "b")


def test_exception_inside_annotate_closes_the_span_and_propagates(record):
    result = record("""
        import stepscope

        @stepscope.annotate("failing-call")
        def fail():
            raise KeyError("in decorated")

        caught = 0
        for _ in range(3):
            try:
                with stepscope.annotate("outer"):
                    with stepscope.annotate("boom"):
                        raise ValueError("in block")
            except ValueError:
                caught += 1
        try:
            fail()
        except KeyError:
            caught += 1
        print("caught", caught)
    """)
    assert result.stdout.split() == ["caught", "4"]
    run = result.run
    assert run.problems == []
    assert run.counts("span") == {"outer": 3, "boom": 3, "failing-call": 1}
    assert not any(span["unfinished"] for span in run.spans())


def test_annotation_begin_and_end_pair_on_a_thread(record):
    result = record("""
        import threading
        import stepscope

        def work(count):
            for _ in range(count):
                stepscope.annotation_begin("phase")
                stepscope.annotation_begin("sub")
                stepscope.annotation_end("sub")
                stepscope.annotation_end("phase")

        threads = [threading.Thread(target=work, args=(n,)) for n in (2, 5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        work(1)
    """)
    run = result.run
    assert run.problems == []
    assert run.counts("span") == {"phase": 8, "sub": 8}
    assert not any(span["unfinished"] for span in run.spans())
    phases_per_thread = sorted(collections.Counter(span["tid"] for span in run.spans("phase")).values())
    assert phases_per_thread == [1, 2, 5]


def test_an_annotation_object_can_be_reused_and_nested(record):
    result = record("""
        import stepscope
        reused = stepscope.annotate("reused")
        for _ in range(3):
            with reused:
                pass
        with reused:
            with reused:
                pass
    """)
    run = result.run
    assert run.problems == []
    assert run.counts("span") == {"reused": 5}
    assert not any(span["unfinished"] for span in run.spans())


def test_a_block_entered_before_start_records_no_unmatched_end(tmp_path, run_python, read_run):
    completed = run_python(f"""
        import stepscope
        assert not stepscope.is_enabled()
        with stepscope.annotate("early"):
            stepscope.annotation_begin("early-begin")
            node_dir = stepscope.start(out={str(tmp_path / "runs")!r}, job="job", node="node")
            with stepscope.annotate("inside"):
                pass
        print(node_dir)
    """)
    assert completed.stdout.strip() == str(tmp_path / "runs" / "job" / "node")
    run = read_run(tmp_path / "runs" / "job")
    assert run.counts("span") == {"inside": 1}
    assert run.problems == []


def test_wrong_arguments_raise_type_errors_even_when_not_recording():
    assert not stepscope.is_enabled()
    with pytest.raises(TypeError, match="needs a str name, got int"):
        stepscope.annotate(3)
    with pytest.raises(TypeError, match="annotation_begin"):
        stepscope.annotation_begin(None)
    with pytest.raises(TypeError, match="annotation_end"):
        stepscope.annotation_end(b"bytes")
    with pytest.raises(TypeError, match="mark"):
        stepscope.mark(1.5)
    with pytest.raises(TypeError):
        stepscope.counter("loss")
    with pytest.raises(TypeError, match="decorates one function"):
        stepscope.annotate("x")(1, 2)
    with pytest.raises(TypeError, match="not classes"):
        stepscope.annotate("x")(type("Model", (), {}))


def test_annotate_works_with_contextlib_helpers():
    with contextlib.ExitStack() as stack:
        annotation = stack.enter_context(stepscope.annotate("stacked"))
        assert annotation.name == "stacked"
    assert isinstance(stepscope.annotate("x"), contextlib.AbstractContextManager)
    assert repr(stepscope.annotate("x")) == "stepscope.annotate('x')"
    assert functools.partial(stepscope.annotate, "y")().name == "y"
