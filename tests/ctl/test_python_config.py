"""stepscope._config on its own: load_run_config() layering and validation (the launcher's model,
through stepscope._core), ControlWatcher.poll() and record_applied(), as the detail-window engine
uses them."""
import json
import os
import subprocess

import pytest

from ctl_helpers import PYTHON

_config = pytest.importorskip("stepscope._config", reason="needs the built stepscope package on PYTHONPATH")


def window(kind, start, count, **extra):
    w = {"kind": kind, "start_step": start, "num_steps": count, "start_unix_time": None, "duration_s": None,
         "phase": "TRAIN", "profiler": None, "timer": None}
    if kind == "python":
        w.update(profiler="cprofile", timer="cycle")
    w.update(extra)
    return w


@pytest.fixture
def clean_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("STEPSCOPE_"):
            monkeypatch.delenv(name)
    return monkeypatch


def write_config(tmp_path, **fields):
    config = {"schema_version": 1, "out": "runs", "job": "j", "node": "n", "interval": "500ms",
              "interval_ns": 500_000_000, "torch": True, "python_profiler": None,
              "detail": [window("operators", 5, 1), window("python", 9, 3)],
              "sources": {"detail": "config file", "torch": "default"}}
    config.update(fields)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def test_defaults_without_a_launcher_are_sagemakers(clean_env):
    config = _config.load_run_config()
    assert config["torch"] is True
    assert config["detail"] == [window("operators", 5, 1), window("dataloader", 7, 1), window("python", 9, 3)]
    assert config["sources"]["detail"] == "default"


def test_environment_applies_without_a_launcher(clean_env):
    clean_env.setenv("STEPSCOPE_PYTHON_STEPS", "20:2")
    clean_env.setenv("STEPSCOPE_DATALOADER_STEPS", "none")
    clean_env.setenv("STEPSCOPE_PYTHON_PROFILER", "sampling")
    clean_env.setenv("STEPSCOPE_TORCH", "0")
    config = _config.load_run_config()
    assert config["torch"] is False
    assert config["detail"] == [window("operators", 5, 1), window("python", 20, 2, profiler="sampling", timer=None)]
    assert config["sources"]["detail"] == "environment"


def test_the_launchers_file_is_read_and_keyword_arguments_win(clean_env, tmp_path):
    clean_env.setenv("STEPSCOPE_CONFIG", write_config(tmp_path))
    clean_env.setenv("STEPSCOPE_PYTHON_STEPS", "77:7")  # already folded in by the launcher: ignored
    config = _config.load_run_config()
    assert config["detail"] == [window("operators", 5, 1), window("python", 9, 3)]
    assert config["sources"]["detail"] == "config file"

    config = _config.load_run_config(python_steps=(30, 1), torch=False, detailed_steps=None)
    assert config["detail"] == [window("operators", 5, 1), window("python", 30, 1)]
    assert config["torch"] is False
    assert config["sources"]["detail"] == "keyword argument"
    assert config["sources"]["torch"] == "keyword argument"

    config = _config.load_run_config(detail=[{"kind": "dataloader", "start_unix_time": 1790000000, "duration_s": 5}],
                                      python_profiler="sampling", python_steps="3:1")
    assert config["detail"] == [
        window("dataloader", None, None, start_unix_time=1790000000.0, duration_s=5.0, phase=None),
        window("python", 3, 1, profiler="sampling", timer=None)]
    assert _config.load_run_config(detail=[])["detail"] == []


def test_a_profiler_from_the_file_applies_to_windows_added_by_keywords(clean_env, tmp_path):
    clean_env.setenv("STEPSCOPE_CONFIG", write_config(
        tmp_path, python_profiler="sampling", detail=[window("python", 9, 3, profiler="sampling", timer=None)]))
    config = _config.load_run_config(python_steps="40:2")
    assert config["detail"] == [window("python", 40, 2, profiler="sampling", timer=None)]


@pytest.mark.parametrize("overrides, expected", [
    ({"colour": "red"}, "keyword argument 'colour': unknown setting"),
    ({"interval": "1s"}, "unknown setting"),
    ({"python_steps": "9-11"}, "keyword argument python_steps: '9-11' is not START:COUNT"),
    ({"python_steps": (5, 0)}, "num_steps must be at least 1"),
    ({"detailed_steps": "-1:2"}, "is not START:COUNT"),
    ({"python_profiler": "perf"}, "unknown Python profiler 'perf'"),
    ({"torch": "maybe"}, "torch must be true or false"),
    ({"detail": {"kind": "python"}}, "detail must be a list of windows"),
    ({"detail": [{"kind": "python"}]}, "detail window 1: the window has no start"),
    ({"detail": [{"kind": "python", "start_step": 1, "num_steps": 1, "start_unix_time": 5, "duration_s": 1}]},
     "not both"),
    ({"detail": [{"kind": "python", "start_step": -1, "num_steps": 1}]}, "is negative"),
    ({"detail": [{"kind": "tpu", "start_step": 1, "num_steps": 1}]}, "unknown detail kind 'tpu'"),
    ({"detail": [{"kind": "operators", "start_step": 1, "num_steps": 1, "timer": "cpu_time"}]},
     "python windows only"),
    ({"detail": [{"kind": "python", "start_step": 1, "num_steps": 1, "timer": "wall"}]}, "unknown timer 'wall'"),
    ({"detail": [{"kind": "python", "start_step": 1, "num_steps": 1, "profiler": "sampling", "timer": "cpu_time"}]},
     "cprofile profiler only"),
    ({"detail": [{"kind": "python", "start_step": 1, "num_steps": 1, "phase": "WARMUP"}]}, "unknown phase"),
    ({"detail": [{"kind": "python", "start_step": 1.5, "num_steps": 1}]}, "whole number"),
    ({"detail": [{"kind": "python", "start_step": True, "num_steps": 1}]}, "whole number"),
    ({"detail": [{"kind": "python", "start_step": 1, "num_steps": 1, "colour": 1}]}, "unknown key 'colour'"),
])
def test_invalid_values_raise_one_line_value_errors(clean_env, overrides, expected):
    with pytest.raises(ValueError) as error:
        _config.load_run_config(**overrides)
    assert expected in str(error.value)
    assert "\n" not in str(error.value)


def test_a_missing_or_broken_launcher_file_is_an_error_naming_it(clean_env, tmp_path):
    clean_env.setenv("STEPSCOPE_CONFIG", str(tmp_path / "absent.json"))
    with pytest.raises(ValueError, match="STEPSCOPE_CONFIG '.*absent.json' cannot be read"):
        _config.load_run_config()
    (tmp_path / "bad.json").write_text('{"schema_version": 1, "detail": "x"}')
    clean_env.setenv("STEPSCOPE_CONFIG", str(tmp_path / "bad.json"))
    with pytest.raises(ValueError, match="STEPSCOPE_CONFIG '.*bad.json': detail must be a list of windows"):
        _config.load_run_config()


def test_a_config_file_in_stepscope_config_is_layered_like_the_launchers(clean_env, tmp_path):
    (tmp_path / "stepscope.toml").write_text('[[detail]]\nkind = "python"\nstart_step = 4\nnum_steps = 1\n')
    clean_env.setenv("STEPSCOPE_CONFIG", str(tmp_path / "stepscope.toml"))
    clean_env.setenv("STEPSCOPE_DATALOADER_STEPS", "6:1")  # the environment is above the file
    config = _config.load_run_config()
    assert config["detail"] == [window("python", 4, 1), window("dataloader", 6, 1)]
    assert config["sources"]["detail"] == "environment"
    (tmp_path / "stepscope.toml").write_text('colour = "red"\n')
    with pytest.raises(ValueError, match="stepscope.toml': unknown setting 'colour'"):
        _config.load_run_config()


def test_windows_are_normalised_by_the_launchers_rules(clean_env):
    assert _config.normalize_window({"kind": "python", "start_step": 2, "num_steps": 1, "phase": "eval"}) == \
        window("python", 2, 1, phase="EVAL")
    assert _config.default_detail() == [window("operators", 5, 1), window("dataloader", 7, 1), window("python", 9, 3)]
    with pytest.raises(ValueError, match="^control 3: unknown timer 'wall'"):
        _config.normalize_window({"kind": "python", "start_step": 1, "num_steps": 1, "timer": "wall"}, "control 3")
    with pytest.raises(ValueError, match="^w: Out of range float values are not JSON compliant"):
        _config.normalize_window({"kind": "python", "start_unix_time": float("nan"), "duration_s": 1}, "w")


def write_control(node_dir, sequence, **body):
    control_dir = node_dir / "control"
    control_dir.mkdir(exist_ok=True)
    (control_dir / f".tmp-{sequence}").write_text(json.dumps({"sequence": sequence, "time_ns": 1, **body}))
    os.rename(control_dir / f".tmp-{sequence}", control_dir / f"{sequence}.json")


def test_control_watcher_returns_each_new_control_once_in_order(tmp_path, capsys):
    watcher = _config.ControlWatcher(str(tmp_path))
    assert watcher.poll() == []  # no control directory yet
    write_control(tmp_path, 2, interval_ns=100_000_000)
    write_control(tmp_path, 1, detail=[{"kind": "python", "start_step": 300, "num_steps": 2}])
    (tmp_path / "control" / "notes.txt").write_text("ignored")
    controls = watcher.poll()
    assert controls == [
        {"sequence": 1, "time_ns": 1, "detail": [window("python", 300, 2)]},
        {"sequence": 2, "time_ns": 1, "interval_ns": 100_000_000},
    ]
    assert watcher.poll() == []
    write_control(tmp_path, 3, detail="not a list")
    write_control(tmp_path, 4, detail=[{"kind": "operators", "start_step": 1, "num_steps": 1}])
    assert [c["sequence"] for c in watcher.poll()] == [4]
    assert "control file" in capsys.readouterr().err
    # A second watcher (another process) sees the whole history.
    assert [c["sequence"] for c in _config.ControlWatcher(str(tmp_path)).poll()] == [1, 2, 4]
    assert [c["sequence"] for c in _config.ControlWatcher(str(tmp_path), after_sequence=2).poll()] == [4]


def test_polling_an_unchanged_directory_costs_one_stat(tmp_path):
    write_control(tmp_path, 1, interval_ns=100_000_000)
    stat = os.stat(tmp_path / "control")
    os.utime(tmp_path / "control", ns=(stat.st_atime_ns, stat.st_mtime_ns // 10**9 * 10**9 + 123))
    watcher = _config.ControlWatcher(str(tmp_path))
    assert len(watcher.poll()) == 1
    for _ in range(100):
        assert watcher.poll() == []
    assert watcher.listings == 1


def test_record_applied_is_a_no_op_without_recording_and_a_control_instant_with_it(tmp_path):
    _config.record_applied({"sequence": 1, "time_ns": 1, "interval_ns": 5})  # not recording here
    script = (
        "import stepscope\n"
        "from stepscope import _config\n"
        f"stepscope.start(out={str(tmp_path)!r}, job='j', node='n')\n"
        "_config.record_applied({'sequence': 7, 'time_ns': 1, 'detail': [{'kind': 'python'}]})\n"
        "stepscope.stop()\n")
    subprocess.run([PYTHON, "-c", script], check=True, timeout=60)
    from stepscope import _core
    events = _core.read_run(str(tmp_path / "j"))["events"]
    (control,) = [e for e in events if e["name"] == "Control"]
    assert control["kind"] == "instant"
    assert control["args"]["sequence"] == 7
    assert json.loads(control["args"]["changes"]) == {"detail": [{"kind": "python"}]}
