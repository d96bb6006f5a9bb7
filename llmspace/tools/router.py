"""The tool router: resolves each tool call of a turn to its executor and runs them.

    router.execute_calls(tools, calls, ctx, cancel, timeout) -> [ToolCallOutput, …]

Executors live in a `Registry` of the one mechanism (`llmspace/registry.py`; the app's is
`app.registries.tools`), keyed by the tool's canonical ID (`tool_id`): each built-in is
`builtin:tool:<name>`, MCP tools go through `mcp` (`ctx.mcp.call_tool(serverId, toolName, …)`),
custom function tools through `function` (which never runs: a human supplies the result and
the run loop pauses first, see `pause_for`) — all registered at construction with source
`built-in`. Plugin tools (`type: "plugin"`) are found by their `toolId`
(`plugin:<name>:tool:<stem>`, registered with `register_executor`); with none registered the
call fails as "<name> is unavailable (<why>)", the reason coming from `explain_missing`
when set. A tool of another type is found by its `extensionId` key, else by its type.
Arguments are checked against the tool's JSON Schema first. Every failure becomes an error
output, never an exception.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from ..cancel import CancelToken
from ..core.model import Tool, ToolCall, ToolCallOutput
from ..registry import BUILTIN, Registry
from .base import CallEnv, ToolContext, ToolError, error_output, serialise_result, text_output
from .safety import is_dangerous_bash
from .validation import check_arguments

# executor(tool, arguments, ctx, cancel, timeout) -> ToolCallOutput | str | JSON value
Executor = Callable[[Tool, dict[str, Any], ToolContext, CancelToken, "float | None"], object]

log = logging.getLogger("llmspace.tools.router")

CANCELLED = "Cancelled"
MCP = "mcp"
FUNCTION = "function"
PLUGIN = "plugin"


@dataclass(frozen=True)
class ToolPause:
    """Why auto-run stops before a tool call: `reason` is shown to the user; `risky` is True
    when the call can run once a human confirms it (a risky bash command), False when a human
    must supply its result (custom function tools, `ask_user_question`, …)."""

    reason: str
    risky: bool = False


def builtin_id(name: str) -> str:
    """The canonical ID of the built-in tool `name`."""
    return f"builtin:tool:{name}"


def tool_id(tool: Tool) -> str:
    """The canonical ID of the executor that runs `tool`: a plugin tool's `toolId`
    (`plugin:<name>:tool:<stem>`); otherwise an `extensionId` key, else the tool type."""
    if tool.type == "builtin":
        return builtin_id(tool.name)
    if tool.type in (MCP, FUNCTION):
        return tool.type
    if tool.type == PLUGIN and tool.toolId:
        return tool.toolId
    extension = getattr(tool, "extensionId", None)  # a tool of another type may carry its canonical ID (extra key)
    return extension if isinstance(extension, str) and extension else tool.type


def _run_mcp(tool: Tool, arguments: dict[str, Any], ctx: ToolContext, cancel: CancelToken,
             timeout: float | None) -> object:
    if ctx.mcp is None:
        raise ToolError(f"MCP is not available to run {tool.name}.")
    if not tool.serverId or not tool.toolName:
        raise ToolError(f"The MCP tool {tool.name} has no serverId or toolName; re-import it from its server.")
    if ctx.elicit is None:  # nobody answers a server's request for input: the hub declines it
        return ctx.mcp.call_tool(tool.serverId, tool.toolName, arguments, timeout=timeout, cancel=cancel)
    return ctx.mcp.call_tool(tool.serverId, tool.toolName, arguments, timeout=timeout, cancel=cancel, elicit=ctx.elicit)


def _needs_human(tool: Tool, arguments: dict[str, Any], ctx: ToolContext, cancel: CancelToken,
                 timeout: float | None) -> object:
    raise ToolError(f"{tool.name} is a custom function tool: it needs a result supplied by a human.")


class ToolRouter:
    """Runs tool calls; one instance per app (stateless apart from its executors registry).

    `executors`: the tools registry to fill and resolve from (a fresh one when None);
    `settings`: overrides for built-ins (tests), e.g. {"opener": fn, "grep_fallback": True}."""

    def __init__(self, executors: Registry[Executor] | None = None, *, settings: dict[str, Any] | None = None) -> None:
        self.executors: Registry[Executor] = executors if executors is not None else Registry("tool")
        self.settings: dict[str, Any] = dict(settings or {})
        # Why a plugin tool's canonical ID has no executor (e.g. "plugin kit is disabled"), or
        # None to say the default; set by the composition root.
        self.explain_missing: Callable[[str], str | None] | None = None
        from .builtins.definitions import DEFINITIONS

        for definition in DEFINITIONS:
            name = str(definition["name"])
            self.executors.register(builtin_id(name), self._builtin(name), source=BUILTIN)
        self.executors.register(MCP, _run_mcp, source=BUILTIN)
        self.executors.register(FUNCTION, _needs_human, source=BUILTIN)

    # -- registration ----------------------------------------------------------------------
    def register_executor(self, canonical_id: str, executor: Executor, *, source: str = BUILTIN) -> None:
        """Add the executor of tools with this canonical ID (`plugin:<name>:tool:<stem>`, or a tool type)."""
        self.executors.register(canonical_id, executor, source=source)

    def _builtin(self, name: str) -> Executor:
        def run_builtin(tool: Tool, arguments: dict[str, Any], ctx: ToolContext, cancel: CancelToken,
                        timeout: float | None) -> object:
            from .builtins import get_implementation

            impl = get_implementation(name)
            if impl is None:
                raise ToolError(f"Built-in tool not found: {name}")
            return impl(arguments, CallEnv(ctx=ctx, cancel=cancel, timeout=timeout, settings=self.settings))

        return run_builtin

    # -- auto-run policy ---------------------------------------------------------------------
    def pause_for(self, tools: list[Tool], calls: list[ToolCall]) -> ToolPause | None:
        """Why auto-run must stop before these calls, or None. One such call pauses the
        whole batch (as in the original LLM Space app). The batch is `risky` only when no call needs a human answer
        (then confirming runs them all); otherwise the reason is that of a call a human answers."""
        pauses = [p for p in self.pauses(tools, calls) if p is not None]
        if not pauses:
            return None
        return next((p for p in pauses if not p.risky), pauses[0])

    def pauses(self, tools: list[Tool], calls: list[ToolCall]) -> list[ToolPause | None]:
        """Per call: why it must not run automatically, or None (answered calls: None)."""
        by_name = {t.name: t for t in tools}
        return [None if c.output is not None else self.call_pause(by_name.get(c.input.name), c) for c in calls]

    @staticmethod
    def call_pause(tool: Tool | None, call: ToolCall) -> ToolPause | None:
        """Why this one call needs a human (non-executable tool, or risky bash to confirm), or None."""
        name = call.input.name
        if tool is None:
            return None  # executing it gives an error result the model can read
        if tool.type == "function":
            return ToolPause(f"{name} is a custom function tool: supply its result to continue.")
        if tool.type == "builtin" and not tool.is_executable():
            return ToolPause(f"{name} needs a human answer.")
        if tool.type == "builtin" and name == "bash":
            command = call.input.arguments.get("command")
            if isinstance(command, str) and is_dangerous_bash(command):
                return ToolPause("Auto-run paused for a risky command.", risky=True)
        return None

    # -- execution -----------------------------------------------------------------------------
    def execute_calls(
        self,
        tools: list[Tool],
        calls: list[ToolCall],
        ctx: ToolContext,
        cancel: CancelToken | None = None,
        timeout: float | None = None,
        on_timed: Callable[[int, float, float], None] | None = None,
        around: Callable[[int], AbstractContextManager[Any]] | None = None,
    ) -> list[ToolCallOutput]:
        """Run the calls concurrently; one output per call, in the order of `calls`.
        `on_timed(index, started, duration_ms)` hears when each call started (epoch seconds)
        and how long it took (for its trace), on the thread that ran it. `around(index)` is a
        context entered on that thread while the call runs (a trace span); the threads that run
        calls start in the caller's `contextvars` context, so what it makes current reaches the tool."""
        by_name = {t.name: t for t in tools}
        if not calls:
            return []

        def run(index: int, call: ToolCall) -> ToolCallOutput:
            started, clock = time.time(), time.perf_counter()
            try:
                with around(index) if around is not None else nullcontext():
                    return self.execute(by_name.get(call.input.name), call, ctx, cancel, timeout)
            finally:
                if on_timed is not None:
                    on_timed(index, started, (time.perf_counter() - clock) * 1000)

        if len(calls) == 1:
            return [run(0, calls[0])]
        with ThreadPoolExecutor(max_workers=min(len(calls), 16), thread_name_prefix="tool-call") as pool:
            futures = [pool.submit(contextvars.copy_context().run, run, i, c) for i, c in enumerate(calls)]
            return [f.result() for f in futures]

    def execute(
        self,
        tool: Tool | None,
        call: ToolCall,
        ctx: ToolContext,
        cancel: CancelToken | None = None,
        timeout: float | None = None,
    ) -> ToolCallOutput:
        """Run one call; failures, timeouts and cancellation come back as error outputs."""
        name = call.input.name
        if tool is None:
            return error_output(f"Built-in tool not found: {name}")
        if cancel is not None and cancel.cancelled:
            return error_output(CANCELLED)
        if call.input.partialArguments and not call.input.arguments:
            return error_output(f"The arguments for {name} are not valid JSON: {call.input.partialArguments}")
        arguments = dict(call.input.arguments or {})
        if tool.type == "builtin":
            arguments = _drop_null_optionals(tool, arguments)
        problem = check_arguments(tool, arguments)
        if problem:
            return error_output(problem)
        key = tool_id(tool)
        executor = self.executors.get(key)  # looked up once per call
        if executor is None:
            return error_output(self._missing(tool, key))

        def run(token: CancelToken, limit: float | None) -> object:
            return executor(tool, arguments, ctx, token, limit)

        if getattr(executor, "self_bounded", False):
            return self._run_inline(run, cancel, timeout)
        return self._run_bounded(run, cancel, timeout)

    # -- internals -------------------------------------------------------------------------------

    def _missing(self, tool: Tool, key: str) -> str:
        conflict = next((c for c in self.executors.conflicts() if c.canonical_id == key), None)
        if conflict is not None:
            return conflict.message + "."
        if tool.type == "builtin":
            return f"Built-in tool not found: {tool.name}"
        if tool.type == PLUGIN:
            why = self._why_missing(key) or f"plugin {tool.pluginId or '?'} is disabled or removed"
            return f"{tool.name} is unavailable ({why})."
        return f"No executor for {tool.type} tool {tool.name}."

    def _why_missing(self, key: str) -> str | None:
        if self.explain_missing is None:
            return None
        try:
            return self.explain_missing(key)
        except Exception:  # a failing explanation must not hide the unavailable tool
            log.warning("explain_missing failed for %s", key, exc_info=True)
            return None

    def _run_inline(self, fn: Callable[[CancelToken, float | None], Any], cancel: CancelToken | None,
                    timeout: float | None) -> ToolCallOutput:
        """Run an executor that honours its cancel token and timeout itself (`self_bounded`,
        e.g. a plugin tool: its host call waits with both) on this thread: no worker thread
        and no hand-off per call."""
        try:
            return _to_output(fn(cancel if cancel is not None else CancelToken(), timeout))
        except Exception as exc:  # every failure is a tool result
            if cancel is not None and cancel.cancelled:
                return error_output(CANCELLED)
            return error_output(_message(exc))

    def _run_bounded(self, fn: Callable[[CancelToken, float | None], Any], cancel: CancelToken | None, timeout: float | None) -> ToolCallOutput:
        """Run `fn` on a worker thread; stop waiting at the timeout or on cancel."""
        child = CancelToken()
        done = threading.Event()
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = fn(child, timeout)
            except BaseException as exc:  # every failure is a tool result
                box["error"] = exc
            finally:
                box["clean"] = not child.cancelled  # finished before being told to stop
                done.set()

        if cancel is not None:
            cancel.on_cancel(child.cancel)
        child.on_cancel(done.set)
        worker = threading.Thread(target=contextvars.copy_context().run, args=(work,), name="tool-worker", daemon=True)
        worker.start()
        if not done.wait(timeout):
            child.cancel()
            return error_output(f"Tool call timed out after {_seconds(timeout)}s")
        if not box.get("clean"):
            return error_output(CANCELLED)
        if "error" in box:
            return error_output(_message(box["error"]))
        return _to_output(box["value"])


def _drop_null_optionals(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """Built-ins: an optional parameter sent as null (strict-mode habit) counts as absent."""
    required = set((tool.parameters or {}).get("required") or [])
    return {k: v for k, v in arguments.items() if v is not None or k in required}


def _to_output(value: Any) -> ToolCallOutput:
    if isinstance(value, ToolCallOutput):
        return value
    return text_output(serialise_result(value), False)


def _message(exc: BaseException) -> str:
    if isinstance(exc, ToolError):
        return str(exc)
    text = str(exc).strip()
    return text or type(exc).__name__


def _seconds(timeout: float | None) -> str:
    if timeout is None:
        return "?"
    return f"{timeout:g}"
