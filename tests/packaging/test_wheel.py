"""The wheel that `pip install .` builds (scripts/setup.sh leaves it in build-wheel/dist/), as a
user gets it: installed into a fresh virtual environment, its `stepscope` command profiles that
environment's Python, and profiles an interpreter that has no stepscope of its own through the
package it came with (src/launcher/python_startup.h).

Run by hand after scripts/setup.sh:

    STEPSCOPE_WHEEL_DIR=build-wheel/dist .venv/bin/python -m pytest -q tests/packaging
"""

import glob
import os
import subprocess
import sys
import venv
import zipfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = ("import stepscope, sys; print('enabled=' + str(stepscope.is_enabled())); "
         "print('package=' + stepscope.__file__)")


@pytest.fixture(scope="session")
def wheel():
    directory = os.environ.get("STEPSCOPE_WHEEL_DIR", os.path.join(REPO, "build-wheel", "dist"))
    wheels = glob.glob(os.path.join(directory, "stepscope-*.whl"))
    assert len(wheels) == 1, f"expected one wheel in {directory} (scripts/setup.sh builds it): {wheels}"
    return wheels[0]


def clean_env():
    """The environment of a user's shell: nothing of the build tree or of ctest."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "PYTHONHOME") and not key.startswith("STEPSCOPE_")}


def make_venv(path, with_pip):
    venv.EnvBuilder(with_pip=with_pip, clear=True).create(path)
    return os.path.join(path, "bin")


@pytest.fixture(scope="session")
def installed(wheel, tmp_path_factory):
    """A fresh virtual environment with the wheel installed (no network: --no-index)."""
    bin_dir = make_venv(str(tmp_path_factory.mktemp("user-env")), with_pip=True)
    result = subprocess.run([os.path.join(bin_dir, "python"), "-m", "pip", "install", "--quiet", "--no-index",
                             "--no-deps", "--disable-pip-version-check", wheel],
                            capture_output=True, text=True, env=clean_env(), timeout=300)
    assert result.returncode == 0, result.stderr
    return bin_dir


def profile_probe(bin_dir, python, out, job):
    """`<bin_dir>/stepscope run -- PYTHON -c PROBE` to the end, in a user's clean environment."""
    command = [os.path.join(bin_dir, "stepscope"), "run", "--out", str(out), "--job", job, "--node", "n",
               "--no-detail", "--", python, "-c", PROBE]
    result = subprocess.run(command, capture_output=True, text=True, env=clean_env(), timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert printed(result.stdout, "enabled") == "True", result.stderr
    return printed(result.stdout, "package")


def printed(stdout, key):
    values = [line.split("=", 1)[1] for line in stdout.splitlines() if line.startswith(key + "=")]
    assert values, stdout
    return values[-1]


def test_the_wheel_holds_the_command_the_native_module_and_every_python_file(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert any(name.endswith(".data/scripts/stepscope") for name in names), sorted(names)
    assert any(name.startswith("stepscope/_core.") and name.endswith(".so") for name in names)
    source = os.path.join(REPO, "python")
    expected = {os.path.relpath(os.path.join(root, name), source)
                for root, _, files in os.walk(os.path.join(source, "stepscope")) for name in files
                if name.endswith(".py")}
    assert expected <= names, f"missing from the wheel (python/CMakeLists.txt lists them): {sorted(expected - names)}"


def test_the_installed_command_profiles_its_own_environment(installed, tmp_path):
    package = profile_probe(installed, os.path.join(installed, "python"), tmp_path, "own")
    assert package.startswith(os.path.dirname(installed) + os.sep), package  # the environment's own copy
    info = subprocess.run([os.path.join(installed, "stepscope"), "info", str(tmp_path / "own")],
                          capture_output=True, text=True, env=clean_env(), timeout=60)
    assert info.returncode == 0, info.stderr


def test_an_interpreter_without_stepscope_is_profiled_through_the_commands_package(installed, tmp_path):
    bare = make_venv(str(tmp_path / "bare-env"), with_pip=False)
    package = profile_probe(installed, os.path.join(bare, "python"), tmp_path, "bare")
    assert os.path.join(".python-startup", "fallback", "stepscope") in package, package
    # Only stepscope came along: the bare environment still has nothing else of the command's.
    check = subprocess.run([os.path.join(bare, "python"), "-c", "import stepscope"], capture_output=True,
                           text=True, env=clean_env(), timeout=60)
    assert check.returncode != 0
