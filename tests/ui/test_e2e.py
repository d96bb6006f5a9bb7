"""End to end with a real process and real key presses (xdotool): start the app, Ctrl+N
creates a thread, Ctrl+Q saves the open tabs and quits with exit code 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(shutil.which("xdotool") is None, reason="xdotool is not installed")


def xdo(*args: str) -> str:
    return subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=10).stdout.strip()


def wait_for(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_keyboard_new_file_and_quit_in_a_real_process(home):
    env = dict(os.environ, LLMSPACE_NO_SYSTEM_PROBE="1", LLMSPACE_NO_MCP_PRELOAD="1")
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
