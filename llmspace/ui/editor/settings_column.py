"""The editor's settings column: the Model row (`model_row.py`), the Tools and Variables rows
(their names wrapped between names, an Edit button each, laid out by `label_stacker.py`), the
system prompt with `{{var}}`/`{% %}` highlighting, `{{` completion and value tooltips
(`text_assist.TextAssist`), and the variable hints under it (missing and empty variables, the
last run's render warnings). It scrolls when the window is too low for it (800×500) and
otherwise lets the system prompt fill its height.

`SettingsColumn(master, owner, ui, presenter, catalog, text, warnings)` is a component of
`ui/editor/view.EditorView` (`view.settings`); `owner` (the editor) is the parent of its menu
and dialogs, `warnings()` are the last run's render warnings.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters import catalog as catalog_labels
from ..scroll_column import ScrollColumn
from ..wrapped_label import WrappedLabel
from . import panels
from .label_stacker import LabelStacker
from .model_row import ModelRow
from .text_assist import TextAssist

if TYPE_CHECKING:
    from ...presenters.editor import EditorPresenter
    from ..services import UiServices
    from .context import Catalog, TextServices

HINTS_SYNC_LIMIT = 300  # messages; larger threads compute variable hints after a pause
HINTS_DELAY_MS = 400
PROMPT_LINES = 6  # the system prompt box never gets fewer lines; the settings column scrolls instead


class SettingsColumn(ScrollColumn):
    """Model, tools, variables, system prompt and hints of one thread."""

    def __init__(self, master: Any, owner: Any, ui: UiServices, presenter: EditorPresenter, catalog: Catalog,
                 text: TextServices, warnings: Callable[[], list[str]]) -> None:
        super().__init__(master, padding=(8, 4))
        self.owner = owner  # the parent of the model menu and the dialogs (the editor, as before the split)
        self.ui, self.p, self.catalog, self.text, self.warnings = ui, presenter, catalog, text, warnings
        self._hints_job: str | None = None
        left = self.body
        self.model_row = ModelRow(left, presenter, catalog.model_label, self.pick_model, self.edit_params)
        self.model_btn, self.params_btn = self.model_row.button, self.model_row.params_btn
        self.params_lbl = self.model_row.params
        self.tools_lbl, self.tools_btn, tools_label = self._row(left, "Tools", self.edit_tools)
        self.vars_lbl, self.vars_btn, vars_label = self._row(left, "Variables", self.edit_variables)
        rows = [self.model_row.cells, (tools_label, self.tools_lbl, self.tools_btn),
                (vars_label, self.vars_lbl, self.vars_btn)]
        self.stacker = LabelStacker(left, rows, [self.model_row.indent])
        self.prompt_heading = tb.Label(left, text="System prompt", font="TkHeadingFont")
        self.prompt_heading.pack(anchor="w", pady=(8, 2))
        # PROMPT_LINES is its least height: in a taller column it grows to fill it
        self.prompt = tb.Text(left, wrap="word", height=PROMPT_LINES, undo=False, font="TkTextFont")
        self.prompt.pack(fill="both", expand=True)
        self.prompt_assist = TextAssist(self.prompt, text, lambda: ("systemPrompt", True))
        self.prompt.bind("<<Modified>>", self._on_prompt_modified)
        self.hints = WrappedLabel(left, bootstyle="warning")
        self.hints.pack(anchor="w", fill="x", pady=2)

    @staticmethod
    def _row(column: Any, text: str, command: Any) -> tuple[WrappedLabel, Any, Any]:
        """A settings row: its list of names (wrapped between names, never inside one), its
        Edit button and its label, laid out by the `LabelStacker`."""
        row = tb.Frame(column)
        row.pack(fill="x", pady=2)
        return (WrappedLabel(row, bootstyle="secondary"), tb.Button(row, text="Edit", bootstyle="link", command=command),
                tb.Label(row, text=text, width=9))

    # -- refresh from the presenter -------------------------------------------------------
    def refresh(self) -> None:
        self.refresh_model()
        self.refresh_tools()
        self.refresh_prompt()
        self.refresh_variables()

    def refresh_model(self) -> None:
        """The model a run will call (with the reason when it is not the saved one) and its parameters."""
        self.model_row.refresh()

    def refresh_tools(self) -> None:
        tools = self.p.tools
        self.tools_lbl.set_text(", ".join(catalog_labels.tool_label(t) for t in tools) if tools else "No tools")

    def refresh_variables(self) -> None:
        names = list(self.p.typed_variables()) + list(self.p.custom_variables())
        self.vars_lbl.set_text(", ".join(names) if names else "No variables")
        if len(self.p.messages) > HINTS_SYNC_LIMIT:
            # scanning thousands of messages for references: once typing pauses, not per key
            if self._hints_job is not None:
                self.after_cancel(self._hints_job)
            self._hints_job = self.after(HINTS_DELAY_MS, self.refresh_hints)
        else:
            self.refresh_hints()

    def refresh_hints(self) -> None:
        self._hints_job = None
        hints = self.p.variable_hints()
        missing = [n for n, h in hints.items() if h == "missing"]
        empty = [n for n, h in hints.items() if h == "empty"]
        parts = []
        if missing:
            parts.append("Missing: " + ", ".join(missing))
        if empty:
            parts.append("Empty: " + ", ".join(empty))
        text = " · ".join(parts)
        warnings = self.warnings()
        if warnings:  # what the last run's render reported (template errors, unknown names)
            text = "\n".join(([text] if text else []) + ["Last run: " + w for w in warnings[:5]])
        self.hints.set_text(text)

    def refresh_prompt(self) -> None:
        text = self.p.system_prompt
        if self.prompt.get("1.0", "end-1c") != text:
            ro = self.p.read_only
            self.prompt.configure(state="normal")
            self.prompt.delete("1.0", "end")
            self.prompt.insert("1.0", text)
            self.prompt.edit_modified(False)
            if ro:
                self.prompt.configure(state="disabled")
        self.highlight()

    def highlight(self) -> None:
        """Colour the system prompt's `{{var}}` and `{% tag %}`."""
        self.prompt_assist.highlight()

    def set_read_only(self, read_only: bool) -> None:
        state = "disabled" if read_only else "normal"
        for w in (self.model_btn, self.params_btn, self.tools_btn, self.vars_btn, self.prompt):
            w.configure(state=state)

    def theme_changed(self) -> None:
        self.prompt_assist.colour(self.text.colours())

    def _on_prompt_modified(self, _e: Any = None) -> None:
        if not self.prompt.edit_modified():
            return
        self.prompt.edit_modified(False)
        self.highlight()
        if not self.p.read_only:
            try:
                self.p.set_system_prompt(self.prompt.get("1.0", "end-1c"))
            except UserFacingError as exc:
                self.ui.errors.show(str(exc))

    # -- the rows' commands ----------------------------------------------------------------
    def pick_model(self) -> tk.Menu:
        menu = panels.model_menu(self.owner, self.catalog.model_choices, self.p, lambda: None)
        try:
            menu.tk_popup(self.model_btn.winfo_rootx(), self.model_btn.winfo_rooty() + self.model_btn.winfo_height())
        finally:
            menu.grab_release()
        return menu

    def edit_params(self) -> Any:
        if self.p.thread.model is None:
            self.ui.errors.show("Pick a model before setting its parameters.")
            return None
        return panels.ParamsPopover(self.owner, self.p, lambda: None)

    def edit_tools(self) -> Any:
        return panels.ToolsDialog(self.owner, self.ui, self.catalog, self.p, lambda: None)

    def edit_variables(self) -> Any:
        from .variables_dialog import VariablesDialog

        skills = self.text.skills
        return VariablesDialog(self.owner, self.p, lambda: None, skill_names=lambda: [sk.name for sk in skills().enabled()],
                               dialogs=self.ui.dialogs)
