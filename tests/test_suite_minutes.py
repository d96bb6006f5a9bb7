"""The suite's minutes per directory and file in `make test`'s summary (tests/support/minutes.py),
checked on a small suite of its own run by pytest in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import file_order

ROOT = Path(__file__).resolve().parents[1]
SLOW = "import time\n\ndef test_slow():\n    time.sleep(0.4)\n"
FIXTURE = ("import time\nimport pytest\n\n@pytest.fixture(scope='module')\ndef slow_setup():\n    time.sleep(0.4)\n\n"
           "def test_one(slow_setup):\n    pass\n\ndef test_two(slow_setup):\n    pass\n")


def _pytest(folder: Path, *args: str, **extra_env: str) -> str:
    # not this run's xdist worker (its minutes plugin writes only in the run's own process) nor its snapshot
    inherited = {k: v for k, v in os.environ.items()
                 if not k.startswith("PYTEST_XDIST_") and k != "LLMSPACE_TEST_DURATIONS_OUT"}
    env = {**inherited, "PYTHONPATH": str(ROOT), **extra_env}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.support.minutes",
                           "--rootdir", str(folder), "-c", os.devnull, *args, "tests"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _suite(tmp_path: Path) -> Path:
    for rel, text in {"tests/waits/test_sleep.py": SLOW, "tests/setup/test_module_fixture.py": FIXTURE,
                      "tests/quick/test_nothing.py": "def test_nothing():\n    pass\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def _seconds(out: str, name: str) -> float:
    [line] = [line for line in out.splitlines() if line.endswith(f"  {name}")]
    return float(line.split()[0].removesuffix("s"))


def test_with_durations_the_summary_gives_the_minutes_per_directory_and_the_slowest_files_set_up_included(
        tmp_path: Path) -> None:
    out = _pytest(_suite(tmp_path), "--durations=1")
    directories = out.split("minutes per directory")[1].split("slowest 15 test files")[0]
    files = out.split("slowest 15 test files")[1]
    assert _seconds(directories, "tests/waits") >= 0.4 and _seconds(directories, "tests/setup") >= 0.4
    assert _seconds(directories, "tests/quick") < 0.4
    assert _seconds(files, "tests/setup/test_module_fixture.py") >= 0.4  # the module fixture counts in its file
    assert "    2 tests  tests/setup/test_module_fixture.py" in files
    assert "in all (set-up, call and tear-down of each test)" in directories


def test_without_durations_the_summary_stays_as_it_was(tmp_path: Path) -> None:
    out = _pytest(_suite(tmp_path))
    assert "minutes per directory" not in out and "slowest 15 test files" not in out


def test_with_a_durations_file_named_the_seconds_of_every_file_are_written_there_for_the_worker_order(
        tmp_path: Path) -> None:
    out = tmp_path / "durations.json"
    _pytest(_suite(tmp_path / "suite"), LLMSPACE_TEST_DURATIONS_OUT=str(out))
    seconds = file_order.snapshot(out)  # the order's own reader takes it
    assert set(seconds) == {"tests/waits/test_sleep.py", "tests/setup/test_module_fixture.py", "tests/quick/test_nothing.py"}
    assert seconds["tests/waits/test_sleep.py"] >= 0.4 and seconds["tests/quick/test_nothing.py"] < 0.4
