"""Run controls of one tab, without Tk: can it run, start, stop, fold live run events into the
editor's thread, tool-call status, pauses (risky commands, function tools waiting for a
result), and the tool calls a human starts (one call from its card, the paused risky ones).

Threading: `start()` snapshots the thread on the UI thread and hands the clone to
`app.runner.submit(...)`. The runner calls `on_event` from its worker thread; that only
forwards to the `post`/`post_text` functions given (the UI pump), so folding (`apply`, one
`match` over every `agent/events.RunEvent`; the thread itself is folded by
`agent/fold.fold_run_event`) happens on the UI thread. Streamed text for one
message arrives coalesced, one string per frame. Tool calls a human starts go through
`app.runner.call_tools(...)` on a snapshot too; each future owns its CancelToken, so Stop and
closing the tab (`detach`) cancel them as they cancel a run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from functools import partial
from typing import TYPE_CHECKING, Any, assert_never, cast

from ..agent import events as rev
from ..agent.convert import is_unanswered
from ..agent.fold import Folded, fold_run_event, set_tool_output
from ..agent.run_types import RunOptions, RunResult
from ..agent.runner import Runner
from ..cancel import CancelToken
from ..core.model import AssistantMessage, TextContent, Tool, ToolCall, ToolCallOutput
from ..core.threadio import clone_thread
from ..errors import UserFacingError, describe_exception
from . import view_updates as vu
from .editor import EditorPresenter

if TYPE_CHECKING:
    from ..app import App

log = logging.getLogger("llmspace.presenters.run")

Post = Callable[..., None]
PostText = Callable[[Any, str, Callable[[str], Any]], None]
ToolResults = dict[str, tuple[str, bool]]  # call id -> (text, is_error)


class RunPresenter:
    """State of the run (if any) of one editor, and of the tool calls started from it."""

    def __init__(self, editor: EditorPresenter, app: App, elicit: Any = None) -> None:
        self.editor = editor
        self.app = app
        self.elicit = elicit  # answers MCP servers' requests for input during the run's tool calls (None declines)
        self.status: vu.RunState = "idle"  # idle | running | paused | error ("stopping" is only announced)
        self.error: str | None = None
        self.pause_reason: str | None = None
        self.pause_risky = False  # the pause is for risky calls a human may confirm (`Paused.risky`)
        self.paused_calls: list[tuple[str, str]] = []  # (message id, call id)
        self.tool_status: dict[str, str] = {}  # call id -> running | done | error
        self.tool_calls: dict[str, Future[dict[str, ToolCallOutput]]] = {}  # call id -> its call in flight
        self.future: Future[RunResult] | None = None
        self.cancel: CancelToken | None = None
        self.started_at = 0.0
        self.listeners: list[Callable[[vu.RunUpdate], None]] = []
        self.detached = False  # set when the view closed while running
        self._latest: dict[tuple[int, str, str, str], rev.ToolCallDelta] = {}
        self.warnings: list[str] = []  # render warnings of the last run (`RunResult.warnings`)
        self.reply_warnings: list[str] = []  # the last run's replies cut at maxTokens (`RunResult.reply_warnings`)
        self.retry_note: str | None = None  # "Retrying in 1.0 s (attempt 2): …" while a call is retried
        self.stopped = False  # the last run was stopped by the user (status shows "Stopped", not "Done")

    def notify(self, update: vu.RunUpdate) -> None:
        for fn in list(self.listeners):
            fn(update)

    @property
    def running(self) -> bool:
        """A run or a tool call of this tab is in flight (Stop applies; a new run must wait)."""
        return self.status == "running" or bool(self.tool_calls)

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
                              hint="Add a user message, or Regenerate (Ctrl+R) to run the last turn again.")

    def ends_with_reply(self) -> bool:
        """The thread ends with the model's reply (no tool call waiting): Run has nothing to
        answer, Regenerate runs the last turn again."""
        msgs = self.editor.thread.messages
        return bool(msgs) and msgs[-1].role == "assistant" and not getattr(msgs[-1], "toolCalls", None)

    def regenerate_from(self) -> str:
        """The id of the user message Regenerate runs again from: the last user message before
        the last message, which must be the assistant's (raises UserFacingError otherwise)."""
        msgs = self.editor.thread.messages
        if not msgs or msgs[-1].role != "assistant":
            raise UserFacingError("There is no reply to regenerate: the last message is not the assistant's.",
                                  hint="Run the thread to get a reply.")
        for msg in reversed(msgs[:-1]):
            if msg.role == "user":
                return msg.id
        raise UserFacingError("There is no user message before this reply to run again from.",
                              hint="Add a user message above it.")

    def can_regenerate(self) -> bool:
        """Regenerate applies: nothing runs and the last message is a reply to a user turn."""
        if self.running:
            return False
        try:
            self.regenerate_from()
        except UserFacingError:
            return False
        return True

    # -- intents -------------------------------------------------------------------------
    def start(self, post: Post, post_text: PostText, *, auto_tools: bool = False, react: bool = False,
              from_message_id: str | None = None, tool_results: ToolResults | None = None) -> None:
        from_index = self.editor.index_of(from_message_id) if from_message_id else None
        self.check(from_index)
        runner = self._runner()
        self.editor.checkpoint(None)  # the cut and the whole run are one undo step
        if from_index is not None and from_index < len(self.editor.thread.messages) - 1:
            del self.editor.thread.ensure_messages()[from_index + 1:]
            self.editor.notify(vu.MessagesChanged())
        snapshot = clone_thread(self.editor.thread)
        opts = RunOptions(auto_tools=auto_tools or react, react=react, tool_results=dict(tool_results or {}),
                          elicit=self.elicit, thread_path=self.editor.rel or None)
        self.cancel = CancelToken()
        self.stopped = False
        self.status, self.error = "running", None
        self.pause_reason, self.pause_risky, self.paused_calls = None, False, []
        self.tool_status.clear()
        self.warnings = []
        self.reply_warnings = []
        self.retry_note = None
        self.started_at = time.monotonic()
        self.editor.read_only = True
        self.editor.notify(vu.ReadOnlyChanged(True))
        self.notify(vu.StatusChanged(self.status))

        def on_event(ev: rev.RunEvent) -> None:  # worker thread: forward only
            match ev:
                case rev.TextDelta():
                    post_text((id(self), ev.message_id, "text"), ev.text, partial(self.append_text, ev.message_id))
                case rev.ThinkingDelta():
                    post_text((id(self), ev.message_id, "thinking"), ev.text, partial(self.append_thinking, ev.message_id))
                case rev.ToolCallDelta():
                    # arguments_text is cumulative: only the latest per call matters, once per frame
                    key = (id(self), ev.message_id, ev.call_id, "args")
                    self._latest[key] = ev
                    post_text(key, ".", partial(self._apply_latest, key))
                case _:
                    post(self.apply, ev)

        try:
            self.future = runner.submit(snapshot, opts, on_event=on_event, cancel=self.cancel)
        except Exception as exc:
            self._finish_error(exc)
            raise
        self.future.add_done_callback(lambda f: post(self._done, f))

    def regenerate(self, post: Post, post_text: PostText, *, auto_tools: bool = False, react: bool = False) -> None:
        """Run again from the user turn before the last reply: the old reply leaves the
        messages (it stays in the run history, and Ctrl+Z brings it back: the cut and the new
        run are one undo step, as for any run from a message)."""
        if self.running:
            raise UserFacingError("This thread is already running.", hint="Stop it first.")
        self.start(post, post_text, auto_tools=auto_tools, react=react, from_message_id=self.regenerate_from())

    def continue_run(self, post: Post, post_text: PostText, *, auto_tools: bool = False, react: bool = False) -> None:
        """Run again after tool results were typed in; refused while a call has no result."""
        msgs = self.editor.thread.messages
        last = msgs[-1] if msgs else None
        if isinstance(last, AssistantMessage) and any(is_unanswered(c) for c in last.toolCalls or []):
            raise UserFacingError("Add tool responses before continuing.")
        self.start(post, post_text, auto_tools=auto_tools, react=react)

    def stop(self) -> None:
        """Stop the run and every tool call in flight (each ends within about a second)."""
        for future in {id(f): f for f in self.tool_calls.values()}.values():
            future.cancel()
        if self.cancel is not None and self.status == "running":
            self.stopped = True
            self.cancel.cancel()
            self.notify(vu.StatusChanged("stopping"))

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

    def forget_error(self) -> bool:
        """Undo or redo moved the thread past the failed run: its error no longer describes
        what is shown. Returns True when an error was dropped (never while running)."""
        if self.running or self.error is None:
            return False
        self.error = None
        if self.status == "error":
            self.status = "idle"
        return True

    # -- tool calls a human starts ---------------------------------------------------------
    def _find_call(self, call_id: str) -> tuple[int, ToolCall]:
        msgs = self.editor.thread.messages
        for index in range(len(msgs) - 1, -1, -1):
            for call in getattr(msgs[index], "toolCalls", None) or []:
                if call.id == call_id:
                    return index, call
        raise UserFacingError("That tool call is no longer in the thread.")

    def _tool_of(self, call: ToolCall) -> Tool | None:
        return next((t for t in self.editor.tools if t.name == call.input.name), None)

    def callable_calls(self, message_id: str) -> list[str]:
        """Ids of the calls of a message that "Call tools" runs: executable, no result yet."""
        msg = self.editor.thread.messages[self.editor.index_of(message_id)]
        out = []
        for call in getattr(msg, "toolCalls", None) or []:
            tool = self._tool_of(call)
            empty = call.output is None or not (call.output.text().strip() or call.output.images())
            if tool is not None and tool.is_executable() and empty:
                out.append(call.id)
        return out

    def confirmation_for(self, call_id: str) -> str | None:
        """The question to ask before calling this tool by hand (the router calls it risky), or None."""
        from ..tools.router import ToolRouter

        _index, call = self._find_call(call_id)
        pause = ToolRouter.call_pause(self._tool_of(call), call)
        if pause is None or not pause.risky:
            return None
        command = call.input.arguments.get("command")
        return f"Run this risky command?\n\n{command if isinstance(command, str) else call.input.arguments}"

    def call_tool(self, call_id: str, post: Post) -> Future[dict[str, ToolCallOutput]]:
        """▶ on a tool call card: run one executable tool (built-in, MCP, plugin) and put its
        result in the call's Response. Ask `confirmation_for` first."""
        if self.status == "running":
            raise UserFacingError("This thread is already running.", hint="Stop it first.")
        if call_id in self.tool_calls:
            raise UserFacingError("That tool call is already running.")
        _index, call = self._find_call(call_id)
        tool = self._tool_of(call)
        if tool is None or not tool.is_executable():
            raise UserFacingError(f"{call.input.name} cannot be called from here: type its result instead.")
        future = self._runner().call_tools(clone_thread(self.editor.thread), [call_id], elicit=self.elicit)
        self.tool_calls[call_id] = future
        self.tool_status[call_id] = "running"
        self.notify(vu.ToolCallChanged(call_id))
        future.add_done_callback(lambda f: post(self._tool_called, call_id, f))
        return future

    def _tool_called(self, call_id: str, future: Future[dict[str, ToolCallOutput]]) -> None:
        self.tool_calls.pop(call_id, None)
        try:
            output = future.result()[call_id]
        except CancelledError:  # stopped before it started
            output = _error_output("Cancelled")
        except Exception as exc:  # a bug: shown as the call's error result
            log.error("tool call failed", exc_info=exc)
            output = _error_output(describe_exception(exc))
        self.tool_status[call_id] = "error" if output.isError else "done"
        try:
            index, _call = self._find_call(call_id)
            self.editor.message_intents.set_tool_output(index, call_id, output)
        except UserFacingError as exc:  # the call was removed meanwhile
            self.error = str(exc)
            self.notify(vu.RunError(self.error))
        self.notify(vu.ToolCallChanged(call_id))
        self._save_if_detached()

    def run_risky_calls(self, post: Post, post_text: PostText, *, auto_tools: bool = False,
                        react: bool = False) -> Future[dict[str, ToolCallOutput]]:
        """The user confirmed a risky pause: run the paused calls, then continue the run with
        their results. Stop cancels both; stopped calls keep a "Cancelled" error result."""
        if self.status != "paused" or not self.pause_risky or not self.paused_calls:
            raise UserFacingError("No risky tool calls are waiting.")
        ids = [cid for _mid, cid in self.paused_calls]
        future = self._runner().call_tools(clone_thread(self.editor.thread), ids, elicit=self.elicit)
        self.status, self.stopped = "running", False
        self.editor.read_only = True
        self.editor.notify(vu.ReadOnlyChanged(True))
        for cid in ids:
            self.tool_calls[cid] = future
            self.tool_status[cid] = "running"
        self.notify(vu.StatusChanged(self.status))

        def done(f: Future[dict[str, ToolCallOutput]]) -> None:
            self._risky_done(ids, f, post, post_text, auto_tools, react)

        future.add_done_callback(lambda f: post(done, f))
        return future

    def _risky_done(self, ids: list[str], future: Future[dict[str, ToolCallOutput]], post: Post,
                    post_text: PostText, auto_tools: bool, react: bool) -> None:
        for cid in ids:
            self.tool_calls.pop(cid, None)
        self.status = "idle"
        self.pause_reason, self.pause_risky, self.paused_calls = None, False, []
        try:
            outputs = {} if future.cancelled() else future.result()
        except Exception as exc:
            self._finish_error(exc)
            return
        for cid in ids:
            out = outputs.get(cid)
            if out is None:
                self.tool_status.pop(cid, None)
            else:
                self.tool_status[cid] = "error" if out.isError else "done"
        if self.stopped or self.detached or len(outputs) < len(ids):
            self.editor.read_only = False
            self.editor.checkpoint(None)
            for cid, out in outputs.items():
                self._tool_output(cid, out)
            self.stopped = True
            self._end()
            return
        self.editor.read_only = False
        results = {cid: (out.text(), bool(out.isError)) for cid, out in outputs.items()}
        try:
            self.start(post, post_text, auto_tools=auto_tools, react=react, tool_results=results)
        except UserFacingError as exc:
            if cast("vu.RunState", self.status) != "error":  # start() may have failed the run itself
                self.error, self.status = str(exc), "error"
                self._end()

    # -- folding (UI thread) -------------------------------------------------------------
    def _fold(self, ev: rev.RunEvent) -> Folded:
        """Fold one event into the editor's thread (`agent/fold.fold_run_event`); a message
        the run just started is announced to the view."""
        folded = fold_run_event(self.editor.thread, ev)
        if folded == "added":
            self.editor.notify(vu.MessagesChanged("stream"))
        return folded

    def append_text(self, message_id: str, text: str) -> None:
        self._fold(rev.TextDelta(message_id, text))
        self.editor.notify(vu.TextStreamed(message_id, text))

    def append_thinking(self, message_id: str, text: str) -> None:
        self._fold(rev.ThinkingDelta(message_id, text))
        self.editor.notify(vu.ThinkingStreamed(message_id, text))

    def apply(self, ev: rev.RunEvent) -> None:
        """Fold one run event into the editor's thread and this presenter's state."""
        match ev:
            case rev.RunStarted():  # the model that runs (the saved one may have fallen back)
                self.notify(vu.RunningOn(f"{ev.provider}/{ev.model}"))
            case rev.MessageStarted():
                self._fold(ev)
            case rev.TextDelta():
                self.append_text(ev.message_id, ev.text)
            case rev.ThinkingDelta():
                self.append_thinking(ev.message_id, ev.text)
            case rev.ToolCallDelta():
                self._fold(ev)
                self.editor.notify(vu.MessagesChanged("tool"))
            case rev.MessageFinished():
                self._fold(ev)
                self.editor.notify(vu.MessagesChanged("finished"))
            case rev.ToolStarted():
                self.tool_status[ev.call_id] = "running"
                self.notify(vu.ToolCallChanged(ev.call_id))
            case rev.ToolFinished():
                self.tool_status[ev.call_id] = "error" if ev.output.isError else "done"
                self._tool_output(ev.call_id, ev.output)
                self.notify(vu.ToolCallChanged(ev.call_id))
            case rev.Paused():
                self.pause_reason, self.pause_risky, self.paused_calls = ev.reason, ev.risky, list(ev.calls)
                self.notify(vu.RunPaused(ev.reason, ev.risky))
            case rev.Retrying():
                self.retry_note = f"Retrying in {ev.delay:.1f} s (attempt {ev.attempt}): {ev.reason}"
                self.notify(vu.RetryNote(self.retry_note))
            case rev.RunFinished():
                self._adopt_result(ev.result)
            case _:
                assert_never(ev)

    def _apply_latest(self, key: tuple[int, str, str, str], _text: str = "") -> None:
        """Fold the newest ToolCallDelta of one call (posted once per frame)."""
        ev = self._latest.pop(key, None)
        if ev is not None:
            self.apply(ev)

    def _tool_output(self, call_id: str, output: ToolCallOutput) -> None:
        if set_tool_output(self.editor.thread, call_id, output):
            self.editor.notify(vu.MessagesChanged("tool"))

    def _adopt_result(self, result: RunResult) -> None:
        if result.thread is not self.editor.thread:
            self.editor.read_only = False
            self.editor.replace_thread(result.thread, undoable=False)
        self.warnings = [str(w) for w in result.warnings]
        self.reply_warnings = [str(w) for w in result.reply_warnings]
        if result.error:
            self.error = result.error
        if result.status == "paused":
            self.pause_reason = result.paused_reason or self.pause_reason or "paused"
            self.paused_calls = list(result.paused_calls or self.paused_calls)

    def _done(self, fut: Future[RunResult]) -> None:
        try:
            result = fut.result()
        except Exception as exc:
            self._finish_error(exc)
            return
        if self.status == "running":
            self._adopt_result(result)
        self.status = "paused" if self.pause_reason else ("error" if self.error else "idle")
        self._end()

    # -- the end ---------------------------------------------------------------------------
    def _runner(self) -> Runner:
        try:
            runner: Runner = self.app.runner
            return runner
        except UserFacingError:  # e.g. the settings folder cannot be made: its own message says what to do
            raise
        except Exception as exc:
            raise UserFacingError(f"Running is not available: {describe_exception(exc)}") from None

    def _finish_error(self, exc: BaseException) -> None:
        if isinstance(exc, UserFacingError):
            self.error = str(exc)
        else:
            log.error("run failed", exc_info=exc)
            self.error = describe_exception(exc)
        self.status = "error"
        self._end()

    def _save_if_detached(self) -> None:
        if self.detached:  # the tab was closed meanwhile: keep what was produced
            try:
                self.editor.save()
            except UserFacingError as exc:
                log.warning("could not save %s after its run: %s", self.editor.rel, exc)

    def _end(self) -> None:
        self.editor.read_only = False
        self.editor.dirty = True
        self._save_if_detached()
        self.editor.notify(vu.ReadOnlyChanged(False))
        self.notify(vu.StatusChanged(self.status))
        if self.error:
            self.notify(vu.RunError(self.error))


def _error_output(text: str) -> ToolCallOutput:
    return ToolCallOutput(content=[TextContent(type="text", text=text)], isError=True)
