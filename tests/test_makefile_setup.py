"""`make test`'s set-up where it cannot install (scripts/setup-test-env.sh, tests/conftest.py):
without root or sudo the set-up prints the one command that installs the Debian packages and
goes on (with CI set it stops instead), and without Xvfb or a display the GUI tests skip with
the reason while the others run — before, pytest-xvfb stopped the whole run with a usage
error for the backend pyproject.toml names. Real processes; `id` is a stand-in on PATH (the
set-up's own user check) so this runs as any user."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup-test-env.sh"


def _path_without_the_packages(folder: Path) -> str:
    """A PATH with the shell tools the set-up uses, a non-root `id`, and no Xvfb, xdotool,
    rg, chromium, node, npm or sudo."""
    folder.mkdir()
    for tool in ("bash", "dirname", "sed", "mkdir", "apt-get", "cat"):
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (folder / tool).symlink_to(found)
    (folder / "id").write_text("#!/bin/sh\necho 1000\n", "utf-8")
    (folder / "id").chmod(0o755)
    return str(folder)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "DISPLAY", "PYTEST_ADDOPTS", "LLMSPACE_TEST_SETUP")}
    env.update(extra)
    return env


def test_without_root_the_set_up_prints_the_one_command_to_run_and_goes_on(tmp_path):
    env = _clean_env(PATH=_path_without_the_packages(tmp_path / "bin"))
    proc = subprocess.run(["bash", str(SETUP), str(tmp_path / "no-venv" / "python")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "missing: xvfb (the GUI tests' display), xdotool (real input in the end-to-end tests), ripgrep" in out
    assert "installing them needs root; run this, then make test again:" in out
    assert "    sudo apt-get update && sudo apt-get install -y xvfb xdotool ripgrep chromium nodejs npm\n" in out
    assert "the tests that need them skip until then, and say why." in out


def test_with_ci_set_a_set_up_that_could_not_install_stops_make_test(tmp_path):
    env = _clean_env(PATH=_path_without_the_packages(tmp_path / "bin"), CI="true")
    proc = subprocess.run(["bash", str(SETUP), str(tmp_path / "no-venv" / "python")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1
    assert "CI is set, where those tests fail: stopping here." in proc.stdout


@pytest.mark.slow
def test_without_xvfb_or_a_display_the_gui_tests_skip_with_the_reason_and_the_others_run(tmp_path):
    (tmp_path / "bin").mkdir()
    env = _clean_env(PATH=str(tmp_path / "bin"))  # no Xvfb on it
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
         "tests/ui/test_first_run.py::test_the_welcome_pages_configure_models_opens_the_sheet_while_no_model_can_run",
         "tests/test_errors.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "no display: Xvfb is not installed" in proc.stdout
    assert "1 skipped" in proc.stdout and " passed" in proc.stdout


FAKE_PY = """#!/bin/sh
# the venv's Python: asked for its base interpreter, then to fetch the test models
case "$1" in -c) echo "$FAKE_BASE" ;; *) echo "all: present (stub)" ;; esac
"""
FAKE_BASE = """#!/bin/sh
# `python -m venv DIR`: a venv whose pip waits until the test lets it finish
mkdir -p "$3/bin"
printf '#!/bin/sh\\nwhile [ ! -e "%s" ]; do sleep 0.1; done\\necho installed by the stub\\n' "$RELEASE" > "$3/bin/pip"
chmod +x "$3/bin/pip"
"""


def test_the_set_up_installs_phoenix_in_the_background_and_returns_before_that_install_ends(tmp_path):
    """A copy of the set-up in a folder of its own (it works in its own checkout), with stand-ins
    for the venv's Python and pip: the set-up returns while pip still waits, the install's pid
    and log are in the state folder the Phoenix tests wait on, and `.installed` comes after."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(SETUP, checkout / "scripts" / SETUP.name)
    (checkout / ".ci").mkdir()
    tools = Path(_path_without_the_packages(tmp_path / "bin"))
    for tool in ("rm", "touch", "sleep", "chmod", "printf"):
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (tools / tool).symlink_to(found)
    for name, text in (("py", FAKE_PY), ("base", FAKE_BASE)):
        (tmp_path / name).write_text(text, "utf-8")
        (tmp_path / name).chmod(0o755)
    release = tmp_path / "release"
    env = _clean_env(PATH=str(tools), FAKE_BASE=str(tmp_path / "base"), RELEASE=str(release))
    try:
        _set_up_in_the_background(checkout, tmp_path, env, release)
    finally:
        release.touch()  # never leave the stand-in pip waiting


def _set_up_in_the_background(checkout: Path, tmp_path: Path, env: dict[str, str], release: Path) -> None:
    proc = subprocess.run(["bash", str(checkout / "scripts" / SETUP.name), str(tmp_path / "py")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    venv = checkout / ".cache" / "phoenix-20.26.1"
    state = checkout / ".cache" / "phoenix-20.26.1.install"
    assert "installing arize-phoenix 20.26.1 into .cache/phoenix-20.26.1 in the background" in proc.stdout
    assert not (venv / ".installed").exists()  # pip is still waiting: the set-up did not
    pid = int((state / "pid").read_text("ascii"))
    os.kill(pid, 0)  # the install runs

    again = subprocess.run(["bash", str(checkout / "scripts" / SETUP.name), str(tmp_path / "py")], env=env,
                           capture_output=True, text=True, timeout=120)
    assert "is being installed by an earlier set-up" in again.stdout  # a second set-up does not start another

    release.touch()
    deadline = time.monotonic() + 60
    while not (venv / ".installed").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # the background install is another process
    assert (venv / ".installed").exists()
    assert "installed by the stub" in (state / "log").read_text("utf-8")
    assert not (state / "failed").exists()
