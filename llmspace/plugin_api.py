"""The typed contract for plugin code written in Python (the Python plugin host runs it).

Plugin authors may import this module to catch mistakes early; nothing here is required at
run time, except `PluginCallError` (what a refused context call raises) and `PluginResult`
(what `context.create_result` returns). It imports only the standard library.

A code file of a plugin (`tools/*.py`, `commands/*.py`, `thread-storages/*.py`) has a
default export: the class bound to the module attribute `default`, or else the only class
defined in that module. The host instantiates it with no arguments, once per plugin load::

    from llmspace.plugin_api import ToolContext

    class ReadProjectFile:
        name = "read_project_file"
        description = "Read a UTF-8 file from the workspace."
        parameters = {"type": "object", "properties": {"path": {"type": "string"}},
                      "required": ["path"], "additionalProperties": False}
        strict = True

        def execute(self, context: ToolContext, args: dict[str, object]) -> object:
            return {"content": context.read_workspace_file(str(args["path"]))}

- Names follow Python (`display_name`, `deep_link_id`, `resolve_latest`,
  `context.read_workspace_file`, …); the plugin guide's camelCase spellings (`displayName`,
  `deepLinkId`, `resolveLatest`, `context.readWorkspaceFile`, …) work too.
- `execute`, `resolve_latest`, `read`, `write`, `list` and `dispose` may be plain or `async def`
  methods. Each call runs on its own thread; an `async def` method runs with `asyncio.run`
  on that thread, and its task is cancelled when the call's signal fires. Context methods
  are synchronous, thread-safe, return when the app has done the work, and raise
  `PluginCallError` when the app refuses. One instance serves concurrent calls: keep
  per-call state local.
- `context.settings`, `context.thread`, `context.variables`, `context.arguments` and
  `context.active_tab.thread` are read-only (dicts and lists that refuse changes; `json.dumps`
  works on them); `copy.deepcopy(...)` gives a plain, mutable copy.
- Return JSON (dict, list, str, int, float, bool, None) or `context.create_result(...)`.
  Raise an exception for a failed call: its message is shown, its traceback logged.
- `print()` and writes to file descriptor 1 go to the plugin's log (stderr), as does stdin
  reading nothing: stdout belongs to the protocol.
- Files whose name starts with `_` are helpers, not extensions. The plugin's `vendor/`
  folder (first) and its root are on `sys.path`, and the extension folders (`tools/`,
  `commands/`, `thread-storages/`) are at its end, so `from _shared import x` works from
  `tools/x.py` (the standard library and installed packages win over a helper's name: give
  helpers distinctive names, unique across the three folders).

The protocol between the app and the host is `docs/plugin-protocol.md`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NotRequired, Protocol, TypeAlias, TypedDict

__all__ = [
    "ActiveTab",
    "Capabilities",
    "CommandContext",
    "CommandExtension",
    "CommandResult",
    "ContentPart",
    "FileFilter",
    "HostContext",
    "ImagePart",
    "JSONValue",
    "PickFileOptions",
    "PluginCallError",
    "PluginResult",
    "ReadableThreadStorage",
    "Report",
    "Signal",
    "TextPart",
    "Thread",
    "ThreadLocator",
    "ThreadStorageContext",
    "ThreadStorageExtension",
    "ToolContext",
    "ToolExtension",
    "WritableThreadStorage",
]

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
Thread: TypeAlias = Mapping[str, Any]
"""A Thread as on disk (camelCase keys, images inline); plugins get it read-only."""


class PluginCallError(Exception):
    """The app refused a context call (`notify`, `read_workspace_file`, …); `str(error)` says why.

    `code` is the JSON-RPC error code of the refusal (-32010 refused, -32002 the call is
    over), or None when the host could not reach the app.
    """

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class PluginResult:
    """What `context.create_result(...)` made: return it from `execute` as it is.

    Made only by the host (it checks the shape); `payload` is the JSON the app receives:
    `{"content": [parts…]}` for tools, `{"level", "message"}` for commands.
    """

    __slots__ = ("_payload",)

    def __init__(self, payload: Mapping[str, Any]) -> None:
        self._payload = dict(payload)

    @property
    def payload(self) -> dict[str, Any]:
        return dict(self._payload)

    def __repr__(self) -> str:
        return f"PluginResult({self._payload!r})"


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImagePart(TypedDict):
    type: Literal["image"]
    mimeType: str
    data: str
    """The image bytes, base64-encoded."""


ContentPart: TypeAlias = TextPart | ImagePart


class CommandResult(TypedDict):
    level: Literal["success", "warning", "error"]
    message: str


class Report(TypedDict):
    phase: str
    message: NotRequired[str]


class ThreadLocator(TypedDict):
    id: str
    version: NotRequired[str]
    filename: NotRequired[str]


class Capabilities(TypedDict):
    read: bool
    write: bool


class ListOptions(TypedDict):
    """The second argument of a storage's optional `list`: both None on a first, unfiltered page."""

    cursor: str | None  # the `nextCursor` of the page before
    query: str | None  # what the user typed in the search field


class ListItem(TypedDict):
    id: str  # the resource ID `resolve_latest` takes
    title: str
    updatedAt: NotRequired[str]  # ISO 8601


class ListPage(TypedDict):
    """What `list` returns; `nextCursor` only when there is a next page."""

    items: list[ListItem]
    nextCursor: NotRequired[str]


class FileFilter(TypedDict):
    name: str
    extensions: list[str]


class PickFileOptions(TypedDict, total=False):
    title: str
    filters: list[FileFilter]


class Signal(Protocol):
    """The call's cancellation signal (the app sent `cancel`, or the call is being abandoned)."""

    @property
    def aborted(self) -> bool: ...
    @property
    def reason(self) -> str | None: ...
    def wait(self, timeout: float | None = None) -> bool:
        """Block until the signal fires or `timeout` passes; True when it fired."""
        ...
    def add_listener(self, listener: Callable[[], object]) -> None:
        """Run `listener()` once when the signal fires (at once if it already has)."""
        ...
    def remove_listener(self, listener: Callable[[], object]) -> None: ...
    def raise_if_aborted(self) -> None:
        """Raise `PluginCallError` when the signal has fired."""
        ...


class HostContext(Protocol):
    """What every context has: settings, the signal and the host callbacks."""

    @property
    def settings(self) -> Mapping[str, Any]: ...
    @property
    def signal(self) -> Signal: ...
    def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None: ...
    def open_link(self, url: str) -> None: ...
    def pick_file(self, options: PickFileOptions | None = None) -> str | None: ...
    def read_workspace_file(self, path: str) -> str: ...
    def write_workspace_file(self, path: str, content: str) -> None: ...
    def execute_host_command(self, type: str, args: Any = None) -> None: ...
    def openLink(self, url: str) -> None: ...
    def pickFile(self, options: PickFileOptions | None = None) -> str | None: ...
    def readWorkspaceFile(self, path: str) -> str: ...
    def writeWorkspaceFile(self, path: str, content: str) -> None: ...
    def executeHostCommand(self, type: str, args: Any = None) -> None: ...


class ToolContext(HostContext, Protocol):
    """The context of a tool call: the owning thread and its resolved prompt variables."""

    @property
    def thread(self) -> Thread: ...
    @property
    def variables(self) -> Mapping[str, Any]: ...
    def create_result(self, parts: Sequence[ContentPart]) -> PluginResult: ...
    def createResult(self, parts: Sequence[ContentPart]) -> PluginResult: ...


class ActiveTab(Protocol):
    """The thread tab that was active when the command started."""

    @property
    def filename(self) -> str: ...
    @property
    def thread(self) -> Thread: ...
    def write_thread(self, thread: Mapping[str, Any]) -> None:
        """Stage the complete replacement; the app commits it when the command succeeds."""
        ...
    def writeThread(self, thread: Mapping[str, Any]) -> None: ...


class CommandContext(HostContext, Protocol):
    """The context of a command: palette arguments, the active tab, progress reports."""

    @property
    def arguments(self) -> tuple[str, ...]: ...
    @property
    def active_tab(self) -> ActiveTab | None: ...
    @property
    def activeTab(self) -> ActiveTab | None: ...
    def report(self, phase: str | Report, message: str | None = None) -> None: ...
    def create_result(self, result: CommandResult) -> PluginResult: ...
    def createResult(self, result: CommandResult) -> PluginResult: ...


class ThreadStorageContext(HostContext, Protocol):
    """The context of a thread storage method."""


class ToolExtension(Protocol):
    """A tool (`tools/*.py`). Optional: `strict: bool`, `dispose()`."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def execute(self, context: ToolContext, args: dict[str, Any], /) -> Any: ...


class CommandExtension(Protocol):
    """A command (`commands/*.py`). Optional: `description`, `dispose()`; `execute` may
    also take only the context (the arguments are `context.arguments` too)."""

    display_name: str

    def execute(self, context: CommandContext, arguments: tuple[str, ...], /) -> Any: ...


class ThreadStorageExtension(Protocol):
    """A thread storage (`thread-storages/*.py`). Optional: `description`, `deep_link_id`
    (readable storages, `^[a-z0-9._-]+$`), `dispose()`. See the two below for the methods."""

    display_name: str
    capabilities: Capabilities


class ReadableThreadStorage(ThreadStorageExtension, Protocol):
    """`capabilities["read"]` is true."""

    def resolve_latest(self, id: str, context: ThreadStorageContext, /) -> Any: ...
    def read(self, locator: ThreadLocator, context: ThreadStorageContext, /) -> Any: ...


class ListingThreadStorage(ReadableThreadStorage, Protocol):
    """A readable storage that can say what it holds: the optional `list` (our extension of
    the plugin guide). The host reports `capabilities.list` in its `initialize` metadata, and
    File › Import from Storage then shows a searchable list instead of only an ID field."""

    def list(self, context: ThreadStorageContext, options: ListOptions, /) -> ListPage | Any: ...


class WritableThreadStorage(ThreadStorageExtension, Protocol):
    """`capabilities["write"]` is true; `id` is None for a new resource."""

    def write(self, thread: Thread, id: str | None, context: ThreadStorageContext, /) -> Any: ...
