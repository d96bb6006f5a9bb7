"""The app-side objects of plugin code extensions, as the registries hold them:
`PluginToolRunner` (a tool executor), `PluginCommand` (a palette command) and
`PluginStorage` (a thread storage). Each turns one extension method into a host call
through a `CallRoute` (llmspace/plugins/code/plugin_code.py) and checks what comes back.

    outcome = command.invoke(["production", "Release 4.9"], active_tab=tab, on_report=show)
    locator = storage.resolve_latest("project/alpha?revision=latest"); thread = storage.read(locator)
    page = storage.list_items("alpha") if storage.can_list else None  # the optional `list`
    output = runner(tool, {"city": "Lisbon"}, tool_context, cancel, 30.0)  # a ToolCallOutput

Command outcomes follow the guide's §10.4 table: a success or warning result, or a plain
return value, commits the staged thread write when it is still safe; an error result or an
exception discards it; a staged thread that is not valid makes the outcome an error with
the reason. One invocation of a given command runs at a time. What the plugin sends for
display (result messages and values, tool text, display names, error messages) loses its
control characters (`plain_text`), so the terminal and Tk never get raw escapes.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ...cancel import CancelToken
from ...core.model import TextContent, Thread, ToolCallOutput
from ...core.names import plain_text, strip_bidi
from ...core.threadio import thread_from_data, thread_to_data
from ...errors import UserFacingError
from ...tools.base import ToolContext, ToolError, serialise_result, text_output
from ..hosts.callbacks import CallState, Report, plain_value
from ..hosts.host import CallFailed

if TYPE_CHECKING:
    from ...core.model import Tool

COMMAND_TIMEOUT = 600.0
STORAGE_TIMEOUT = 120.0
TOOL_TIMEOUT = 120.0
LEVELS = ("success", "warning", "error")


class CallRoute(Protocol):
    """How an extension reaches its host (implemented by `PluginCode`)."""

    def call(self, plugin: str, runtime: str, kind: str, ident: str, method: str, payload: dict[str, Any],
             context: dict[str, Any], *, timeout: float | None, cancel: CancelToken | None,
             state: CallState | None = None) -> dict[str, Any]: ...

    def new_state(self, plugin: str, kind: str, *, on_report: Callable[[Report], None] | None = None,
                  can_write_thread: bool = False) -> CallState: ...


@dataclass(frozen=True)
class ExtensionRef:
    plugin: str
    kind: str
    id: str  # the file stem
    runtime: str

    @property
    def canonical_id(self) -> str:
        return f"plugin:{self.plugin}:{self.kind}:{self.id}"


# -- tools -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolSpec:
    """What a plugin tool looks like to the model and the tool picker."""

    ref: ExtensionRef
    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None

    @property
    def canonical_id(self) -> str:
        return self.ref.canonical_id


def plugin_tool_entry_for(spec: ToolSpec) -> Tool:
    """The thread tool entry that enables `spec` (name, description and parameters copied)."""
    from ...tools.plugin_tools import plugin_tool_entry

    return plugin_tool_entry(spec.ref.plugin, spec.ref.id, spec.name, spec.description, spec.parameters, spec.strict)


class PluginToolRunner:
    """The executor of one plugin tool (registered as `plugin:<name>:tool:<stem>`). Its host
    call waits with the call's cancel token and timeout, so the router runs it on the
    caller's thread (`self_bounded`)."""

    self_bounded = True

    def __init__(self, route: CallRoute, ref: ExtensionRef, *, on_error: Callable[[str, CallFailed], None]) -> None:
        self.route, self.ref, self.on_error = route, ref, on_error

    def __call__(self, tool: Tool, arguments: dict[str, Any], ctx: ToolContext, cancel: CancelToken,
                 timeout: float | None) -> ToolCallOutput:
        context = {"thread": ctx.thread_data() if ctx.thread_data is not None else {},
                   "variables": ctx.variables() if ctx.variables is not None else {}}
        try:
            answer = self.route.call(self.ref.plugin, self.ref.runtime, "tool", self.ref.id, "execute",
                                     {"arguments": arguments}, context, timeout=timeout or TOOL_TIMEOUT, cancel=cancel)
        except CallFailed as exc:
            self.on_error(self.ref.canonical_id, exc)
            raise ToolError(exc.message) from None
        return tool_output(answer)


def tool_output(answer: dict[str, Any]) -> ToolCallOutput:
    """A tool's host answer as its output: plain values as text, `create_result` parts as content."""
    if answer.get("type") == "result":
        from ...tools.base import rich_output

        result = answer.get("result")
        parts = result.get("content") if isinstance(result, dict) else None
        if not isinstance(parts, list):
            raise ToolError("The plugin's create_result needs a list of text and image parts.")
        output = rich_output(parts)
        for part in output.content:
            if isinstance(part, TextContent):
                part.text = plain_text(part.text)
        return output
    return text_output(plain_text(serialise_result(answer.get("value"))), False)


# -- commands ----------------------------------------------------------------------------

@dataclass
class ActiveTab:
    """The thread tab a command sees. `commit(thread)` applies a staged write and returns
    why it could not (another tab is active, a run or save is in progress) or None."""

    filename: str
    thread: Thread
    commit: Callable[[Thread], str | None]


@dataclass
class CommandOutcome:
    level: str  # success | warning | error
    message: str
    reports: list[Report] = field(default_factory=list)
    value: Any = None
    committed: bool = False
    write_note: str = ""  # what happened to a staged thread write, when there was one


class PluginCommand:
    """A plugin command in the palette (`plugin:<name>:command:<stem>`, alias `<stem>`)."""

    def __init__(self, route: CallRoute, ref: ExtensionRef, display_name: str, description: str, *,
                 on_error: Callable[[str, CallFailed], None], plugin_title: str = "") -> None:
        self.route, self.ref, self.on_error = route, ref, on_error
        self.display_name, self.description = plain_text(display_name), plain_text(description)
        self.plugin_title = plain_text(plugin_title or ref.plugin)  # the plugin's display name
        self._running = threading.Lock()

    @property
    def alias(self) -> str:
        return self.ref.id

    @property
    def canonical_id(self) -> str:
        return self.ref.canonical_id

    def run(self) -> CommandOutcome:
        """The palette's plain run: no arguments, no active tab."""
        return self.invoke(())

    def invoke(self, arguments: Sequence[str], *, active_tab: ActiveTab | None = None,
               on_report: Callable[[Report], None] | None = None, cancel: CancelToken | None = None,
               timeout: float = COMMAND_TIMEOUT) -> CommandOutcome:
        if not self._running.acquire(blocking=False):
            return CommandOutcome("error", f"{self.display_name} is already running; wait for it to finish.")
        try:
            return self._invoke(list(arguments), active_tab, on_report, cancel, timeout)
        finally:
            self._running.release()

    def _invoke(self, arguments: list[str], tab: ActiveTab | None, on_report: Callable[[Report], None] | None,
                cancel: CancelToken | None, timeout: float) -> CommandOutcome:
        state = self.route.new_state(self.ref.plugin, "command", on_report=on_report, can_write_thread=tab is not None)
        active = {"filename": tab.filename, "thread": thread_to_data(tab.thread)} if tab is not None else None
        try:
            answer = self.route.call(self.ref.plugin, self.ref.runtime, "command", self.ref.id, "execute",
                                     {"arguments": arguments}, {"activeTab": active}, timeout=timeout,
                                     cancel=cancel, state=state)
        except CallFailed as exc:
            self.on_error(self.canonical_id, exc)
            outcome = CommandOutcome("error", f"{self.display_name} failed: {exc.message}", list(state.reports))
            if exc.kind == "cancelled":
                outcome.message = f"{self.display_name} was cancelled."
            if state.staged is not None:
                outcome.write_note = "The staged thread write was discarded because the command did not succeed."
            return outcome
        outcome = _outcome(self.display_name, answer, state.reports)
        if state.staged is not None:
            _apply_staged(self.display_name, outcome, state.staged, tab)
        return outcome


def _outcome(display_name: str, answer: dict[str, Any], reports: list[Report]) -> CommandOutcome:
    if answer.get("type") == "result":
        result = answer.get("result") if isinstance(answer.get("result"), dict) else {}
        assert isinstance(result, dict)
        level = result.get("level") if result.get("level") in LEVELS else "error"
        message = result.get("message")
        text = plain_text(message) if isinstance(message, str) and message else f"{display_name} finished."
        if result.get("level") not in LEVELS:
            text = plain_text(f"{display_name} returned a result with an unknown level {result.get('level')!r}.")
        return CommandOutcome(str(level), text, list(reports))
    return CommandOutcome("success", f"{display_name} finished.", list(reports), value=plain_value(answer.get("value")))


def _apply_staged(display_name: str, outcome: CommandOutcome, staged: dict[str, Any], tab: ActiveTab | None) -> None:
    """Commit the thread a command staged with `writeThread` into its tab, or discard it (an
    error outcome, no tab, an invalid thread, a tab changed meanwhile), saying which in
    `outcome.write_note`."""
    if outcome.level == "error" or tab is None:
        outcome.write_note = "The staged thread write was discarded because the command reported an error."
        return
    try:
        thread = thread_from_data(copy.deepcopy(staged), "the thread the command wrote")
    except UserFacingError as exc:  # the command did not do what it meant to: an error, not a success
        outcome.level = "error"
        outcome.message = f"{display_name} wrote a thread that is not valid, so nothing was saved."
        outcome.write_note = f"The staged thread write was discarded: {plain_text(exc.message)}"
        return
    if thread.title:
        thread.title = strip_bidi(thread.title)  # the title becomes the file name
    conflict = tab.commit(thread)
    if conflict:
        outcome.write_note = f"The staged thread write was discarded: {conflict}"
        return
    outcome.committed = True
    outcome.write_note = f"{tab.filename} was updated."


# -- thread storages -----------------------------------------------------------------------

@dataclass(frozen=True)
class StorageItem:
    """A thread a storage's `list` names: its resource ID, title and `updatedAt` ("" if none)."""

    id: str
    title: str
    updated_at: str = ""


@dataclass(frozen=True)
class StoragePage:
    """One page of `list`; `next_cursor` is None on the last page."""

    items: list[StorageItem]
    next_cursor: str | None = None


class PluginStorage:
    """A plugin thread storage (`plugin:<name>:thread-storage:<stem>`)."""

    def __init__(self, route: CallRoute, ref: ExtensionRef, meta: dict[str, Any], *,
                 on_error: Callable[[str, CallFailed], None]) -> None:
        self.route, self.ref, self.on_error = route, ref, on_error
        self.display_name = plain_text(str(meta.get("displayName") or ref.id))
        self.description = plain_text(str(meta.get("description") or ""))
        link = meta.get("deepLinkId")
        self.deep_link_id: str | None = link if isinstance(link, str) and link else None
        caps = meta.get("capabilities") if isinstance(meta.get("capabilities"), dict) else {}
        assert isinstance(caps, dict)
        self.can_read, self.can_write = caps.get("read") is True, caps.get("write") is True
        self.can_list = self.can_read and caps.get("list") is True  # the optional `list` (our extension)

    @property
    def canonical_id(self) -> str:
        return self.ref.canonical_id

    def _call(self, method: str, payload: dict[str, Any], cancel: CancelToken | None) -> Any:
        try:
            answer = self.route.call(self.ref.plugin, self.ref.runtime, "thread-storage", self.ref.id, method,
                                     payload, {}, timeout=STORAGE_TIMEOUT, cancel=cancel)
        except CallFailed as exc:
            self.on_error(self.canonical_id, exc)
            raise CallFailed(f"{self.display_name}: {exc.message}", kind=exc.kind, hint=exc.hint or "") from None
        return answer.get("value") if answer.get("type") == "value" else answer.get("result")

    def resolve_latest(self, resource_id: str, cancel: CancelToken | None = None) -> dict[str, Any]:
        self._need("read")
        return self._locator(self._call("resolveLatest", {"id": resource_id}, cancel), "resolve_latest")

    def read(self, locator: dict[str, Any], cancel: CancelToken | None = None) -> Thread:
        self._need("read")
        data = self._call("read", {"locator": locator}, cancel)
        return thread_from_data(data, f"the thread {self.display_name} returned")

    def write(self, thread: Thread, resource_id: str | None, cancel: CancelToken | None = None) -> dict[str, Any]:
        self._need("write")
        return self._locator(self._call("write", {"thread": thread_to_data(thread), "id": resource_id}, cancel), "write")

    def list_items(self, query: str = "", cursor: str | None = None, cancel: CancelToken | None = None) -> StoragePage:
        """One page of what the storage holds (its optional `list`), filtered by `query`."""
        if not self.can_list:
            raise UserFacingError(f"{self.display_name} cannot list what it holds.",
                                  hint="Give the resource ID the storage knows the thread by.")
        payload = {k: v for k, v in (("query", query), ("cursor", cursor)) if v}
        return self._page(self._call("list", payload, cancel))

    def _page(self, value: Any) -> StoragePage:
        where = f"{self.display_name}: list must return {{items: [{{id, title, updatedAt?}}], nextCursor?}}"
        if not isinstance(value, dict) or not isinstance(value.get("items"), list):
            raise UserFacingError(f"{where}.")
        items: list[StorageItem] = []
        for n, item in enumerate(value["items"]):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
                raise UserFacingError(f"{where}: items[{n}] has no non-empty string \"id\".")
            title, updated = item.get("title"), item.get("updatedAt")
            items.append(StorageItem(item["id"], plain_text(title if isinstance(title, str) and title else item["id"]),
                                     plain_text(updated) if isinstance(updated, str) else ""))
        cursor = value.get("nextCursor")
        return StoragePage(items, cursor if isinstance(cursor, str) and cursor else None)

    def _need(self, capability: str) -> None:
        if not (self.can_read if capability == "read" else self.can_write):
            verb = "import from" if capability == "read" else "save to"
            raise UserFacingError(f"{self.display_name} cannot {verb}: it does not declare {capability!r}.")

    def _locator(self, value: Any, method: str) -> dict[str, Any]:
        if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"]:
            raise UserFacingError(f"{self.display_name}: {method} must return a locator with a non-empty string \"id\".")
        for key in ("version", "filename"):
            if key in value and value[key] is not None and not isinstance(value[key], (str, int, float)):
                raise UserFacingError(f"{self.display_name}: the locator's {key!r} must be a string.")
        return value

