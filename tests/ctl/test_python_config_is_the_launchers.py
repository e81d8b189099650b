"""stepscope._config resolves the configuration with the launcher's own model: a script that
calls stepscope.start() itself gets what `stepscope run` would have given it under the same
config file and environment, value for value, and the same one-line message for a bad value."""
import json
import os
import subprocess

from ctl_helpers import PYTHON, read_json

SHOW_CONFIG = "import json\nfrom stepscope import _config\nprint(json.dumps(_config.load_run_config()))\n"


def environment(tmp_path, **extra):
    """No STEPSCOPE_* but the run's names, so job and node need no defaults that differ by design
    (the launcher makes up <script>-<UTC time> and takes the host name; a script has no run yet)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEPSCOPE_") or k == "STEPSCOPE_CLI"}
    env.update(STEPSCOPE_OUT=str(tmp_path / "runs"), STEPSCOPE_JOB="j", STEPSCOPE_NODE="n", **extra)
    return env


def launchers_config(run_stepscope, tmp_path, env, *args):
    """config.json as `stepscope run ARGS` resolved it, checked against what its job read."""
    result = run_stepscope("run", *args, "--", PYTHON, "-c", SHOW_CONFIG, env=env)
    assert result.returncode == 0, result.stderr
    written = read_json(tmp_path / "runs" / "j" / "n" / "config.json")
    assert json.loads(result.stdout) == written  # the job reads the launcher's file as written
    return written


def config_without_launcher(env):
    result = subprocess.run([PYTHON, "-c", SHOW_CONFIG], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_defaults_are_the_launchers(run_stepscope, tmp_path):
    env = environment(tmp_path)
    assert config_without_launcher(env) == launchers_config(run_stepscope, tmp_path, env)


def test_a_config_file_is_read_as_the_launcher_reads_it(run_stepscope, tmp_path):
    config_file = tmp_path / "stepscope.toml"
    config_file.write_text('interval = "2s"\ntorch = false\npython_profiler = "sampling"\n'
                           "[[detail]]\n"
                           'kind = "python"\nstart_step = 20\nnum_steps = 2\n'
                           "[[detail]]\n"
                           'kind = "operators"\nstart_unix_time = 1790000000.5\nduration_s = 10\n')
    env = environment(tmp_path)
    launcher = launchers_config(run_stepscope, tmp_path, env, "--config", str(config_file))
    assert launcher["sources"]["detail"] == "config file"
    assert config_without_launcher(dict(env, STEPSCOPE_CONFIG=str(config_file))) == launcher


def test_environment_overrides_are_the_launchers(run_stepscope, tmp_path):
    env = environment(tmp_path, STEPSCOPE_PYTHON_STEPS="20:2", STEPSCOPE_DATALOADER_STEPS="none",
                      STEPSCOPE_PYTHON_PROFILER="sampling", STEPSCOPE_INTERVAL="200ms", STEPSCOPE_TORCH="0",
                      STEPSCOPE_DETAILED_STEPS="6:3")
    launcher = launchers_config(run_stepscope, tmp_path, env)
    assert launcher["sources"]["detail"] == "environment"
    assert config_without_launcher(env) == launcher


def test_a_bad_value_gets_the_launchers_message(run_stepscope, tmp_path):
    env = environment(tmp_path, STEPSCOPE_PYTHON_STEPS="9-11")
    result = run_stepscope("run", "--", PYTHON, "-c", SHOW_CONFIG, env=env)
    assert result.returncode == 2
    launcher_message = result.stderr.strip().removeprefix("stepscope run: ")
    assert launcher_message.startswith("STEPSCOPE_PYTHON_STEPS: '9-11' is not START:COUNT")
    script = ("from stepscope import _config\n"
              "try:\n    _config.load_run_config()\n"
              "except ValueError as error:\n    print(error)\n")
    python = subprocess.run([PYTHON, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert python.returncode == 0, python.stderr
    assert python.stdout.strip() == launcher_message
