"""The single-file executable, built once per test session for every `tests/packaging/` module
that asks for the `exe` fixture (mark such a module `pytestmark = pytest.mark.dist`).

Built with `make dist`'s command only with LLMSPACE_BUILD_DIST=1 (CI sets it); without it the
tests marked `dist` skip. LLMSPACE_DIST_DIR puts the build somewhere other than `build/dist`
(with its work folder beside it), so two checkouts or sessions can build at the same time.
Under pytest-xdist (`make test PYTEST_WORKERS=2`) the workers of one run share one build.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace.jsonio import write_bytes_atomic

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("LLMSPACE_DIST_DIR") or ROOT / "build" / "dist")
WORK = DIST.parent / (DIST.name + "-work") if os.environ.get("LLMSPACE_DIST_DIR") else ROOT / "build" / "work"
EXE = DIST / ("llmspace.exe" if os.name == "nt" else "llmspace")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("LLMSPACE_BUILD_DIST") == "1":
        return
    skip = pytest.mark.skip(reason="set LLMSPACE_BUILD_DIST=1 to build and check the executable")
    for item in items:
        if item.get_closest_marker("dist"):
            item.add_marker(skip)


def build_once(cmd: list[str], exe: Path, state: Path) -> Path:
    """Run the build `cmd`, which makes `exe`, once per test run. Under pytest-xdist each worker
    has its own session, so each asks: the first builds while holding a lock in `state` (the
    build's work folder) and records the run (PYTEST_XDIST_TESTRUNUID, the same in every worker
    of one run); the others wait for the lock and take that executable. Without xdist it builds."""
    import fcntl  # the suite runs on Linux; the fixture's build only with LLMSPACE_BUILD_DIST=1

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    state.mkdir(parents=True, exist_ok=True)
    stamp = state / "llmspace-test-run"
    with (state / "llmspace-test-build.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the worker dies
        if run and exe.is_file() and stamp.is_file() and stamp.read_text("utf-8") == run:
            return exe
        stamp.unlink(missing_ok=True)
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, proc.stderr[-4000:]
        assert exe.is_file()
        if run:
            write_bytes_atomic(stamp, run.encode("utf-8"))
    return exe


@pytest.fixture(scope="session")
def exe() -> Path:
    """The executable, built from build/llmspace.spec (about a minute on two idle cores)."""
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--distpath", str(DIST),
           "--workpath", str(WORK), "build/llmspace.spec"]
    return build_once(cmd, EXE, WORK)
