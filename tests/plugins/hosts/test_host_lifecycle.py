"""The lifecycle of plugin hosts: idle hosts exit and come back, a settings change or
reload restarts the host with the new values, disable disposes and refuses calls, and
repeated crashes back off before the next start."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from llmspace.app import App
from llmspace.plugins.hosts.host import _Crashes

from ..code_plugins import DISPOSE_TOOL, ECHO_TOOL, EXITING_TOOL, SCHEMA, code_plugin
from ..code_plugins import call_tool as _call
from ..code_plugins import tool_thread as _thread


def _wait(condition: Any, seconds: float = 30.0) -> bool:
    done = threading.Event()
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        done.wait(0.05)
    return bool(condition())


def test_an_idle_host_exits_and_the_next_call_starts_it_again(app: App, home: Path) -> None:
    code_plugin(home, tools={"disposing": DISPOSE_TOOL})
    app.plugin_code.idle_seconds = 0.3
    thread = _thread(app)
    disposed = home / "disposed.txt"
    before = disposed.read_text().count("disposed") if disposed.exists() else 0
    first = int(_call(app, thread, "disposing", {}).text())
    host = app.plugin_code.hosts()[0]
    assert _wait(lambda: not host.running)
    # An idle stop disposes too (the host that loaded the metadata may also have been
    # stopped as idle before the call, on a loaded machine).
    assert disposed.read_text().count("disposed") in (before + 1, before + 2)
    starts = host.starts
    second = int(_call(app, thread, "disposing", {}).text())
    assert second != first and host.starts == starts + 1


def test_a_settings_change_restarts_the_host_with_the_new_values(app: App, home: Path) -> None:
    code_plugin(home, tools={"echo": ECHO_TOOL}, schema=SCHEMA)
    thread = _thread(app)
    assert json.loads(_call(app, thread, "echo_args", {"text": "a"}).text())["greeting"] == "Hello"
    old_hosts = app.plugin_code.hosts()
    app.plugins.update_settings("kit", [("greeting", "Bonjour")])
    assert json.loads(_call(app, thread, "echo_args", {"text": "a"}).text())["greeting"] == "Bonjour"
    assert all(not h.running for h in old_hosts) and app.plugin_code.hosts()[0] not in old_hosts


def test_disable_disposes_ends_the_host_and_refuses_calls_until_enabled(app: App, home: Path) -> None:
    code_plugin(home, tools={"disposing": DISPOSE_TOOL})
    thread = _thread(app)
    _call(app, thread, "disposing", {})
    host = app.plugin_code.hosts()[0]
    app.plugins.disable("kit")
    assert not host.running and (home / "disposed.txt").read_text() == "disposed\n"
    out = _call(app, thread, "disposing", {})
    assert out.isError is True and "unavailable (plugin kit is disabled" in out.text()
    app.plugins.enable("kit")
    assert _call(app, thread, "disposing", {}).isError is False


def test_repeated_crashes_back_off_before_the_next_start(app: App, home: Path) -> None:
    code_plugin(home, tools={"exiting": EXITING_TOOL})
    thread = _thread(app)
    assert "exit code 3" in _call(app, thread, "exiting", {"die": True}).text()
    assert "exit code 3" in _call(app, thread, "exiting", {"die": True}).text()
    out = _call(app, thread, "exiting", {})
    assert out.isError is True and "crashed repeatedly; it will be started again in" in out.text()


def test_the_backoff_doubles_up_to_thirty_seconds_and_forgets_old_crashes() -> None:
    crashes = _Crashes()
    crashes.add(0.0)
    assert crashes.wait_left(0.0) == 0.0
    crashes.add(1.0)
    assert crashes.wait_left(1.0) == 1.0
    for t in (2.0, 3.0, 4.0):
        crashes.add(t)
    assert crashes.wait_left(4.0) == 8.0
    for t in range(5, 20):
        crashes.add(float(t))
    assert crashes.wait_left(19.0) == 30.0
    assert crashes.wait_left(19.0 + 61.0) == 0.0
