"""The run configuration under the real CLI: defaults < config file < environment < flags for
torch and detail windows, as <node>/config.json, the manifest and the job itself see them."""
import json
import os

from ctl_helpers import PYTHON, read_json

# Prints what the job sees: its environment switches and load_run_config(), with and without
# a keyword argument on top.
SHOW_CONFIG = """
import json, os
from stepscope import _config
print(json.dumps({"torch_env": os.environ.get("STEPSCOPE_TORCH"),
                  "config_path": os.environ.get("STEPSCOPE_CONFIG"),
                  "config": _config.load_run_config(),
                  "with_keyword": _config.load_run_config(dataloader_steps="50:1")}))
"""


def window(kind, start, count, **extra):
    w = {"kind": kind, "start_step": start, "num_steps": count, "start_unix_time": None, "duration_s": None,
         "phase": "TRAIN", "profiler": None, "timer": None}
    if kind == "python":
        w.update(profiler="cprofile", timer="cycle")
    w.update(extra)
    return w


def clean_environment(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEPSCOPE_") or k == "STEPSCOPE_CLI"}
    env.update(extra)
    return env


def test_defaults_reach_config_json_the_manifest_and_the_job(run_stepscope, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "d", "--node", "n", "--",
                           PYTHON, "-c", SHOW_CONFIG, env=clean_environment())
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    node_dir = tmp_path / "d" / "n"
    config = read_json(node_dir / "config.json")
    assert seen["config_path"] == str(node_dir / "config.json")
    assert seen["torch_env"] == "1"
    assert config["torch"] is True
    defaults = [window("operators", 5, 1), window("dataloader", 7, 1), window("python", 9, 3)]
    assert config["detail"] == defaults
    assert config["sources"] == {"out": "flag", "job": "flag", "node": "flag", "interval": "default",
                                 "torch": "default", "python_profiler": "default", "detail": "default"}
    assert seen["config"] == config
    assert seen["with_keyword"]["detail"][1] == window("dataloader", 50, 1)
    assert seen["with_keyword"]["sources"]["detail"] == "keyword argument"
    manifest = read_json(node_dir / "manifest.json")
    assert manifest["config"]["torch"] == {"value": True, "from": "default"}
    assert manifest["config"]["detail"] == {"value": defaults, "from": "default",
                                            "windows_from": ["default", "default", "default"]}
    assert manifest["control"] == []


def test_file_then_environment_then_flags_for_detail_windows(run_stepscope, tmp_path):
    (tmp_path / "stepscope.toml").write_text(
        'interval = "1s"\n'
        "[[detail]]\n"
        'kind = "python"\nstart_step = 20\nnum_steps = 2\ntimer = "cpu_time"\n'
        "[[detail]]\n"
        'kind = "operators"\nstart_step = 4\nnum_steps = 1\nphase = "eval"\n'
        "[[detail]]\n"
        'kind = "dataloader"\nstart_unix_time = 1790000000.5\nduration_s = 10\n')
    env = clean_environment(STEPSCOPE_DETAILED_STEPS="6:2", STEPSCOPE_PYTHON_PROFILER="sampling",
                            STEPSCOPE_INTERVAL="200ms")
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "p", "--node", "n",
                           "--config", str(tmp_path / "stepscope.toml"), "--dataloader-steps", "8:1",
                           "--no-torch", "--", PYTHON, "-c", SHOW_CONFIG, env=env)
    assert result.returncode == 0, result.stderr
    node_dir = tmp_path / "p" / "n"
    config = read_json(node_dir / "config.json")
    expected = [
        window("python", 20, 2, profiler="sampling", timer=None),  # file window, environment profiler
        window("operators", 6, 2),                                 # environment replaced the file's
        window("dataloader", 8, 1),                                # flag replaced the file's time window
    ]
    assert config["detail"] == expected
    assert config["torch"] is False
    assert config["interval"] == "200ms" and config["interval_ns"] == 200_000_000
    assert config["python_profiler"] == "sampling"
    assert config["sources"]["interval"] == "environment"
    assert config["sources"]["python_profiler"] == "environment"
    assert config["sources"]["torch"] == "flag"
    assert config["sources"]["detail"] == "flag"

    manifest = read_json(node_dir / "manifest.json")
    assert manifest["config"]["detail"]["value"] == expected
    assert manifest["config"]["detail"]["windows_from"] == ["config file", "environment", "flag"]
    assert manifest["config"]["torch"] == {"value": False, "from": "flag"}
    assert manifest["config"]["python_profiler"] == {"value": "sampling", "from": "environment"}
    assert manifest["config"]["interval"]["from"] == "environment"

    seen = json.loads(result.stdout)
    assert seen["torch_env"] == "0"
    assert seen["config"]["detail"] == expected
    assert seen["with_keyword"]["detail"][2] == window("dataloader", 50, 1)


def test_no_detail_and_a_json_config_file(run_stepscope, tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"detail": [{"kind": "python", "start_step": 1, "num_steps": 1}]}))
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "nd", "--node", "n", "--config",
                           str(tmp_path / "c.json"), "--no-detail", "--python-steps", "3:1", "--",
                           PYTHON, "-c", "pass", env=clean_environment())
    assert result.returncode == 0, result.stderr
    assert read_json(tmp_path / "nd" / "n" / "config.json")["detail"] == [window("python", 3, 1)]
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "none", "--node", "n", "--no-detail", "--",
                           PYTHON, "-c", "pass", env=clean_environment())
    assert result.returncode == 0, result.stderr
    assert read_json(tmp_path / "none" / "n" / "config.json")["detail"] == []


def test_invalid_configuration_is_one_line_and_exit_2_before_the_job_starts(run_stepscope, tmp_path):
    marker = tmp_path / "started"
    job = [PYTHON, "-c", f"open({str(marker)!r}, 'w').write('x')"]
    bad_files = {
        "both.toml": ('[[detail]]\nkind = "python"\nstart_step = 1\nnum_steps = 1\n'
                      'start_unix_time = 1790000000.0\nduration_s = 1\n', "not both"),
        "neither.toml": ('[[detail]]\nkind = "python"\n', "has no start"),
        "zero.toml": ('[[detail]]\nkind = "dataloader"\nstart_step = 1\nnum_steps = 0\n', "at least 1"),
        "negative.json": (json.dumps({"detail": [{"kind": "operators", "start_step": -5, "num_steps": 1}]}),
                          "is negative"),
        "kind.toml": ('[[detail]]\nkind = "tpu"\nstart_step = 1\nnum_steps = 1\n', "unknown detail kind 'tpu'"),
        "timer.toml": ('[[detail]]\nkind = "python"\nstart_step = 1\nnum_steps = 1\ntimer = "wall"\n',
                       "unknown timer 'wall'"),
        "profiler.toml": ('[[detail]]\nkind = "operators"\nstart_step = 1\nnum_steps = 1\nprofiler = "cprofile"\n',
                          "python windows only"),
        "key.toml": ('colour = "red"\n', "unknown setting 'colour'"),
        "interval.toml": ('interval = "1ms"\n', "out of range"),
    }
    cases = [(["--config", str(tmp_path / name)], expected) for name, (_, expected) in bad_files.items()]
    for name, (text, _) in bad_files.items():
        (tmp_path / name).write_text(text)
    cases += [
        (["--python-steps", "9-11"], "--python-steps: '9-11' is not START:COUNT"),
        (["--detailed-steps", "5:0"], "--detailed-steps: num_steps must be at least 1"),
        (["--python-profiler", "perf"], "--python-profiler: unknown Python profiler 'perf'"),
        (["--interval", "100s"], "--interval: interval 100s is out of range"),
    ]
    for args, expected in cases:
        result = run_stepscope("run", "--out", str(tmp_path / "runs"), *args, "--", *job, env=clean_environment())
        assert result.returncode == 2, (args, result.stderr)
        assert expected in result.stderr, (args, result.stderr)
        assert result.stderr.count("\n") == 1, result.stderr
    env_cases = [("STEPSCOPE_PYTHON_STEPS", "x", "STEPSCOPE_PYTHON_STEPS: 'x' is not START:COUNT"),
                 ("STEPSCOPE_TORCH", "maybe", "STEPSCOPE_TORCH: torch must be true or false"),
                 ("STEPSCOPE_DETAIL", "[{\"kind\": 1}]", "STEPSCOPE_DETAIL: detail window 1: kind must be a string")]
    for name, value, expected in env_cases:
        result = run_stepscope("run", "--out", str(tmp_path / "runs"), "--", *job,
                               env=clean_environment(**{name: value}))
        assert result.returncode == 2, (name, result.stderr)
        assert expected in result.stderr, (name, result.stderr)
    assert not marker.exists()
    assert not (tmp_path / "runs").exists()
