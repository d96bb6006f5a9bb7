"""The UI benchmarks' own display (`python -m bench ui` without $DISPLAY, bench/bench_ui.py):
it starts a private Xvfb and goes on only once that server accepts connections, waiting a
bounded time and failing with the reason — a missing Xvfb, a server that exited (with its
own words), or one that never came up — instead of going on to "couldn't connect to display".
Real Xvfb when it is installed; stand-ins on PATH (small shell scripts) for the failures."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import bench_ui


def _fake_xvfb(folder: Path, body: str) -> str:
    folder.mkdir(exist_ok=True)
    script = folder / "Xvfb"
    script.write_text("#!/bin/sh\n" + body + "\n", "utf-8")
    script.chmod(0o755)
    return f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin"


@pytest.fixture
def no_display() -> Iterator[None]:
    old = os.environ.pop("DISPLAY", None)
    yield
    os.environ.pop("DISPLAY", None)
    if old is not None:
        os.environ["DISPLAY"] = old


def test_without_xvfb_the_benchmark_says_to_install_it(tmp_path, monkeypatch, no_display):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"Xvfb is not installed.*apt-get install -y xvfb.*or set DISPLAY"):
        bench_ui._ensure_display()
    assert "DISPLAY" not in os.environ


def test_an_xvfb_that_exits_stops_the_benchmark_with_its_own_words(tmp_path, monkeypatch, no_display):
    monkeypatch.setenv("PATH", _fake_xvfb(tmp_path / "bin", 'echo "(EE) Fatal server error: no screens found" >&2\nexit 1'))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"Xvfb exited \(status 1\) before its display was ready.*no screens found"):
        bench_ui._ensure_display(timeout=60)
    assert time.monotonic() - t0 < 30  # it does not sit out the wait
    assert "DISPLAY" not in os.environ


def test_an_xvfb_that_never_comes_up_is_waited_for_a_bounded_time_then_stopped(tmp_path, monkeypatch, no_display):
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("PATH", _fake_xvfb(tmp_path / "bin", f'echo $$ > {pid_file}\nexec sleep 600'))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"Xvfb did not open a display within 2 s"):
        bench_ui._ensure_display(timeout=2)
    assert time.monotonic() - t0 < 30
    assert "DISPLAY" not in os.environ
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists(), "the stand-in Xvfb was left running"


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed (scripts/setup-test-env.sh installs it)")
def test_the_display_accepts_a_window_as_soon_as_it_is_returned(no_display):
    server = bench_ui._ensure_display()
    assert server is not None
    try:
        display = os.environ["DISPLAY"]
        probe = subprocess.run([sys.executable, "-c", "import tkinter; r = tkinter.Tk(); r.update(); print(r.winfo_screenwidth())"],
                               capture_output=True, text=True, timeout=120, env=dict(os.environ, DISPLAY=display))
        assert probe.returncode == 0, probe.stderr
        assert probe.stdout.strip() == "1280"
    finally:
        server.terminate()
        server.wait(30)
