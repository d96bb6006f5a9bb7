"""The app's side of the plugin context: what a host may ask for while a call runs
(docs/plugin-protocol.md, "Callbacks").

    state = CallState("c7", plugin="atlas", kind="command", workspace=ws_root, on_report=show)
    answer = handle_callback(state, frontend, "readWorkspaceFile", {"path": "docs/plan.md"})

Every call in flight has a `CallState` (llmspace/plugins/hosts/host.py keeps them by callId):
the plugin, the workspace the file methods are confined to, the report listener, and for
commands the staged thread write. `Frontend` is what differs between the desktop app and
the command line (`ConsoleFrontend`): notifications, links, file pickers, host commands.
A refusal raises `CallbackRefused`, which the plugin sees as an error with that message.
Every string a callback shows (notify, report, open_link URLs, picker options) loses its
control characters here (`plain_value`), so neither the terminal nor Tk gets raw escapes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from ...core.names import plain_text
from ...errors import UserFacingError
from ...jsonio import read_file_bytes, write_bytes_atomic
from ...plugin_protocol import (
    COMMAND,
    EXECUTE_HOST_COMMAND,
    HOST_COMMANDS,
    LINK_SCHEMES,
    NOTIFY,
    OPEN_LINK,
    PICK_FILE,
    READ_WORKSPACE_FILE,
    REPORT,
    WRITE_THREAD,
    WRITE_WORKSPACE_FILE,
)
from ...plugin_protocol import NOTIFY_LEVELS as LEVELS
from .connection import CallbackRefused

MAX_FILE_BYTES = 20 * 1024 * 1024


class Frontend(Protocol):
    """What plugin calls may ask of the user interface."""

    def notify(self, plugin: str, message: str, level: str) -> None: ...

    def open_link(self, plugin: str, url: str) -> None: ...

    def pick_file(self, plugin: str, options: dict[str, Any]) -> str | None: ...

    def host_command(self, plugin: str, command: str, args: Any) -> None: ...


class ConsoleFrontend:
    """The command line: notifications go to stderr, links are printed, no file picker."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream

    def _out(self) -> Any:
        return self.stream if self.stream is not None else sys.stderr

    def notify(self, plugin: str, message: str, level: str) -> None:
        prefix = "" if level == "info" else f"{level}: "
        print(f"[{plugin}] {prefix}{message}", file=self._out(), flush=True)

    def open_link(self, plugin: str, url: str) -> None:
        print(f"[{plugin}] open: {url}", file=self._out(), flush=True)

    def pick_file(self, plugin: str, options: dict[str, Any]) -> str | None:
        raise CallbackRefused("pick_file needs the desktop app: there is no file picker on the command line.")

    def host_command(self, plugin: str, command: str, args: Any) -> None:
        if command == "openSettings":
            print(f"[{plugin}] settings: llmspace plugins settings {plugin}", file=self._out(), flush=True)


@dataclass
class Report:
    phase: str
    message: str = ""


@dataclass
class CallState:
    """One call in flight, as its callbacks see it."""

    call_id: str
    plugin: str
    kind: str
    workspace: Path
    on_report: Callable[[Report], None] | None = None
    can_write_thread: bool = False
    staged: dict[str, Any] | None = None
    reports: list[Report] = field(default_factory=list)
    finished: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def plain_value(value: Any) -> Any:
    """`value` with `plain_text` applied to every string in it (dict keys too): what a plugin
    sends for display, without C0/C1 control characters or DEL."""
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {plain_value(k): plain_value(v) for k, v in value.items()}
    return value


def _text(params: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = params.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise CallbackRefused(f"{key} must be a non-empty string.")
    return value


def workspace_path(workspace: Path, rel: str) -> Path:
    """`rel` inside `workspace`, or `CallbackRefused` when it would leave it."""
    from ...core.workspace import Workspace

    try:
        return Workspace(workspace).resolve(rel)
    except UserFacingError as exc:
        raise CallbackRefused(exc.message) from None


def read_workspace_file(workspace: Path, rel: str) -> str:
    path = workspace_path(workspace, rel)
    try:
        data = read_file_bytes(path, max_bytes=MAX_FILE_BYTES, shown=rel)
    except UserFacingError as exc:
        raise CallbackRefused(exc.message) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CallbackRefused(f"{rel} is not UTF-8 text.") from None


def write_workspace_file(workspace: Path, rel: str, content: str) -> None:
    path = workspace_path(workspace, rel)
    if path.is_dir():
        raise CallbackRefused(f"{rel} is a folder.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, content.encode("utf-8"))
    except OSError as exc:
        raise CallbackRefused(f"Could not write {rel}: {exc.strerror or exc}") from None
    except UserFacingError as exc:
        raise CallbackRefused(exc.message) from None


def handle_callback(state: CallState, frontend: Frontend, method: str, params: dict[str, Any]) -> Any:
    """Do what the plugin asked (the answer is the callback's result)."""
    if state.finished:
        raise CallbackRefused(f"{method} came after the call had ended.")
    if method == NOTIFY:
        level = params.get("level") if params.get("level") in LEVELS else "info"
        frontend.notify(state.plugin, plain_text(_text(params, "message")), str(level))
        return None
    if method == OPEN_LINK:
        url = plain_text(_text(params, "url"))
        if urlsplit(url).scheme.lower() not in LINK_SCHEMES:
            raise CallbackRefused("open_link opens http, https and mailto links only.")
        frontend.open_link(state.plugin, url)
        return None
    if method == PICK_FILE:
        raw = params.get("options")
        options: dict[str, Any] = plain_value(raw) if isinstance(raw, dict) else {}
        return frontend.pick_file(state.plugin, options)
    if method == READ_WORKSPACE_FILE:
        return read_workspace_file(state.workspace, _text(params, "path"))
    if method == WRITE_WORKSPACE_FILE:
        content = params.get("content")
        if not isinstance(content, str):
            raise CallbackRefused("content must be a string.")
        write_workspace_file(state.workspace, _text(params, "path"), content)
        return None
    if method == EXECUTE_HOST_COMMAND:
        command = _text(params, "type")
        if command not in HOST_COMMANDS:
            raise CallbackRefused(f"Host command {command!r} is not allowed; use {' or '.join(HOST_COMMANDS)}.")
        frontend.host_command(state.plugin, command, params.get("args"))
        return None
    if method == REPORT:
        return _report(state, params)
    if method == WRITE_THREAD:
        return _stage(state, params)
    raise CallbackRefused(f"Unknown context method {method!r}.")


def _report(state: CallState, params: dict[str, Any]) -> None:
    if state.kind != COMMAND:
        raise CallbackRefused("report is available to commands only.")
    phase = params.get("phase")
    if not isinstance(phase, str) or not phase.strip():
        raise CallbackRefused("report needs a non-empty phase.")
    message = params.get("message")
    report = Report(plain_text(phase).strip(), plain_text(message) if isinstance(message, str) else "")
    with state.lock:
        state.reports.append(report)
    if state.on_report is not None:
        state.on_report(report)
    return


def _stage(state: CallState, params: dict[str, Any]) -> None:
    """A command's `writeThread` (`context.writeThread` / `write_thread`): the thread is only
    staged here; `_apply_staged` (llmspace/plugins/code/calls.py) commits or discards it when the
    command ends."""
    if state.kind != COMMAND or not state.can_write_thread:
        raise CallbackRefused("write_thread needs an active thread tab.")
    thread = params.get("thread")
    if not isinstance(thread, dict):
        raise CallbackRefused("write_thread needs a complete thread object.")
    with state.lock:
        state.staged = thread
    return
