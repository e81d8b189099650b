"""The HTML report in headless Chromium: hand-written report models (one node without GPU,
many nodes with GPUs, a compare document) and a real `stepscope run`, rendered to HTML and
opened with the network blocked (check_page.mjs).

Run by hand (from the repository root, after `ninja -C build stepscope render_report_html`):

    STEPSCOPE_CLI=build/src/cli/stepscope \\
    STEPSCOPE_RENDER_HTML=build/tests/render_report_html STEPSCOPE_WEB_DIR=web \\
    STEPSCOPE_REPORT_BROWSER_OUT=build/tests/report_browser \\
        /usr/bin/python3 -m pytest -q tests/report_browser

Screenshots land in $STEPSCOPE_REPORT_BROWSER_OUT. Skips (exit 77) when /usr/bin/chromium is
missing: scripts/setup.sh installs it.
"""

import json
import os
import shutil
import subprocess

import pytest

from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
CHROMIUM = os.environ.get("STEPSCOPE_CHROMIUM", "/usr/bin/chromium")
SKIP_RETURN_CODE = 77


def pytest_sessionstart(session):
    if not os.path.exists(CHROMIUM):
        pytest.exit(f"skipped: {CHROMIUM} is not installed (scripts/setup.sh installs chromium)",
                    returncode=SKIP_RETURN_CODE)


def _env_path(name):
    path = os.environ.get(name)
    if not path:
        pytest.fail(f"{name} must be set (ctest sets it; see conftest.py for running by hand)")
    return path


@pytest.fixture(scope="session")
def out_dir():
    path = _env_path("STEPSCOPE_REPORT_BROWSER_OUT")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def render_html(out_dir):
    """Renders a report-model JSON file into <out_dir>/<name>.html with stepscope::report_html."""
    tool = _env_path("STEPSCOPE_RENDER_HTML")

    def render(model_path, name):
        html = os.path.join(out_dir, name + ".html")
        finished = subprocess.run([tool, model_path, html], capture_output=True, text=True, timeout=60)
        assert finished.returncode == 0, finished.stderr
        return html

    return render


@pytest.fixture(scope="session")
def open_page(out_dir):
    """Opens an HTML report in Chromium; returns check_page.mjs's findings and saves
    <out_dir>/<name>.png."""
    web_dir = _env_path("STEPSCOPE_WEB_DIR")
    node = shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH (scripts/setup.sh installs nodejs)")

    def open_(html, name):
        screenshot = os.path.join(out_dir, name + ".png")
        finished = subprocess.run(
            [node, os.path.join(HERE, "check_page.mjs"), "--web-dir", web_dir, "--screenshot", screenshot, html],
            capture_output=True, text=True, timeout=180)
        assert finished.returncode == 0, f"check_page.mjs failed ({finished.returncode}):\n{finished.stderr}"
        assert os.path.getsize(screenshot) > 10_000, "the screenshot is nearly empty"
        return json.loads(finished.stdout)

    return open_
