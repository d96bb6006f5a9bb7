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
