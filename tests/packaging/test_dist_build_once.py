"""The executable is built once per test run, also when pytest-xdist runs the suite in several
workers (`make test PYTEST_WORKERS=2`): each worker has its own session, so each asked for the
`exe` fixture's build, and two PyInstaller runs wrote into the same build/dist and build/work
at once. Real processes with one run id, as xdist's workers have; the build is a small script
that counts its runs and holds until the test lets it finish."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BUILD = """
import pathlib, sys, time
out, count, go = map(pathlib.Path, sys.argv[1:4])
with count.open("a") as f:
    f.write("built\\n")
while not go.exists():  # held by the test until both workers are under way
    time.sleep(0.02)
out.write_text("the executable")
"""

WORKER = """
import pathlib, sys
from tests.packaging.conftest import build_once
build, out, count, go, state = sys.argv[1:6]
print("ready", flush=True)
print(build_once([sys.executable, "-c", build, out, count, go], pathlib.Path(out), pathlib.Path(state)), flush=True)
"""


def _wait_for(condition: Callable[[], bool], bound: float, what: str) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {bound:.0f} s waiting for {what}"
        time.sleep(0.02)


def test_two_xdist_workers_of_one_run_build_the_executable_once_and_both_get_it(tmp_path: Path) -> None:
    out, count, go, state = tmp_path / "dist" / "llmspace", tmp_path / "count", tmp_path / "go", tmp_path / "work"
    out.parent.mkdir()
    env = {**os.environ, "PYTEST_XDIST_TESTRUNUID": "run-1", "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-c", WORKER, BUILD, str(out), str(count), str(go), str(state)]
    workers = [subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        _wait_for(count.exists, 120, "the first build to start")
        go.touch()
        results = [worker.communicate(timeout=120) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait(10)
    assert [w.returncode for w in workers] == [0, 0], [err for _out, err in results]
    assert [o.strip() for o, _err in results] == [str(out), str(out)]
    assert count.read_text() == "built\n"  # one build for the run
    assert out.read_text() == "the executable"


def test_the_next_run_builds_again(tmp_path: Path) -> None:
    out, count, go, state = tmp_path / "dist" / "llmspace", tmp_path / "count", tmp_path / "go", tmp_path / "work"
    out.parent.mkdir()
    go.touch()
    for run in ("run-1", "run-2"):
        env = {**os.environ, "PYTEST_XDIST_TESTRUNUID": run, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", WORKER, BUILD, str(out), str(count), str(go), str(state)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert count.read_text() == "built\nbuilt\n"  # a new run checks the code as it is now
