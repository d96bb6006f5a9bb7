"""The thread editor of one tab: header (title that renames the file, undo/redo, Run/Stop
with run settings), the settings column (model picker and parameters, tools row, variables
row, system prompt with `{{var}}`/`{% %}` highlighting, `{{` completion, value tooltips and
hints — `text_assist.TextAssist`, as in every message text box) and the message list.

Autosave: 500 ms after the last edit, and on tab close and quit. While the tab runs the
editor is read-only; streamed text arrives through the pump (one insert per frame).
Built lazily by `ui/tab_pages.py` when its tab is first shown, with an `EditorContext`
(`ui/editor/context.py`: the UI services, the App, the run switches, the tabs and tree).
"""

from __future__ import annotations

import logging
import os
import tkinter as tk
from typing import TYPE_CHECKING, Any, assert_never

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters import catalog
from ...presenters import view_updates as vu
from ...presenters.editor import EditorPresenter
from ...presenters.run import RunPresenter
from .. import theme as themes
from ..check_marks import add_check
from ..keyboard import Region
from ..panes import PaneKeeper
from ..scroll_column import ScrollColumn
from ..wrapped_label import WrappedLabel
from . import panels
from .label_stacker import LabelStacker
from .messages import MessageList
from .model_row import ModelRow
from .run_controls import RunControls
from .text_assist import TextAssist
from .title_field import TitleField

if TYPE_CHECKING:
    from .context import EditorContext

log = logging.getLogger("llmspace.ui.editor")
AUTOSAVE_MS = 500
HINTS_SYNC_LIMIT = 300  # messages; larger threads compute variable hints after a pause
HINTS_DELAY_MS = 400
PROMPT_LINES = 6  # the system prompt box never gets fewer lines; the settings column scrolls instead
# (shares of the width, minimum widths in px) of settings | messages [| history]
TWO_PANES = ([0.4, 0.6], [220, 300])
HISTORY_PANES = ([0.24, 0.42, 0.34], [180, 270, 200])  # History: room for the reply and the time; messages keep 270 px


STATUS_CHARS = 11  # the run status beside the title: Running…, Stopping…, Retrying…, Stopped


class EditorView(tb.Frame):
    """Editor of one thread tab. Running (Run/Stop, the banner, calling tools from cards)
    is the `self.run_controls` component (`ui/editor/run_controls.py`)."""

    def __init__(self, master: Any, ctx: EditorContext, rel: str, thread: Any = None) -> None:
        presenter = EditorPresenter(ctx.app.workspace, rel, thread)  # may refuse: no widget yet
        super().__init__(master)
        self.ctx = ctx
        self.ui = ctx.ui  # pump, dialogs, status, errors, toasts, root
        self.app = ctx.app
        self.p = presenter
        self.run = RunPresenter(self.p, self.app)
        self.run_controls = RunControls(self, ctx.ui, ctx.switches, self.app, self.p, self.run)
        self.suppress_redraw = False
        self._autosave_job: str | None = None
        self._hints_job: str | None = None
        self._colours: dict[str, str] | None = None
        self._thumbnails: Any = None
        self._mtime = self._disk_mtime()
        self._build()
        self.p.listeners.append(self._on_change)
        self.run.listeners.append(self.run_controls.on_run)
        self.refresh_all()
        if self.p.dirty:  # the load rules changed something: an ordinary edit
            self.schedule_autosave()

    # -- layout --------------------------------------------------------------------------
    def _build(self) -> None:
        head = self.head = tb.Frame(self, padding=(8, 6))
        head.pack(fill="x")
        self.title = TitleField(head, self.ui, self.ctx.tabs, self.ctx.tree, self.p)
        self.title_var, self.title_entry = self.title.var, self.title.entry
        self.undo_btn = tb.Button(head, text="↶", width=3, bootstyle="secondary-outline", command=self.undo)
        self.redo_btn = tb.Button(head, text="↷", width=3, bootstyle="secondary-outline", command=self.redo)
        # as wide as its longest text ("Stopping…"), so the title keeps its width while a run goes
        self.status = tb.Label(head, text="", bootstyle="secondary", width=STATUS_CHARS, anchor="w")
        settings = tb.Menubutton(head, text="⚙", bootstyle="secondary-outline")
        menu = tk.Menu(settings, tearoff=False)
        switches = self.ctx.switches
        add_check(menu, "Enable ReAct loop", switches.react, switches.changed)  # a box that shows on and off
        add_check(menu, "Auto run tools", switches.auto_run, switches.changed)
        settings.configure(menu=themes.style_menu(self, menu))
        self.settings_menu = menu
        self.history_btn = tb.Button(head, text="History", bootstyle="secondary-outline", command=self.toggle_history)
        self.run_btn = tb.Button(head, text="▶ Run", bootstyle="success", width=9, command=self.run_controls.run_or_stop)
        # a grid, so that on a narrow window the title shrinks and Run, History and ⚙ stay whole
        cells: tuple[tuple[Any, int | tuple[int, int]], ...] = (
            (self.title_entry, 0), (self.undo_btn, (8, 2)), (self.redo_btn, 0), (self.status, 8),
            (settings, 4), (self.history_btn, 4), (self.run_btn, 0))
        for col, (w, padx) in enumerate(cells):
            w.grid(row=0, column=col, padx=padx, sticky="ew" if col == 0 else "")
        head.columnconfigure(0, weight=1)
        head.columnconfigure(3, weight=1)

        self.paned = tb.Panedwindow(self, orient="horizontal")
        self.paned.pack(fill="both", expand=True)
        # the settings column scrolls when the window is too low for it (800×500) and otherwise
        # lets the system prompt fill its height
        self.settings = ScrollColumn(self.paned, padding=(8, 4))
        self.settings_column = self.settings
        left = self.settings.body
        self.right = tb.Frame(self.paned, padding=(4, 4))
        self.paned.add(self.settings, weight=2)
        self.paned.add(self.right, weight=3)
        self.history_panel: Any = None
        self.panes = PaneKeeper(self.paned, *TWO_PANES)  # the columns keep their share as the window changes
        self._two_panes = TWO_PANES[0]  # the shares without History (the user may have dragged them)

        self.model_row = ModelRow(left, self, self.app, self.p)
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
        self.prompt_assist = TextAssist(self.prompt, self, lambda: ("systemPrompt", True))
        self.prompt.bind("<<Modified>>", self._on_prompt_modified)
        self.hints = WrappedLabel(left, bootstyle="warning")
        self.hints.pack(anchor="w", fill="x", pady=2)

        self.banner = tb.Frame(self.right)
        self.list = MessageList(self.right, self, self.ctx.rendering(), self.ctx.markdown())
        self.list.pack(fill="both", expand=True)
        foot = tb.Frame(self.right)
        foot.pack(fill="x", pady=(4, 0))
        self.add_btn = tb.Button(foot, text="+ Message", bootstyle="secondary-outline", command=self.add_message)
        self.add_btn.pack(side="left")
        self.count_lbl = tb.Label(foot, text="", bootstyle="secondary")
        self.count_lbl.pack(side="right")

    @staticmethod
    def _row(column: Any, text: str, command: Any) -> tuple[WrappedLabel, Any, Any]:
        """A settings row: its list of names (wrapped between names, never inside one), its
        Edit button and its label, laid out by the `LabelStacker`."""
        row = tb.Frame(column)
        row.pack(fill="x", pady=2)
        return (WrappedLabel(row, bootstyle="secondary"), tb.Button(row, text="Edit", bootstyle="link", command=command),
                tb.Label(row, text=text, width=9))

    # -- refresh from the presenter -------------------------------------------------------
    def refresh_all(self) -> None:
        self.show_title(self.p.title)
        self.refresh_model()
        self.refresh_tools()
        self.refresh_prompt()
        self.refresh_variables()
        self.list.follow = True
        if self.list.body.winfo_height() > 50:
            self.list.render()
        # else: the list renders once it gets its real size (<Configure>), not twice
        self.refresh_controls()
        if self.history_panel is not None:
            self.history_panel.refresh()

    def regions(self) -> list[Region]:
        """The editor's main regions for F6 (`ui/keyboard.Regions`): settings (the header and
        the settings column; the title gets the focus), messages (the last message's text,
        or "+ Message") and the run history when it is open."""
        regions = [Region("settings", [self.head, self.settings_column], lambda: self.title_entry),
                   Region("messages", [self.right], self._messages_target)]
        if self.history_panel is not None:
            regions.append(Region("history", [self.history_panel], lambda: self.history_panel.list))
        return regions

    def _messages_target(self) -> Any:
        for card in reversed(self.list.order):
            if card.text is not None and card.winfo_ismapped():
                return card.text
        return self.add_btn

    def toggle_history(self) -> None:
        """Show or hide the run-history panel at the right."""
        if self.history_panel is None:
            from .history import HistoryPanel

            self.history_panel = HistoryPanel(self.paned, self)
            self.paned.add(self.history_panel, weight=1)
            self.history_panel.refresh()
            self.update_idletasks()
            self._two_panes = self.panes.shares
            self.panes.set_shares(*HISTORY_PANES)  # settings | messages | history: none is crushed
        else:
            self.paned.forget(self.history_panel)
            self.history_panel.destroy()
            self.panes.set_shares(self._two_panes, TWO_PANES[1])
            self.history_panel = None
        # filled while the panel is open, an outline when it is closed
        self.history_btn.configure(bootstyle="secondary" if self.history_panel is not None else "secondary-outline")

    def refresh_model(self) -> None:
        """The model a run will call (with the reason when it is not the saved one) and its parameters."""
        self.model_row.refresh()

    def refresh_tools(self) -> None:
        tools = self.p.tools
        self.tools_lbl.set_text(", ".join(catalog.tool_label(t) for t in tools) if tools else "No tools")

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
        if self.run.warnings:  # what the last run's render reported (template errors, unknown names)
            text = "\n".join(([text] if text else []) + ["Last run: " + w for w in self.run.warnings[:5]])
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

    def refresh_controls(self) -> None:
        running = self.run.running
        ro = self.p.read_only
        self.run_btn.configure(text="■ Stop" if running else "▶ Run", bootstyle="danger" if running else "success")
        state = "disabled" if ro else "normal"
        for w in (self.title_entry, self.model_btn, self.params_btn, self.tools_btn, self.vars_btn, self.add_btn):
            w.configure(state=state)
        self.prompt.configure(state=state)
        self.undo_btn.configure(state="normal" if self.p.can_undo() else "disabled")
        self.redo_btn.configure(state="normal" if self.p.can_redo() else "disabled")
        n = len(self.p.messages)
        self.count_lbl.configure(text=f"{n} message{'s' if n != 1 else ''}")
        self.run_controls.draw_banner()

    # -- presenter notifications -----------------------------------------------------------
    def _on_change(self, update: vu.EditorUpdate) -> None:
        match update:
            case vu.TextStreamed():
                self.list.stream_text(update.message_id, update.text)
                return
            case vu.ThinkingStreamed():
                self.list.stream_thinking(update.message_id, update.text)
                return
            case vu.AllChanged():
                self.refresh_all()
            case vu.HeaderChanged():
                self.show_title(self.p.title)
            case vu.ModelChanged():
                self.refresh_model()
            case vu.ToolsChanged():
                self.refresh_tools()
            case vu.VariablesChanged() | vu.PromptChanged():
                self.refresh_variables()
            case vu.MessagesChanged():
                if update.cause == "stream":
                    self.list.follow = True
                if update.cause != "edit":
                    self.list.request_render()  # run events: at most one render per frame
                else:
                    self.list.render()
                    self.refresh_variables()
            case vu.MessageChanged():
                if not self.suppress_redraw:
                    self.list.render()
            case vu.ReadOnlyChanged():
                self.list.render()
            case vu.HistoryChanged():
                self.schedule_autosave()
                if self.history_panel is not None:
                    self.history_panel.refresh()
            case vu.Saved():
                self._mtime = self._disk_mtime()
                self.ui.status.set(update.error or f"Saved {self.p.rel}")
            case _:
                assert_never(update)
        if isinstance(update, vu.ThreadChanged) and not self.p.read_only:
            self.schedule_autosave()
        self.refresh_controls()

    # -- autosave --------------------------------------------------------------------------
    def schedule_autosave(self) -> None:
        if self._autosave_job is not None:
            self.after_cancel(self._autosave_job)
        self._autosave_job = self.after(AUTOSAVE_MS, self._autosave)

    def _autosave(self) -> None:
        self._autosave_job = None
        try:
            self.flush()
        except UserFacingError:
            pass  # flush() showed it in the status bar; the edits stay in the editor

    def flush(self) -> bool:
        """Save now if there are unsaved edits (raises UserFacingError when it cannot)."""
        if self._autosave_job is not None:
            try:
                self.after_cancel(self._autosave_job)
            except tk.TclError:
                pass
            self._autosave_job = None
        if self.p.read_only:
            return False
        try:
            return self.p.save()
        except UserFacingError as exc:
            self.ui.status.set(str(exc))
            raise

    def _disk_mtime(self) -> int | None:
        try:
            return os.stat(self.app.workspace.resolve(self.p.rel)).st_mtime_ns
        except (OSError, UserFacingError):
            return None

    def check_external_change(self) -> None:
        """Reload when another program changed the file and we have no unsaved edits."""
        if self.p.read_only or self.p.dirty:
            return
        now = self._disk_mtime()
        if now is not None and self._mtime is not None and now != self._mtime:
            self._mtime = now
            try:
                self.p.reload_from_disk()
                self.ui.status.set(f"Reloaded {self.p.rel} (changed on disk)")
            except UserFacingError as exc:
                self.ui.status.set(str(exc))

    def close(self, save: bool = True) -> None:
        """Tab closed: save now; a running run is stopped and its outcome saved when it ends."""
        if self.run.running:
            if save:
                self.run.detach()
            else:
                self.run.listeners.clear()
                self.p.listeners.clear()
                self.run.stop()
        elif save:
            try:
                self.flush()
            except UserFacingError as exc:
                self.ui.errors.show(str(exc))
        self.destroy()

    def moved(self, new_rel: str) -> None:
        self.p.moved(new_rel)
        self._mtime = self._disk_mtime()

    # -- intents ---------------------------------------------------------------------------
    def _guard(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
        return None

    def show_title(self, title: str) -> None:
        self.title.show(title)

    def commit_title(self) -> None:
        """Rename the file to the title typed in the header (one undo step)."""
        self.title.commit()

    def undo(self) -> None:
        if self.title.pending:  # a title typed but not applied: Ctrl+Z puts the old one back
            self.title.revert()
            return
        if self._guard(self.p.undo):
            self._forget_run_error()

    def redo(self) -> None:
        if self._guard(self.p.redo):
            self._forget_run_error()

    def _forget_run_error(self) -> None:
        """After undo/redo the last run's error banner describes a thread no longer shown."""
        if self.run.forget_error():
            self.status.configure(text="")
            self.refresh_controls()  # redraws the banner

    def add_message(self) -> None:
        """+ Message: a new message at the end, with the keyboard focus in its text."""
        mid = self._guard(self.p.message_intents.add_message)
        if not isinstance(mid, str):
            return
        self.list.raw.add(mid)  # a reply added by hand is typed in: raw text, not Markdown
        self.list.scroll_to_end()
        self.list.focus_message(mid)

    def _on_prompt_modified(self, _e: Any = None) -> None:
        if not self.prompt.edit_modified():
            return
        self.prompt.edit_modified(False)
        self.highlight()
        if not self.p.read_only:
            self._guard(self.p.set_system_prompt, self.prompt.get("1.0", "end-1c"))

    def pick_model(self) -> tk.Menu:
        menu = panels.model_menu(self, self.app, self.p, lambda: None)
        try:
            menu.tk_popup(self.model_btn.winfo_rootx(), self.model_btn.winfo_rooty() + self.model_btn.winfo_height())
        finally:
            menu.grab_release()
        return menu

    def edit_params(self) -> Any:
        if self.p.thread.model is None:
            self.ui.errors.show("Pick a model before setting its parameters.")
            return None
        return panels.ParamsPopover(self, self.p, lambda: None)

    def edit_tools(self) -> Any:
        return panels.ToolsDialog(self, self.ui, self.app, self.p, lambda: None)

    def edit_variables(self) -> Any:
        from .variables_dialog import VariablesDialog

        return VariablesDialog(self, self.p, lambda: None, skill_names=lambda: [sk.name for sk in self.app.skills.enabled()],
                               dialogs=self.ui.dialogs)

    def set_rendering(self, mode: str) -> None:
        self.list.set_mode(mode)

    def set_markdown(self, on: bool) -> None:
        """View › Render Markdown."""
        self.list.set_markdown(on)

    def text_colours(self) -> dict[str, str]:
        """The theme's readable colours for highlighted text (`var`, `tag`, `muted`), kept
        until the theme changes."""
        if self._colours is None:
            self._colours = themes.palette(self)
        return self._colours

    def thumbnail_cache(self) -> Any:
        """Thumbnails of this thread's images, decoded once on a worker (`card_images.py`)."""
        if self._thumbnails is None:
            from .card_images import thumbnail_cache

            self._thumbnails = thumbnail_cache(self)
        return self._thumbnails

    def theme_changed(self) -> None:
        self._colours = None
        self.prompt_assist.colour(self.text_colours())
        self.list.render()
