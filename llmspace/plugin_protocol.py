"""The plugin host protocol in one place: the method names, parameter and result shapes and
error codes of docs/plugin-protocol.md (JSON-RPC 2.0 between the app and a plugin host).

    from llmspace import plugin_protocol as p
    conn.send(p.EXECUTE, p.ExecuteParams(callId="c1", kind=p.TOOL, id="echo", method="execute",
                                         input={"arguments": {}}, context={}))
    if error.code == p.CANCELLED: ...

Imported by both ends: the app side (llmspace/plugins/hosts/) and the Python host
(llmspace/plugin_host/). Standard library only, and nothing of the app, because the host
imports nothing of the app but `plugin_api.py` and this module. The JavaScript host keeps
the same table in llmspace/plugin_host/js/protocol.mjs; tests/plugin_host/test_protocol.py
checks that both hosts implement exactly what is named here.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

PROTOCOL_VERSION = 1

# -- methods the app calls on the host (Lifecycle) -------------------------------------------
INITIALIZE = "initialize"
EXECUTE = "execute"
CANCEL = "cancel"  # a notification
SHUTDOWN = "shutdown"
PING = "ping"
HOST_METHODS = (INITIALIZE, EXECUTE, CANCEL, SHUTDOWN, PING)

# -- callbacks: methods the host calls on the app while a call runs (Callbacks) ---------------
NOTIFY = "notify"
OPEN_LINK = "openLink"
PICK_FILE = "pickFile"
READ_WORKSPACE_FILE = "readWorkspaceFile"
WRITE_WORKSPACE_FILE = "writeWorkspaceFile"
EXECUTE_HOST_COMMAND = "executeHostCommand"
REPORT = "report"  # commands only
WRITE_THREAD = "writeThread"  # commands only, through `activeTab`
COMMON_CALLBACKS = (NOTIFY, OPEN_LINK, PICK_FILE, READ_WORKSPACE_FILE, WRITE_WORKSPACE_FILE, EXECUTE_HOST_COMMAND)
COMMAND_CALLBACKS = (REPORT, WRITE_THREAD)
CALLBACKS = COMMON_CALLBACKS + COMMAND_CALLBACKS

# -- extension kinds and the methods `execute` may name for each ------------------------------
TOOL = "tool"
COMMAND = "command"
THREAD_STORAGE = "thread-storage"
KINDS = (TOOL, COMMAND, THREAD_STORAGE)
EXTENSION_METHODS: dict[str, tuple[str, ...]] = {
    TOOL: ("execute",),
    COMMAND: ("execute",),
    THREAD_STORAGE: ("resolveLatest", "read", "write", "list"),  # `list`: optional, our extension
}
CALLBACKS_OF: dict[str, tuple[str, ...]] = {
    TOOL: COMMON_CALLBACKS,
    COMMAND: CALLBACKS,
    THREAD_STORAGE: COMMON_CALLBACKS,
}

# -- values the protocol names ------------------------------------------------------------------
NOTIFY_LEVELS = ("info", "warning", "error")
RESULT_LEVELS = ("success", "warning", "error")  # a command's `createResult({level, message})`
HOST_COMMANDS = ("openSettings", "refreshTree")  # what `executeHostCommand` may ask
LINK_SCHEMES = ("http", "https", "mailto")  # what `openLink` opens
ERROR_STAGES = ("import", "constructor", "contract")  # `error.stage` of a failed extension
ANSWER_TYPES = ("value", "result")  # `type` of an `execute` answer
DEFAULT_CANCEL_REASON = "Cancelled"

# -- error codes ---------------------------------------------------------------------------------
RAISED = -32000  # the extension raised/threw; data: {name, message, stack}
CANCELLED = -32001  # the call ended after its signal fired; data: {reason}
UNAVAILABLE = -32002  # unknown or failed extension, a missing method, a finished call; data: {reason}
NOT_JSON = -32003  # the return value is not JSON; data: {type, where}
REFUSED = -32010  # the app refused a callback (its message is raised to the plugin)
PARSE_ERROR = -32700  # JSON-RPC: a line that is not JSON
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
ERROR_CODES = {
    "RAISED": RAISED, "CANCELLED": CANCELLED, "UNAVAILABLE": UNAVAILABLE, "NOT_JSON": NOT_JSON,
    "REFUSED": REFUSED, "PARSE_ERROR": PARSE_ERROR, "INVALID_REQUEST": INVALID_REQUEST,
    "METHOD_NOT_FOUND": METHOD_NOT_FOUND, "INVALID_PARAMS": INVALID_PARAMS, "INTERNAL_ERROR": INTERNAL_ERROR,
}


# -- shapes: initialize --------------------------------------------------------------------------
class PluginInfo(TypedDict):
    name: str
    version: str
    root: str


class CodeFileParams(TypedDict):
    kind: str  # one of KINDS
    id: str
    path: str


class InitializeParams(TypedDict):
    protocolVersion: int
    appVersion: str
    plugin: PluginInfo
    workspace: str
    files: list[CodeFileParams]


class RuntimeInfo(TypedDict):
    name: str
    version: NotRequired[str]


class ExtensionError(TypedDict):
    stage: str  # one of ERROR_STAGES (the app adds "host" and "runtime" of its own)
    message: str
    stack: NotRequired[str]


class ExtensionReport(TypedDict):
    kind: str  # one of KINDS
    id: str
    status: Literal["active", "failed"]
    metadata: NotRequired[dict[str, Any]]
    error: NotRequired[ExtensionError]


class InitializeResult(TypedDict):
    runtime: RuntimeInfo
    extensions: list[ExtensionReport]


# -- shapes: execute, cancel, shutdown -----------------------------------------------------------
class ExecuteParams(TypedDict):
    callId: str
    kind: str  # one of KINDS
    id: str
    method: str  # one of EXTENSION_METHODS[kind]
    input: dict[str, Any]
    context: dict[str, Any]


class ValueAnswer(TypedDict):
    type: Literal["value"]
    value: Any


class ResultAnswer(TypedDict):
    type: Literal["result"]
    result: dict[str, Any]


ExecuteResult = ValueAnswer | ResultAnswer


class ListInput(TypedDict):
    """`input` of a storage's optional `list` (our extension of the guide)."""

    cursor: NotRequired[str]
    query: NotRequired[str]


class ListItem(TypedDict):
    id: str  # the resource ID `resolveLatest` takes
    title: str
    updatedAt: NotRequired[str]


class ListResult(TypedDict):
    """What `list` returns (the `value` of its answer); no `nextCursor` on the last page."""

    items: list[ListItem]
    nextCursor: NotRequired[str]


class CancelParams(TypedDict):
    callId: str
    reason: NotRequired[str]


class DisposeFailure(TypedDict):
    id: str
    message: str


class ShutdownResult(TypedDict):
    disposed: list[str]
    failed: list[DisposeFailure]


class RaisedData(TypedDict):
    """`data` of a RAISED error."""

    name: str
    message: str
    stack: str


class NotJsonData(TypedDict):
    """`data` of a NOT_JSON error."""

    type: str
    where: str


# -- shapes: callbacks (each also carries the `callId` of its call) -------------------------------
class NotifyParams(TypedDict):
    callId: str
    message: str
    level: NotRequired[str]


class OpenLinkParams(TypedDict):
    callId: str
    url: str


class PickFileParams(TypedDict):
    callId: str
    options: dict[str, Any]


class ReadWorkspaceFileParams(TypedDict):
    callId: str
    path: str


class WriteWorkspaceFileParams(TypedDict):
    callId: str
    path: str
    content: str


class ExecuteHostCommandParams(TypedDict):
    callId: str
    type: str
    args: NotRequired[Any]


class ReportParams(TypedDict):
    callId: str
    phase: str
    message: NotRequired[str]


class WriteThreadParams(TypedDict):
    callId: str
    thread: dict[str, Any]


def table() -> dict[str, Any]:
    """The protocol's names and codes as plain JSON (what the JavaScript host's
    protocol.mjs must hold, compared by tests/plugin_host/test_protocol.py)."""
    return {
        "PROTOCOL_VERSION": PROTOCOL_VERSION,
        "HOST_METHODS": list(HOST_METHODS),
        "COMMON_CALLBACKS": list(COMMON_CALLBACKS),
        "COMMAND_CALLBACKS": list(COMMAND_CALLBACKS),
        "KINDS": list(KINDS),
        "EXTENSION_METHODS": {k: list(v) for k, v in EXTENSION_METHODS.items()},
        "NOTIFY_LEVELS": list(NOTIFY_LEVELS),
        "RESULT_LEVELS": list(RESULT_LEVELS),
        "ERROR_STAGES": list(ERROR_STAGES),
        "DEFAULT_CANCEL_REASON": DEFAULT_CANCEL_REASON,
        **ERROR_CODES,
    }
