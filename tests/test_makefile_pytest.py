"""`make test`'s pytest line (issue 37, CI's minutes): it prints the ten slowest tests and runs
the suite on two pytest-xdist workers by default (PYTEST_WORKERS=2) with each test file whole in
one worker (`--dist loadfile`, so a module's fixtures are set up once); 0 or 1 is the plain run.
Read with `make -n` (prints the commands, runs none)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _pytest_line(*variables: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_WORKERS", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(["make", "-n", "--no-print-directory", "test", *variables], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if " -m pytest" in line]
    assert len(lines) == 1, done.stdout
    return lines[0]


def test_make_test_prints_the_ten_slowest_tests_and_runs_the_files_on_two_workers_each_file_whole_in_one() -> None:
    line = _pytest_line()
    assert "--durations=10" in line.split() and line.endswith(" -n 2 --dist loadfile")


def test_pytest_workers_0_or_1_runs_the_suite_in_one_process() -> None:
    for workers in ("0", "1"):
        line = _pytest_line(f"PYTEST_WORKERS={workers}")
        assert "--durations=10" in line.split()
        assert " -n " not in line and "--dist" not in line
