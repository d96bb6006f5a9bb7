"""Run controls of the thread editor: Run/Stop (Ctrl+Enter), Regenerate (Ctrl+R), run from a message, continue
after typed tool results, the pause/error banner, confirming a risky command, and calling
one executable tool from its card. State lives in `presenters.run.RunPresenter`.
`RunControls` is a component of `ui/editor/view.EditorView` (`view.run_controls`); it gets
the editor (seen through `RunHost`), the banner frame, the UI services
(`ui/services.UiServices`), the window's run switches (`RunSwitches`), `offer_model` (the
first-run sheet, `context.EditorContext.offer_model`), the editor presenter and the run
presenter; `show_in(message_list)` once the list is built. Runs and tool calls go through the run presenter (which submits them to the
App's runner); this module only asks the user and shows the outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, assert_never

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters import view_updates as vu

if TYPE_CHECKING:
    from ...presenters.editor import EditorPresenter
    from ...presenters.run import RunPresenter
    from ..services import RunSwitches, UiServices
    from .messages import MessageList


class RunHost(Protocol):
    """What `RunControls` asks of the editor it runs in."""

    def flush(self) -> bool: ...

    def refresh_controls(self) -> None: ...

    def refresh_hints(self) -> None: ...

    def refresh_history(self) -> None: ...

    def show_run_status(self, text: str) -> None: ...


class RunControls:
    """Running from the editor of one thread."""

    def __init__(self, host: RunHost, banner: Any, ui: UiServices, switches: RunSwitches,
                 offer_model: Callable[[EditorPresenter, Callable[[], object]], bool], presenter: EditorPresenter,
                 run: RunPresenter) -> None:
        self.host = host
        self.banner = banner  # the frame above the message list
        self.list: MessageList | Any = None  # `show_in`: its cards call back here, so it is built after
        self.ui = ui
        self.switches = switches
        self.offer_model = offer_model
        self.p = presenter
        self.run = run

    def show_in(self, messages: MessageList) -> None:
        """The message list the run shows in (rendered, followed, focused in a pending result)."""
        self.list = messages

    def tool_status(self, call_id: str) -> str | None:
        """"running", "done" or "error" while and after a tool call runs from its card."""
        return self.run.tool_status.get(call_id)

    def draw_banner(self) -> None:
        for w in self.banner.winfo_children():
            w.destroy()
        r = self.run
        items = []
        if r.error:
            items.append(("danger", r.error))
        if r.status == "paused" and r.pause_reason:
            items.append(("warning", r.pause_reason))
        if not items:
            self.banner.pack_forget()
            return
        for style, text in items:
            tb.Label(self.banner, text=text, bootstyle=style, wraplength=520, justify="left").pack(anchor="w")
        if r.status == "paused":
            row = tb.Frame(self.banner)
            row.pack(anchor="w")
            if r.pause_risky:
                tb.Button(row, text="Run the tools anyway…", bootstyle="warning-outline", command=self.confirm_risky).pack(side="left")
            tb.Button(row, text="Continue", bootstyle="primary-outline", command=self.continue_run).pack(side="left", padx=4)
        self.banner.pack(fill="x", before=self.list)

    def on_run(self, update: vu.RunUpdate) -> None:
        match update:
            case vu.StatusChanged(status=status):
                self.host.show_run_status({"running": "Running…", "stopping": "Stopping…", "paused": "Paused",
                                           "error": "Failed", "idle": "Stopped" if self.run.stopped else "Done",
                                           }[status])
                if status in ("idle", "paused", "error"):
                    self.host.flush()
                    self.list.render()
                    self.host.refresh_history()
                    self.show_run_warnings()
                if status == "paused":
                    self.focus_pending_result()
            case vu.ToolCallChanged():
                self.list.request_render()
            case vu.RunningOn():
                self.ui.status.set(f"Running on {update.model}")
            case vu.RetryNote():
                self.host.show_run_status("Retrying…")
                self.ui.status.set(update.note)
            case vu.RunPaused() | vu.RunError():
                pass  # the banner below shows them (`draw_banner`, from `refresh_controls`)
            case _:
                assert_never(update)
        self.host.refresh_controls()

    def show_run_warnings(self) -> None:
        """Warnings of the finished run: render warnings in the status bar and under the system
        prompt; a reply cut at maxTokens as a warning toast (once per run)."""
        warnings = self.run.warnings
        if warnings:
            n = len(warnings)
            self.ui.status.set(f"Run finished with {n} warning{'s' if n != 1 else ''}: {warnings[0]}")
        for warning in self.run.reply_warnings:
            self.ui.toasts.show(warning, "warning", title="Reply cut short")
        self.run.reply_warnings = []
        self.host.refresh_hints()

    def focus_pending_result(self) -> Any:
        """Show the last message and put the cursor in the first result a human must type."""
        pending = self.p.message_intents.pending_function_calls()
        if not pending:
            return None
        self.list.scroll_to_end()
        index, call = pending[0]
        card = self.list.cards.get(self.p.messages[index].id)
        box = card.results.get(call.id) if card is not None else None
        if box is not None:
            box.focus_set()
        return box

    # -- running ---------------------------------------------------------------------------
    def run_or_stop(self) -> None:
        if self.run.running:
            self.run.stop()
        else:
            self.start_run()

    def start_run(self, from_message_id: str | None = None, tool_results: dict[str, tuple[str, bool]] | None = None) -> bool:
        """Run the thread; with no usable model, the first-run sheet (`ui/first_run.py`) asks
        how to get one first and runs once one is chosen."""
        if from_message_id is None and not tool_results and not self.run.running and self.run.ends_with_reply():
            # nothing to answer: say so where the user looks, no modal error (issue 38)
            self.ui.toasts.show("The last message is the model's reply. Add a user message, or Regenerate "
                                "(Ctrl+R) to run the last turn again.", "info", title="Nothing to run")
            self.ui.status.set("Nothing to run: the last message is the reply. Regenerate (Ctrl+R) runs the last turn again.")
            return False
        if not self.run.running and self._offer_model(lambda: self.start_run(from_message_id, tool_results)):
            return False
        return self._launch(lambda post, post_text, auto, react: self.run.start(
            post, post_text, auto_tools=auto, react=react, from_message_id=from_message_id, tool_results=tool_results))

    def can_regenerate(self) -> bool:
        """Regenerate applies now (nothing runs, the last message is a reply to a user turn)."""
        return self.run.can_regenerate()

    def regenerate(self) -> bool:
        """Regenerate (the button on the last reply, Ctrl+R): run again from the user turn
        before the last reply. Does nothing while a run goes; with no reply to regenerate the
        status bar says why."""
        if self.run.running:
            return False
        if not self.run.can_regenerate():
            self.ui.status.set("Nothing to regenerate: the last message is not a reply to a user message.")
            return False
        if self._offer_model(self.regenerate):
            return False
        return self._launch(lambda post, post_text, auto, react: self.run.regenerate(
            post, post_text, auto_tools=auto, react=react))

    def _offer_model(self, then: Callable[[], object]) -> bool:
        """Open the first-run sheet when no model can run this thread (True: it is open)."""
        return self.offer_model(self.p, then)

    def _launch(self, begin: Callable[[Any, Any, bool, bool], object]) -> bool:
        """Save pending edits, start a run through `begin(post, post_text, auto_tools, react)`
        with the window's run switches, and follow its output; an error is shown, not raised."""
        try:
            self.host.flush()
        except UserFacingError:
            pass
        pump = self.ui.pump
        try:
            begin(pump.post, pump.post_text, bool(self.switches.auto_run.get()), bool(self.switches.react.get()))
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return False
        self.list.follow = True
        self.list.render()
        return True

    def run_from(self, message_id: str) -> None:
        if not self.run.running:
            self.start_run(from_message_id=message_id)

    def continue_run(self) -> None:
        """Run again after tool results were typed in (Ctrl+Enter in a result box)."""
        self._launch(lambda post, post_text, auto, react: self.run.continue_run(
            post, post_text, auto_tools=auto, react=react))

    def confirm_risky(self) -> None:
        """The user confirms a paused risky command: run the paused tools, then continue."""
        if not (self.run.status == "paused" and self.run.pause_risky):
            return
        msgs = self.p.messages
        calls = {c.id: c for m in msgs for c in getattr(m, "toolCalls", None) or []}
        summary = "\n".join(f"{c.input.name}: {c.input.arguments}" for _m, cid in self.run.paused_calls
                            if (c := calls.get(cid)) is not None)
        if not self.ui.dialogs.confirm(f"Run these tool calls?\n\n{summary}", "Risky command"):
            return
        pump = self.ui.pump
        try:
            self.run.run_risky_calls(pump.post, pump.post_text, auto_tools=bool(self.switches.auto_run.get()),
                                     react=bool(self.switches.react.get()))
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))

    def call_tool(self, call_id: str) -> bool:
        """▶ on a tool call card: run one executable tool (built-in, MCP, plugin) and put its
        result in the call's Response. A call the router finds risky asks first."""
        try:
            question = self.run.confirmation_for(call_id)
            if question is not None and not self.ui.dialogs.confirm(question, "Risky command"):
                return False
            self.run.call_tool(call_id, self.ui.pump.post)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return False
        self.list.render()
        return True

    def call_tools(self, message_id: str) -> int:
        """Call every executable tool call of a message that has no result yet."""
        started = sum(1 for call_id in self.run.callable_calls(message_id) if self.call_tool(call_id))
        if not started:
            self.ui.status.set("No tool call here can be called automatically; type the results instead.")
        return started

    def stop_run(self) -> None:
        self.run.stop()
