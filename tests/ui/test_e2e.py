"""End to end with a real process and real key presses (xdotool): start the app, Ctrl+N
creates a thread, Ctrl+Q saves the open tabs and quits with exit code 0.

The app runs on a private Xvfb display of its own: on the suite's shared display, real key
presses could reach the session's test window when focus moved (a Ctrl+Q there destroyed
the shared Tk root and failed every later GUI test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(shutil.which("xdotool") is None or shutil.which("Xvfb") is None,
                                reason="xdotool and Xvfb are needed (.ci/run installs them)")


_DISPLAY: dict[str, str] = {}


def xdo(*args: str) -> str:
    env = dict(os.environ, **_DISPLAY)
    return subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=10, env=env).stdout.strip()


@pytest.fixture
def private_display():
    """A fresh Xvfb display for this test only (`-displayfd` picks a free number)."""
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                              pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd, "r") as pipe:
            number = pipe.readline().strip()  # blocks until the server is ready (or has failed)
        assert number, "Xvfb did not start"
        _DISPLAY["DISPLAY"] = f":{number}"
        yield f":{number}"
    finally:
        _DISPLAY.clear()
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


def wait_for(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_keyboard_new_file_and_quit_in_a_real_process(home, private_display):
    env = dict(os.environ, LLMSPACE_NO_SYSTEM_PROBE="1", LLMSPACE_NO_MCP_PRELOAD="1", DISPLAY=private_display)
    before = set(xdo("search", "--name", "^LLM Space$").split())
    proc = subprocess.Popen([sys.executable, "-m", "llmspace"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wid = wait_for(lambda: next(iter(set(xdo("search", "--name", "^LLM Space$").split()) - before), None))
        wait_for(lambda: (home / "workspace" / ".llmspace-seeded").exists())
        xdo("windowfocus", "--sync", wid)
        xdo("key", "--window", wid, "ctrl+n")
        wait_for(lambda: (home / "workspace" / "untitled.json").exists())
        xdo("key", "--window", wid, "Escape")
        xdo("key", "--window", wid, "ctrl+q")
        assert proc.wait(timeout=30) == 0, proc.stderr.read().decode()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    state = json.loads((home / "settings" / "ui-state.json").read_text("utf-8"))
    assert state["openTabs"] == ["untitled.json"]
