"""The single-file executable, built once per test session for every `tests/packaging/` module
that asks for the `exe` fixture (mark such a module `pytestmark = pytest.mark.dist`).

Built with `make dist`'s command only with LLMSPACE_BUILD_DIST=1 (CI sets it); without it the
tests marked `dist` skip. LLMSPACE_DIST_DIR puts the build somewhere other than `build/dist`
(with its work folder beside it), so two checkouts or sessions can build at the same time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.fixture(scope="session")
def exe() -> Path:
    """The executable, built from build/llmspace.spec (about a minute on two idle cores)."""
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--distpath", str(DIST),
           "--workpath", str(WORK), "build/llmspace.spec"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert EXE.is_file()
    return EXE
