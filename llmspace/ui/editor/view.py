"""The thread editor of one tab, composed of its parts: the header (`header.EditorHeader`:
title that renames the file, undo/redo, run status, ⚙ run switches, History, Run/Stop), the
settings column (`settings_column.SettingsColumn`: model, tools, variables, system prompt
and hints), the message list (`messages.MessageList`) with the run banner and "+ Message",
and the run-history panel (`history.HistoryPanel`) when it is open (in an editor too narrow
for three columns, an 800 px window, the settings column folds while it is open). Running is
`run_controls.RunControls`.

Saving and reloading the file is `autosave.ThreadFile`. While the tab runs the editor is
read-only; streamed text arrives through the pump (one insert per frame).
Built lazily by `ui/tab_pages.py` when its tab is first shown, with the window's
`EditorContext` (`ui/editor/context.py`); each part gets the few services it uses.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, assert_never

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters import view_updates as vu
from ...presenters.editor import EditorPresenter
from .. import theme as themes
from ..keyboard import Region
from ..panes import PaneKeeper
from . import mcp_dialogs
from .autosave import ThreadFile
from .card_images import Pictures
from .card_services import CardServices
from .context import RunRecords, TextServices
from .header import EditorHeader, HeaderCommands
from .messages import MessageList
from .run_controls import RunControls
from .settings_column import SettingsColumn

if TYPE_CHECKING:
    from .context import EditorContext
    from .history import HistoryPanel

# (shares of the width, minimum widths in px) of settings | messages [| history]
# messages: 400 px (the sash included) keep a card's actions on one row (the last reply's
# ↻ Regenerate … ✕: 357 px); at 800 px the settings column keeps about 228 px, where the longest
# built-in variable name (current_working_directory) still shows whole
TWO_PANES = ([0.4, 0.6], [200, 400])
HISTORY_PANES = ([0.24, 0.42, 0.34], [180, 270, 200])  # History: room for the reply and the time; messages keep 270 px
# History open in an editor narrower than HISTORY_PANES' minimums (an 800 px window): the settings
# column is folded while it is open; messages | history, the runs list wide enough for its time
NARROW_HISTORY_PANES = ([0.55, 0.45], [300, 280])


class EditorView(tb.Frame):
    """Editor of one thread tab: lays out its parts and routes the presenter's updates to them."""

    def __init__(self, master: Any, ctx: EditorContext, rel: str, thread: Any = None) -> None:
        presenter = EditorPresenter(ctx.workspace, rel, thread)  # may refuse: no widget yet
        super().__init__(master)
        self.ctx = ctx
        self.ui = ctx.ui  # pump, dialogs, status, errors, toasts, root
        self.p = presenter
        self.run = ctx.run_presenter(presenter)
        self._colours: dict[str, str] | None = None
        self.file = ThreadFile(self, ctx.ui, ctx.workspace, presenter)
        self.history_panel: HistoryPanel | None = None
        text = TextServices(presenter, ctx.ui.pump, self.text_colours, ctx.skills)
        self.header = EditorHeader(self, ctx.ui, presenter, ctx.switches, ctx.rename_thread,
                                   HeaderCommands(self.undo, self.redo, self.toggle_history, self.run_or_stop,
                                                  partial(ctx.share, presenter.rel) if ctx.share else None))
        self.header.pack(fill="x")
        self.paned = tb.Panedwindow(self, orient="horizontal")
        self.paned.pack(fill="both", expand=True)
        self.settings = SettingsColumn(self.paned, self, ctx.ui, presenter, ctx.catalog, text, lambda: self.run.warnings)
        self.right = tb.Frame(self.paned, padding=(4, 4))
        self.paned.add(self.settings, weight=2)
        self.paned.add(self.right, weight=3)
        self.panes = PaneKeeper(self.paned, *TWO_PANES)  # the columns keep their share as the window changes
        self._two_panes = TWO_PANES[0]  # the shares without History (the user may have dragged them)
        self.paned.bind("<Configure>", lambda e: self._fit_history() if e.widget is self.paned else None, add=True)
        self.banner = tb.Frame(self.right)
        self.run_controls = RunControls(self, self.banner, ctx.ui, ctx.switches, ctx.offer_model, presenter, self.run)
        self.pictures = Pictures(self, ctx.ui.pump)
        cards = CardServices(ctx.ui, self.run_controls, text, self.pictures, mcp_dialogs.ResourceAction(self))
        self.list = MessageList(self.right, cards, ctx.rendering(), ctx.markdown())
        self.list.pack(fill="both", expand=True)
        self.run_controls.show_in(self.list)
        foot = tb.Frame(self.right)
        foot.pack(fill="x", pady=(4, 0))
        self.add_btn = tb.Button(foot, text="+ Message", bootstyle="secondary-outline", command=self.add_message)
        self.add_btn.pack(side="left")
        self.mcp_prompt_btn = tb.Button(foot, text="Insert MCP prompt…", bootstyle="secondary-link",
                                        command=self.insert_mcp_prompt)
        self.mcp_prompt_btn.pack(side="left", padx=(6, 0))
        self.count_lbl = tb.Label(foot, text="", bootstyle="secondary")
        self.count_lbl.pack(side="right")
        self.p.listeners.append(self._on_change)
        self.run.listeners.append(self.run_controls.on_run)
        self.refresh_all()
        if self.p.dirty:  # the load rules changed something: an ordinary edit
            self.schedule_autosave()

    # -- what the parts show --------------------------------------------------------------
    def refresh_all(self) -> None:
        self.header.show_title(self.p.title)
        self.settings.refresh()
        if self.list.stream.id is None:  # a run that just ended leaves its reader where they are
            self.list.follow = True
        self.list.render_when_sized()
        self.refresh_controls()
        self.refresh_history()

    def refresh_model(self) -> None:
        """Providers, keys or the default model changed: the Model row says again which model runs."""
        self.settings.refresh_model()

    def refresh_hints(self) -> None:
        self.settings.refresh_hints()

    def refresh_history(self) -> None:
        if self.history_panel is not None:
            self.history_panel.refresh()

    def refresh_controls(self) -> None:
        ro = self.p.read_only
        self.header.show_controls(self.run.running, ro, self.p.can_undo(), self.p.can_redo())
        self.settings.set_read_only(ro)
        self.add_btn.configure(state="disabled" if ro else "normal")
        n = len(self.p.messages)
        self.count_lbl.configure(text=f"{n} message{'s' if n != 1 else ''}")
        self.run_controls.draw_banner()

    def show_run_status(self, text: str) -> None:
        self.header.show_status(text)

    def regions(self) -> list[Region]:
        """The editor's main regions for F6 (`ui/keyboard.Regions`): settings (the header and
        the settings column; the title gets the focus), messages (the last message's text,
        or "+ Message") and the run history when it is open."""
        regions = [Region("settings", [self.header, self.settings], lambda: self.header.title_entry),
                   Region("messages", [self.right], self._messages_target)]
        panel = self.history_panel
        if panel is not None:
            regions.append(Region("history", [panel], lambda: panel.list))
        return regions

    def _messages_target(self) -> Any:
        return self.list.last_text() or self.add_btn

    def toggle_history(self) -> None:
        """Show or hide the run-history panel at the right."""
        if self.history_panel is None:
            from .history import HistoryPanel

            runs = RunRecords(self.ui, self.p, self.ctx.load_trace, self.ctx.open_thread)
            self.history_panel = HistoryPanel(self.paned, runs, close=self.toggle_history)  # Esc closes it
            self.paned.add(self.history_panel, weight=1)
            self.history_panel.refresh()
            self.update_idletasks()
            self._two_panes = self.panes.shares
            self.panes.set_shares(*HISTORY_PANES)  # settings | messages | history: none is crushed
            self._fit_history()
        else:
            had_focus = self.history_panel.has_focus()
            self.paned.forget(self.history_panel)
            self.history_panel.destroy()
            if had_focus:  # the keys go back to the button that opens it
                self.header.history_btn.focus_set()
            if self._settings_folded():
                self.paned.insert(0, self.settings, weight=2)
            self.panes.set_shares(self._two_panes, TWO_PANES[1])
            self.history_panel = None
        self.header.show_history(self.history_panel is not None)

    def _settings_folded(self) -> bool:
        return str(self.settings) not in [str(p) for p in self.paned.panes()]

    def _fit_history(self) -> None:
        """History open in an editor narrower than three columns' minimums (an 800 px window):
        the settings column is folded while History is open, so that the messages and the runs
        list (its rows, summaries and times) get room instead of three columns crushed below
        their minimums (which broke variable names inside a word); it comes back when the
        editor widens or History closes."""
        if self.history_panel is None or self.paned.winfo_width() <= 1:
            return
        narrow = self.paned.winfo_width() < sum(HISTORY_PANES[1])
        if narrow and not self._settings_folded():
            self.paned.forget(self.settings)
            self.panes.set_shares(*NARROW_HISTORY_PANES)
        elif not narrow and self._settings_folded():
            self.paned.insert(0, self.settings, weight=2)
            self.panes.set_shares(*HISTORY_PANES)

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
                self.header.show_title(self.p.title)
            case vu.ModelChanged():
                self.settings.refresh_model()
            case vu.ToolsChanged():
                self.settings.refresh_tools()
            case vu.VariablesChanged() | vu.PromptChanged():
                self.settings.refresh_variables()
            case vu.MessagesChanged():
                if update.cause == "stream" and self.list.at_end(added=1):
                    self.list.follow = True  # a new reply: followed only by a reader at the bottom
                if update.cause != "edit":
                    self.list.request_render()  # run events: at most one render per frame
                else:
                    self.list.render()
                    self.settings.refresh_variables()
            case vu.MessageChanged():
                self.list.message_changed()
            case vu.ReadOnlyChanged():
                self.list.render()
            case vu.HistoryChanged():
                self.schedule_autosave()
                self.refresh_history()
            case vu.Saved():
                self.file.saved()
                self.ui.status.set(update.error or f"Saved {self.p.rel}")
            case _:
                assert_never(update)
        if isinstance(update, vu.ThreadChanged) and not self.p.read_only:
            self.schedule_autosave()
        self.refresh_controls()

    # -- the file --------------------------------------------------------------------------
    def schedule_autosave(self) -> None:
        self.file.schedule()

    def flush(self) -> bool:
        """Save now if there are unsaved edits (raises UserFacingError when it cannot)."""
        return self.file.flush()

    def check_external_change(self) -> None:
        self.file.check_external_change()

    def moved(self, new_rel: str) -> None:
        self.file.moved(new_rel)

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

    # -- intents ---------------------------------------------------------------------------
    def _guard(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
        return None

    def run_or_stop(self) -> None:
        self.run_controls.run_or_stop()

    def undo(self) -> None:
        if self.header.title.pending:  # a title typed but not applied: Ctrl+Z puts the old one back
            self.header.title.revert()
            return
        if self._guard(self.p.undo):
            self._forget_run_error()

    def redo(self) -> None:
        if self._guard(self.p.redo):
            self._forget_run_error()

    def _forget_run_error(self) -> None:
        """After undo/redo the last run's error banner describes a thread no longer shown."""
        if self.run.forget_error():
            self.header.show_status("")
            self.refresh_controls()  # redraws the banner

    def add_message(self) -> None:
        """+ Message: a new message at the end, with the keyboard focus in its text."""
        mid = self._guard(self.p.message_intents.add_message)
        if isinstance(mid, str):
            self.list.show_typed(mid)

    def insert_mcp_prompt(self) -> Any:
        """Insert MCP prompt…: a server's prompt as messages at the end (`editor/mcp_dialogs.py`)."""
        return mcp_dialogs.insert_prompt(self)

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

    def theme_changed(self) -> None:
        self._colours = None
        self.settings.theme_changed()
        self.list.render()
