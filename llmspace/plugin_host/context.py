"""The context objects plugin code receives: `ToolCallContext`, `CommandCallContext`,
`StorageCallContext` (and `ActiveTabView` for a command's active tab).

Each host callback is a synchronous, thread-safe method that sends the request with the
call's `callId` through `rpc.Connection.request` and returns the app's answer, or raises
`plugin_api.PluginCallError` when the app refuses. Snake_case names, with the plugin
guide's camelCase spellings as aliases. `create_result` checks the shape of a tool's parts
or a command's outcome and returns a `plugin_api.PluginResult`. Built by `calls.py`.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import plugin_api as api
from ..plugin_api import PluginCallError, PluginResult
from ..plugin_protocol import (
    EXECUTE_HOST_COMMAND,
    NOTIFY,
    NOTIFY_LEVELS,
    OPEN_LINK,
    PICK_FILE,
    READ_WORKSPACE_FILE,
    REPORT,
    WRITE_THREAD,
    WRITE_WORKSPACE_FILE,
)
from ..plugin_protocol import RESULT_LEVELS as LEVELS
from .plainjson import NotJSON, freeze, to_json
from .rpc import Connection, RpcError, TooLarge
from .signals import CallSignal


class _Caller:
    """Sends one call's callbacks."""

    __slots__ = ("_call_id", "_conn")

    def __init__(self, conn: Connection, call_id: str) -> None:
        self._conn = conn
        self._call_id = call_id

    def __call__(self, method: str, **params: Any) -> Any:
        try:
            plain = to_json(params)
        except NotJSON as exc:
            raise TypeError(f"{method}: {exc}") from None
        plain["callId"] = self._call_id
        try:
            return self._conn.request(method, plain)
        except RpcError as exc:
            raise PluginCallError(exc.message, exc.code) from None
        except TooLarge as exc:
            raise PluginCallError(f"{method}: {exc}") from None
        except OSError as exc:
            raise PluginCallError(f"{method}: the app is gone ({exc})") from None


def _text(name: str, value: object, *, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if not empty and not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


class _HostContext:
    """Settings, the signal and the callbacks every context has."""

    def __init__(self, caller: _Caller, signal: CallSignal, context: Mapping[str, Any]) -> None:
        self._call = caller
        self._signal = signal
        self._context = context
        self._frozen: dict[str, Mapping[str, Any]] = {}

    def _view(self, key: str) -> Mapping[str, Any]:
        """A read-only view of `context[key]`, made the first time it is asked for (most calls
        never read the thread, which can be large)."""
        view = self._frozen.get(key)
        if view is None:
            value = self._context.get(key)
            view = self._frozen.setdefault(key, freeze(value if isinstance(value, dict) else {}))
        return view

    @property
    def settings(self) -> Mapping[str, Any]:
        return self._view("settings")

    @property
    def signal(self) -> CallSignal:
        return self._signal

    def notify(self, message: str, level: str = "info") -> None:
        if level not in NOTIFY_LEVELS:
            raise ValueError(f"level must be one of {', '.join(NOTIFY_LEVELS)}")
        self._call(NOTIFY, message=_text("message", message), level=level)

    def open_link(self, url: str) -> None:
        self._call(OPEN_LINK, url=_text("url", url, empty=False))

    def pick_file(self, options: Mapping[str, Any] | None = None) -> str | None:
        if options is not None and not isinstance(options, Mapping):
            raise TypeError("options must be a dict (title, filters)")
        answer = self._call(PICK_FILE, options=dict(options or {}))
        return answer if isinstance(answer, str) else None

    def read_workspace_file(self, path: str) -> str:
        answer = self._call(READ_WORKSPACE_FILE, path=_text("path", path, empty=False))
        if not isinstance(answer, str):
            raise PluginCallError("readWorkspaceFile: the app answered without text")
        return answer

    def write_workspace_file(self, path: str, content: str) -> None:
        self._call(WRITE_WORKSPACE_FILE, path=_text("path", path, empty=False), content=_text("content", content))

    def execute_host_command(self, type: str, args: Any = None) -> None:
        if args is None:
            self._call(EXECUTE_HOST_COMMAND, type=_text("type", type, empty=False))
        else:
            self._call(EXECUTE_HOST_COMMAND, type=_text("type", type, empty=False), args=args)

    openLink = open_link
    pickFile = pick_file
    readWorkspaceFile = read_workspace_file
    writeWorkspaceFile = write_workspace_file
    executeHostCommand = execute_host_command


class ToolCallContext(_HostContext):
    """A tool call: plus `thread`, `variables` and `create_result(parts)`."""

    def __init__(self, caller: _Caller, signal: CallSignal, context: Mapping[str, Any]) -> None:
        super().__init__(caller, signal, context)

    @property
    def thread(self) -> Mapping[str, Any]:
        return self._view("thread")

    @property
    def variables(self) -> Mapping[str, Any]:
        return self._view("variables")

    def create_result(self, parts: Sequence[Mapping[str, Any]]) -> PluginResult:
        """Text and image parts → the result the app shows as the tool's output."""
        if isinstance(parts, str | bytes) or not isinstance(parts, Sequence):
            raise TypeError("create_result takes a list of parts ({'type': 'text', …} or {'type': 'image', …})")
        return PluginResult({"content": [_part(i, part) for i, part in enumerate(parts)]})

    createResult = create_result


def _part(index: int, part: object) -> dict[str, Any]:
    where = f"part {index}"
    if not isinstance(part, Mapping):
        raise TypeError(f"{where} must be a dict, not {type(part).__name__}")
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": _text(f"{where}: text", part.get("text"))}
    if kind == "image":
        mime = _text(f"{where}: mimeType", part.get("mimeType", part.get("mime_type")), empty=False)
        data = _text(f"{where}: data", part.get("data"), empty=False)
        try:
            binascii.a2b_base64(data, strict_mode=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{where}: data must be base64 (the image bytes, encoded)") from None
        return {"type": "image", "mimeType": mime, "data": data}
    raise ValueError(f"{where}: type must be 'text' or 'image', not {kind!r}")


class ActiveTabView:
    """The thread tab that was active when the command started."""

    __slots__ = ("_call", "_filename", "_thread")

    def __init__(self, caller: _Caller, filename: str, thread: Any) -> None:
        self._call = caller
        self._filename = filename
        self._thread: Mapping[str, Any] = freeze(thread if isinstance(thread, dict) else {})

    @property
    def filename(self) -> str:
        return self._filename

    @property
    def thread(self) -> Mapping[str, Any]:
        return self._thread

    def write_thread(self, thread: Mapping[str, Any]) -> None:
        """Stage the complete replacement of the thread (committed when the command succeeds)."""
        if not isinstance(thread, Mapping):
            raise TypeError(f"write_thread takes the whole thread as a dict, not {type(thread).__name__}")
        self._call(WRITE_THREAD, thread=thread)

    writeThread = write_thread

    def __repr__(self) -> str:
        return f"<active tab {self._filename!r}>"


class CommandCallContext(_HostContext):
    """A command: plus `arguments`, `active_tab`, `report` and `create_result(outcome)`."""

    def __init__(self, caller: _Caller, signal: CallSignal, context: Mapping[str, Any], arguments: tuple[str, ...]) -> None:
        super().__init__(caller, signal, context)
        self._arguments = arguments
        tab = context.get("activeTab")
        self._tab = ActiveTabView(caller, str(tab.get("filename", "")), tab.get("thread")) if isinstance(tab, dict) else None

    @property
    def arguments(self) -> tuple[str, ...]:
        return self._arguments

    @property
    def active_tab(self) -> ActiveTabView | None:
        return self._tab

    @property
    def activeTab(self) -> ActiveTabView | None:
        return self._tab

    def report(self, phase: str | Mapping[str, Any], message: str | None = None) -> None:
        """Progress: `report("loading", "Loading…")` or `report({"phase": …, "message": …})`."""
        fields: Mapping[str, Any] = phase if isinstance(phase, Mapping) else {"phase": phase}
        message = fields.get("message", message)
        params: dict[str, Any] = {"phase": _text("phase", fields.get("phase"), empty=False)}
        if message is not None:
            params["message"] = _text("message", message)
        self._call(REPORT, **params)

    def create_result(self, result: Mapping[str, Any] | None = None, **fields: Any) -> PluginResult:
        """`{"level": "success" | "warning" | "error", "message": …}` → the command's outcome."""
        outcome = {**(result or {}), **fields}
        level = outcome.get("level")
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
        return PluginResult({"level": level, "message": _text("message", outcome.get("message"))})

    createResult = create_result


class StorageCallContext(_HostContext):
    """A thread storage method: settings, the signal and the callbacks."""


def caller(conn: Connection, call_id: str) -> _Caller:
    return _Caller(conn, call_id)


if TYPE_CHECKING:  # mypy checks that what plugins get meets the contract they import

    def _meets_the_contract(tool: ToolCallContext, command: CommandCallContext, storage: StorageCallContext,
                            tab: ActiveTabView, signal: CallSignal) -> None:
        checks: tuple[api.ToolContext, api.CommandContext, api.ThreadStorageContext, api.ActiveTab, api.Signal]
        checks = (tool, command, storage, tab, signal)
        del checks
