"""Tool calls a human starts outside a run: "Call this tool" on a card, "Call tools" on a
message, and "Run the tools anyway" after a pause for a risky command.

    future = runner.call_tools(snapshot, ["call_1", "call_2"])   # `Runner.call_tools`
    future.result()   # {"call_1": ToolCallOutput, …}
    future.cancel()   # Stop: the calls end within about a second as "Cancelled" errors

The calls run as the run loop runs them (`tools/router.py`, the thread's tools and working
directory), on the runner's pool. `ToolCallsFuture` owns the CancelToken handed to the router,
so `cancel()` stops work already started (a plain `Future.cancel()` could only drop work that
had not begun); it also stops when the runner closes. Error outputs have every known secret
removed, as in a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from ..cancel import CancelToken
from ..core.model import Thread, ToolCall, ToolCallOutput
from ..errors import UserFacingError
from .run_services import RunServices
from .services import redactor_for, tool_context


class ToolCallsFuture(Future[dict[str, ToolCallOutput]]):
    """The outputs of some tool calls, by call id; `cancel()` really stops them.

    `cancel()` sets `token` (the calls in flight end with a "Cancelled" error output, and the
    future then completes with those outputs) and returns True only when the work had not
    started yet, as `Future.cancel` does."""

    def __init__(self) -> None:
        super().__init__()
        self.token = CancelToken()

    def cancel(self) -> bool:
        self.token.cancel()
        return super().cancel()


def find_calls(thread: Thread, call_ids: Sequence[str]) -> list[ToolCall]:
    """The calls with these ids (the latest message holding each), without their outputs."""
    found: dict[str, ToolCall] = {}
    for message in reversed(thread.messages):
        for call in getattr(message, "toolCalls", None) or []:
            found.setdefault(call.id, call)
    missing = [cid for cid in call_ids if cid not in found]
    if missing:
        raise UserFacingError(f"No tool call {missing[0]!r} in this thread.", hint="The thread may have changed; look again.")
    return [found[cid].model_copy(update={"output": None}) for cid in call_ids]


def run_calls(services: RunServices, thread: Thread, calls: list[ToolCall], cancel: CancelToken,
              variables: dict[str, str] | None = None, timeout: float | None = None,
              elicit: Any = None) -> dict[str, ToolCallOutput]:
    """Run `calls` with `thread`'s tools (blocking); one output per call id. `elicit` answers
    MCP servers' requests for input (None declines them)."""
    tools = list(thread.context.tools or []) if thread.context is not None else []
    outputs = services.tools.execute_calls(tools, calls, tool_context(services, thread, variables, elicit), cancel, timeout)
    redactor = redactor_for(None)
    result: dict[str, ToolCallOutput] = {}
    for call, out in zip(calls, outputs, strict=True):
        if out.isError is True:
            out = out.with_texts(redactor.text)
        result[call.id] = out
    return result
