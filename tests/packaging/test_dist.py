"""The single-file build: with LLMSPACE_BUILD_DIST=1, build it with `make dist`'s command and
run `--self-test` (opens and closes the main window under the test display) and a CLI
command on a fresh LLM_SPACE_HOME. Skipped otherwise (the build takes about a minute)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # tests/packaging/… -> repository root
EXE = ROOT / "build" / "dist" / ("llmspace.exe" if os.name == "nt" else "llmspace")

pytestmark = pytest.mark.skipif(os.environ.get("LLMSPACE_BUILD_DIST") != "1",
                                reason="set LLMSPACE_BUILD_DIST=1 to build and check the executable")


@pytest.fixture(scope="module")
def exe() -> Path:
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--distpath", "build/dist",
           "--workpath", "build/work", "build/llmspace.spec"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert EXE.is_file()
    return EXE


def test_the_executable_passes_its_self_test_on_a_fresh_home(exe, home):
    proc = subprocess.run([str(exe), "--self-test"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "self-test: ok" in proc.stdout
    assert (home / "workspace").is_dir()


def test_the_executable_works_as_the_cli_when_given_arguments(exe, home):
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "usage" in proc.stdout.lower()
