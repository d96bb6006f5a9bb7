"""Run controls of one tab: can it run, start, stop, fold live events into the editor's
thread, tool-call status, pauses (risky tools, function tools waiting for a result) — no Tk.

Threading: `start()` snapshots the thread on the UI thread and hands the clone to
`app.runner.submit(...)`. The runner calls `on_event` from its worker thread; that only
forwards to the `post`/`post_text` functions given (the UI pump), so folding happens on the
UI thread. Streamed text for one message arrives coalesced, one string per frame.

Callers: `ui/editor/run_bar.py`, tests (with a synchronous `post`).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from ..core.model import AssistantMessage, TextContent, ToolCall, ToolCallInput, ToolCallOutput
from ..core.threadio import clone_thread
from ..errors import UserFacingError, describe_exception
from .editor import EditorPresenter

log = logging.getLogger("llmspace.presenters.run")

Post = Callable[..., None]
PostText = Callable[[Any, str, Callable[[str], Any]], None]


def _options_class() -> Any:
    for mod in ("llmspace.agent.runner", "llmspace.agent.options", "llmspace.agent.loop", "llmspace.agent"):
        try:
            module = __import__(mod, fromlist=["RunOptions"])
        except ImportError:
            continue
        cls = getattr(module, "RunOptions", None)
        if cls is not None:
            return cls
    return None


def _cancel_token() -> Any:
    from ..providers.base import CancelToken

    return CancelToken()


class RunPresenter:
    """State of the run (if any) of one editor."""

    def __init__(self, editor: EditorPresenter, app: Any) -> None:
        self.editor = editor
        self.app = app
        self.status = "idle"  # idle | running | paused | error
        self.error: str | None = None
        self.error_message_id: str | None = None
        self.pause_reason: str | None = None
        self.paused_calls: list[Any] = []
        self.tool_status: dict[str, str] = {}
        self.future: Any = None
        self.cancel: Any = None
        self.started_at = 0.0
        self.listeners: list[Callable[[str, Any], None]] = []
        self.detached = False  # set when the view closed while running
        self._latest: dict[Any, Any] = {}
        self.warnings: list[str] = []  # render warnings of the last run (`RunResult.warnings`)
        self.retry_note: str | None = None  # "Retrying in 1.0 s (attempt 2): …" while a call is retried
        self.stopped = False  # the last run was stopped by the user (status shows "Stopped", not "Done")

    def notify(self, kind: str, detail: Any = None) -> None:
        for fn in list(self.listeners):
            fn(kind, detail)

    @property
    def running(self) -> bool:
        return self.status == "running"

    # -- checks --------------------------------------------------------------------------
    def check(self, from_index: int | None = None) -> None:
        """Raise UserFacingError when the thread cannot run (as the original's rules)."""
        if self.running:
            raise UserFacingError("This thread is already running.", hint="Stop it first.")
        msgs = self.editor.thread.messages
        if from_index is not None:
            msgs = msgs[: from_index + 1]
        if not msgs:
            return
        last = msgs[-1]
        if last.role == "user" or (last.role == "assistant" and last.toolCalls):
            return
        raise UserFacingError("The last message must be a user message or a tool call result.",
                              hint="Add a user message, or run from an earlier message.")

    def runner_available(self) -> bool:
        try:
            return self.app.runner is not None and _options_class() is not None
        except Exception:
            return False

    # -- intents -------------------------------------------------------------------------
    def start(self, post: Post, post_text: PostText, *, auto_tools: bool = False, react: bool = False,
              from_message_id: str | None = None, tool_results: dict[str, tuple[str, bool]] | None = None) -> None:
        from_index = self.editor.index_of(from_message_id) if from_message_id else None
        self.check(from_index)
        opts_cls = _options_class()
        try:
            runner = self.app.runner
        except UserFacingError:  # e.g. the settings folder cannot be made: its own message says what to do
            raise
        except Exception as exc:
            raise UserFacingError(f"Running is not available: {describe_exception(exc)}") from None
        if opts_cls is None:
            raise UserFacingError("Running is not available in this build yet.")
        self.editor.checkpoint(None)  # the cut and the whole run are one undo step
        if from_index is not None and from_index < len(self.editor.thread.messages) - 1:
            del self.editor.thread.ensure_messages()[from_index + 1:]
            self.editor.notify("messages")
        snapshot = clone_thread(self.editor.thread)
        kwargs: dict[str, Any] = {"auto_tools": auto_tools or react, "react": react}
        if tool_results:
            kwargs["tool_results"] = tool_results
        opts = opts_cls(**kwargs)
        self.cancel = _cancel_token()
        self.stopped = False
        self.status, self.error, self.error_message_id = "running", None, None
        self.pause_reason, self.paused_calls = None, []
        self.tool_status.clear()
        self.warnings = []
        self.retry_note: str | None = None
        self.started_at = time.monotonic()
        self.editor.read_only = True
        self.editor.notify("readonly", True)
        self.notify("status", self.status)

        def on_event(ev: Any) -> None:  # worker thread: forward only
            name = type(ev).__name__
            if name == "TextDelta":
                post_text((id(self), ev.message_id, "text"), ev.text, lambda s, m=ev.message_id: self.append_text(m, s))
            elif name == "ThinkingDelta":
                post_text((id(self), ev.message_id, "thinking"), ev.text, lambda s, m=ev.message_id: self.append_thinking(m, s))
            elif name == "ToolCallDelta":
                # arguments_text is cumulative: only the latest per call matters, once per frame
                key = (id(self), ev.message_id, ev.call_id, "args")
                self._latest[key] = ev
                post_text(key, ".", lambda _s, k=key: self.apply(self._latest.pop(k)) if k in self._latest else None)
            else:
                post(self.apply, ev)

        try:
            self.future = runner.submit(snapshot, opts, on_event=on_event, cancel=self.cancel)
        except Exception as exc:
            self._finish_error(exc)
            raise
        self.future.add_done_callback(lambda f: post(self._done, f))

    def stop(self) -> None:
        if self.cancel is not None and self.running:
            self.stopped = True
            self.cancel.cancel()
            self.notify("status", "stopping")

    def detach(self) -> None:
        """The view is going away: stop the run, drop listeners, save the outcome when it ends."""
        self.detached = True
        self.listeners.clear()
        self.editor.listeners.clear()
        self.stop()

    def save_partial(self) -> None:
        """On quit during a run: write what has streamed so far (the run is being stopped)."""
        self.stop()
        self.editor.read_only = False
        self.editor.dirty = True
        self.editor.save()

    # -- folding (UI thread) -------------------------------------------------------------
    def _message(self, message_id: str) -> AssistantMessage | None:
        for m in reversed(self.editor.thread.messages):
            if m.id == message_id:
                return m  # type: ignore[return-value]
        return None

    def _ensure_message(self, message_id: str) -> AssistantMessage:
        msg = self._message(message_id)
        if msg is None:
            msg = AssistantMessage(id=message_id, role="assistant", content=[TextContent(type="text", text="")])
            self.editor.thread.ensure_messages().append(msg)
            self.editor.notify("messages", "stream")
        return msg

    def append_text(self, message_id: str, text: str) -> None:
        msg = self._ensure_message(message_id)
        parts = [c for c in msg.content if isinstance(c, TextContent)]
        if parts:
            parts[-1].text += text
        else:
            msg.content = list(msg.content) + [TextContent(type="text", text=text)]
        self.editor.notify("stream_text", (message_id, text))

    def append_thinking(self, message_id: str, text: str) -> None:
        msg = self._ensure_message(message_id)
        msg.thinking = (msg.thinking or "") + text
        self.editor.notify("stream_thinking", (message_id, text))

    def apply(self, ev: Any) -> None:
        name = type(ev).__name__
        mid = getattr(ev, "message_id", None)
        if name == "MessageStarted" and mid:
            self._ensure_message(mid)
        elif name == "ToolCallDelta" and mid:
            self._tool_delta(mid, ev)
        elif name == "MessageFinished":
            if getattr(ev, "kept", True) is False and mid:
                lst = self.editor.thread.ensure_messages()
                lst[:] = [m for m in lst if m.id != mid]
            self.editor.notify("messages", "finished")
        elif name == "ToolStarted":
            self.tool_status[getattr(ev, "call_id", "")] = "running"
            self.notify("tool", ev)
        elif name == "ToolFinished":
            cid = getattr(ev, "call_id", "")
            self.tool_status[cid] = "error" if getattr(ev, "is_error", False) else "done"
            out = getattr(ev, "output", None)
            if isinstance(out, ToolCallOutput):
                self.tool_status[cid] = "error" if out.isError else "done"
                self._tool_output(cid, out)
            self.notify("tool", ev)
        elif name == "Paused":
            self.pause_reason = getattr(ev, "reason", None)
            self.paused_calls = list(getattr(ev, "calls", []) or [])
            self.notify("paused", ev)
        elif name == "Retrying":
            self.retry_note = (f"Retrying in {getattr(ev, 'delay', 0):.1f} s (attempt {getattr(ev, 'attempt', '?')}): "
                               f"{getattr(ev, 'reason', '')}")
            self.notify("retrying", self.retry_note)
        elif name == "RunFinished":
            self._adopt_result(getattr(ev, "result", None))
        elif name == "RunError" or name == "ErrorEvent":
            self.error = str(getattr(ev, "message", ev))
            self.notify("error", self.error)

    def _tool_delta(self, mid: str, ev: Any) -> None:
        msg = self._ensure_message(mid)
        cid = getattr(ev, "call_id", None) or getattr(ev, "id", None) or ""
        calls = list(msg.toolCalls or [])
        call = next((c for c in calls if c.id == cid), None)
        if call is None:
            call = ToolCall(id=cid, input=ToolCallInput(name=getattr(ev, "name", None) or "", arguments={}))
            calls.append(call)
            msg.toolCalls = calls
        if getattr(ev, "name", None):
            call.input.name = ev.name
        so_far = getattr(ev, "arguments_text", None)
        if isinstance(so_far, str) and so_far:
            try:
                from partial_json_parser import loads as partial_loads

                parsed = partial_loads(so_far)
                if isinstance(parsed, dict):
                    call.input.arguments = parsed
            except Exception:
                pass
        self.editor.notify("messages", "tool")

    def _tool_output(self, call_id: str, output: ToolCallOutput) -> None:
        for m in reversed(self.editor.thread.messages):
            for c in getattr(m, "toolCalls", None) or []:
                if c.id == call_id:
                    c.output = output
                    self.editor.notify("messages", "tool")
                    return

    def _adopt_result(self, result: Any) -> None:
        thread = getattr(result, "thread", None)
        if thread is not None and thread is not self.editor.thread:
            self.editor.read_only = False
            self.editor.replace_thread(thread, undoable=False, kind="all")
        warnings = getattr(result, "warnings", None)
        if isinstance(warnings, list):
            self.warnings = [str(w) for w in warnings]
        err = getattr(result, "error", None)
        if err:
            self.error = str(err)
            self.error_message_id = getattr(result, "error_message_id", None)
        if getattr(result, "status", None) == "paused":
            self.pause_reason = getattr(result, "paused_reason", None) or self.pause_reason or "paused"
            self.paused_calls = list(getattr(result, "paused_calls", None) or self.paused_calls)

    def _done(self, fut: Any) -> None:
        try:
            result = fut.result()
        except Exception as exc:
            self._finish_error(exc)
            return
        if result is not None and self.status == "running":
            self._adopt_result(result)
        self.status = "paused" if self.pause_reason else ("error" if self.error else "idle")
        self._end()

    def _finish_error(self, exc: BaseException) -> None:
        from ..errors import describe_exception

        if isinstance(exc, UserFacingError):
            self.error = str(exc)
        else:
            log.error("run failed", exc_info=exc)
            self.error = describe_exception(exc)
        self.status = "error"
        self._end()

    def _end(self) -> None:
        self.editor.read_only = False
        self.editor.dirty = True
        if self.detached:  # the tab was closed during the run: keep what it produced
            try:
                self.editor.save()
            except UserFacingError as exc:
                log.warning("could not save %s after its run: %s", self.editor.rel, exc)
        self.editor.notify("readonly", False)
        self.notify("status", self.status)
        if self.error:
            self.notify("error", self.error)
