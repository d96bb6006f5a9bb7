"""Deep links with real processes on a private display: `llmspace llm-space://…` starts the
app and opens the imported thread in a tab; a second start hands its link to the running
window (which imports and opens it) and exits at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.plugins.code_plugins import FOLDER_STORAGE, code_plugin

from .test_e2e import private_display, pytestmark, wait_for, xdo  # noqa: F401  (fixture and skip marker)

ROOT = Path(__file__).resolve().parents[2]


def _library(home: Path, key: str) -> None:
    (home / "library").mkdir(exist_ok=True)
    (home / "library" / f"{key}.json").write_text(json.dumps({"title": key}), encoding="utf-8")


def test_a_link_opens_in_a_new_window_and_a_second_link_goes_to_the_running_one(home, request):
    display = request.getfixturevalue("private_display")
    code_plugin(home, storages={"folder": FOLDER_STORAGE})
    _library(home, "first")
    _library(home, "second")
    env = dict(os.environ, LLMSPACE_NO_SYSTEM_PROBE="1", LLMSPACE_NO_MCP_PRELOAD="1", DISPLAY=display,
               PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "llmspace", "llm-space://threads/folder-lib/first"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wid = wait_for(lambda: next(iter(xdo("search", "--name", "^LLM Space$").split()), None), timeout=60)
        wait_for(lambda: (home / "workspace" / "imported" / "first.json").exists(), timeout=60)
        wait_for(lambda: (home / "run" / "instance.json").exists(), timeout=30)
        second = subprocess.run([sys.executable, "-m", "llmspace", "llm-space://threads/folder-lib/second"], env=env,
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "Opened in the running LLM Space window."
        wait_for(lambda: (home / "workspace" / "imported" / "second.json").exists(), timeout=60)
        xdo("windowfocus", "--sync", wid)
        xdo("key", "--window", wid, "ctrl+q")
        assert proc.wait(timeout=30) == 0, proc.stderr.read().decode()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    state = json.loads((home / "settings" / "ui-state.json").read_text("utf-8"))
    assert state["openTabs"][-2:] == ["imported/first.json", "imported/second.json"]
    assert not (home / "run" / "instance.json").exists()
