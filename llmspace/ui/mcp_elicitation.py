"""The app's answer to an MCP server's request for input during a tool call (elicitation).

`AppElicitor` is the run's `Elicitor` (`mcp/elicitation.py`): called on the worker thread
that makes the tool call, it opens an `ElicitationDialog` through the pump and waits; the
tool call waits with it. When the run is stopped while the dialog is open, the dialog
closes and the request is cancelled.

`ElicitationDialog` shows the server's message and either a form generated from the
requested schema by the plugin settings form's field widgets (`SchemaFields`), with Accept,
Decline and Cancel, or, for a URL-mode request, the full URL and its origin with "Open in
browser", Decline and Cancel: the browser opens only when the user clicks Open. Closing the
window cancels. Logic in `presenters/elicitation.py`.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..mcp.elicitation import ElicitationAnswer, ElicitationRequest
from ..plugins.settings_form import FormField
from ..presenters.elicitation import ElicitationForm
from .plugin_settings_form import SchemaFields
from .scroll_column import ScrollColumn

if TYPE_CHECKING:
    from .pump import Pump

FORM_HEIGHT = 260


class ElicitationDialog(SchemaFields, tb.Toplevel):
    def __init__(self, master: Any, request: ElicitationRequest, answer: Callable[[ElicitationAnswer], None],
                 opener: Callable[[str], Any] = webbrowser.open) -> None:
        super().__init__(master=master)
        self.form = ElicitationForm(request)
        self.title(self.form.title)
        self._answer = answer
        self._opener = opener
        self.answered: ElicitationAnswer | None = None
        self.errors: dict[str, tb.Label] = {}
        self.inputs: dict[str, Any] = {}
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        tb.Label(body, text=self.form.title, font="TkHeadingFont").pack(anchor="w")
        tb.Label(body, text=request.message, wraplength=520, justify="left").pack(anchor="w", pady=(2, 8))
        self.status = tb.Label(body, text="", bootstyle="danger", wraplength=520)
        buttons = tb.Frame(body)
        self.buttons: dict[str, tb.Button] = {}
        if request.mode == "url":
            self.url_label = tb.Label(body, text=self.form.url_text, wraplength=520, justify="left")
            self.url_label.pack(anchor="w", pady=(0, 8))
            self._button(buttons, "Open in browser", self.open_url, "primary")
        else:
            column = ScrollColumn(body, height=FORM_HEIGHT)
            column.pack(fill="both", expand=True)
            try:
                for f in self.form.fields():
                    self._field(column.body, f)
            except ValueError as exc:
                tb.Label(column.body, text=f"This form cannot be shown: {exc}", wraplength=480).pack(anchor="w")
            self._button(buttons, "Accept", self.accept, "primary")
        self._button(buttons, "Decline", self.decline, "secondary-outline")
        self._button(buttons, "Cancel", self.cancel, "link")
        self.status.pack(anchor="w")
        buttons.pack(fill="x", pady=(8, 0))
        self.protocol("WM_DELETE_WINDOW", self.cancel)
        self.bind("<Escape>", lambda e: self.cancel())
        self.transient(master)  # above the window whose run waits for it
        self.lift()

    def _button(self, row: Any, text: str, command: Callable[[], Any], style: str) -> None:
        self.buttons[text] = tb.Button(row, text=text, command=command, bootstyle=style)
        self.buttons[text].pack(side="left", padx=(0, 6))

    # -- SchemaFields ------------------------------------------------------------------------
    def field_value(self, f: FormField) -> Any:
        return self.form.values.get(f.key, f.default if f.has_default else None)

    def _changed(self, f: FormField, value: Any, *, now: bool = False, as_list: list[str] | None = None) -> None:
        self.form.set(f.key, as_list if as_list is not None else value)
        label = self.errors.get(f.key)
        if label is not None:
            label.configure(text="")

    # -- answers -----------------------------------------------------------------------------
    def accept(self) -> bool:
        """Answer with the form's content; False (and the problems under their fields) when a field does not pass."""
        answer, problems = self.form.accept()
        for key, label in self.errors.items():
            label.configure(text=problems.get(key, ""))
        if answer is None:
            self.status.configure(text="Fix the marked fields, or Decline.")
            return False
        self._finish(answer)
        return True

    def open_url(self) -> None:
        """The user chose to open the page: open it, and tell the server it was accepted."""
        self._opener(self.form.request.url)
        self._finish(ElicitationAnswer("accept"))

    def decline(self) -> None:
        self._finish(self.form.decline())

    def cancel(self) -> None:
        self._finish(self.form.cancel())

    def _finish(self, answer: ElicitationAnswer) -> None:
        if self.answered is not None:
            return
        self.answered = answer
        self._answer(answer)
        if self.winfo_exists():
            self.destroy()


class AppElicitor:
    """An `Elicitor` that asks in a dialog (see the module docstring). `dialog` is the open one."""

    def __init__(self, pump: Pump, master: Any, opener: Callable[[str], Any] = webbrowser.open) -> None:
        self.pump = pump
        self.master = master
        self.opener = opener
        self.dialog: ElicitationDialog | None = None

    def __call__(self, request: ElicitationRequest, cancelled: Callable[[], bool]) -> ElicitationAnswer:
        done = threading.Event()
        got: list[ElicitationAnswer] = []

        def answer(a: ElicitationAnswer) -> None:
            got.append(a)
            done.set()

        def show() -> None:
            if not self.master.winfo_exists():
                answer(ElicitationAnswer("cancel", reason="the window was closed"))
                return
            try:
                self.dialog = ElicitationDialog(self.master, request, answer, self.opener)
            except Exception as exc:  # a form that cannot be built must not leave the call waiting
                answer(ElicitationAnswer("cancel", reason=f"the form failed ({type(exc).__name__}: {exc})"))
                raise

        self.pump.post(show)
        while not done.wait(0.1):
            if cancelled():
                self.pump.post(self._close)
                return ElicitationAnswer("cancel", reason="the run was stopped")
        self.pump.post(self._forget)
        return got[0]

    def _close(self) -> None:
        if self.dialog is not None and self.dialog.winfo_exists():
            self.dialog.cancel()
        self.dialog = None

    def _forget(self) -> None:
        if self.dialog is not None and not self.dialog.winfo_exists():
            self.dialog = None
