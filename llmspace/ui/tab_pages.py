"""Thread tabs of the main window: pages in the notebook, editors built on first show
(large files read on the worker pool), close/close others/close all/reopen, next/previous,
and keeping tabs right when the tree renames, moves or deletes files.

`TabPages` is a component of `ui/main_window.MainWindow` (`window.tab_pages`); it owns the
tab list (`presenters.tabs.TabsPresenter`), the pages and the editors. It gets the UI
services, the workspace, the notebook, the workspace tree, the window's
`ui/editor/context.EditorContext` (made by the composition root, handed to each editor it
builds), and two callbacks: `show_right` (the notebook or the welcome view) and
`on_change` (save the tabs).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..core.run_verdicts import only_records_invalid
from ..errors import UserFacingError, ValidationFailed, error_text
from ..presenters.tabs import TabsPresenter, tab_title
from .theme import style_menu

if TYPE_CHECKING:
    from ..core.workspace import Workspace
    from .editor.context import EditorContext
    from .services import UiServices
    from .tree_view import TreeView

LARGE_FILE = 1_000_000  # bytes; larger threads load in a worker thread


def thread_exists(workspace: Any, rel: str) -> bool:
    try:
        return bool(workspace.resolve(rel).is_file())
    except UserFacingError:
        return False


class TabPages:
    """Tab pages and their editors."""

    def __init__(self, ui: UiServices, workspace: Workspace, notebook: tb.Notebook, tabs: TabsPresenter, tree: TreeView, *,
                 editor_context: EditorContext, show_right: Callable[[], None], on_change: Callable[[], None]) -> None:
        self.ui = ui
        self.workspace = workspace
        self.tree = tree
        self.show_right, self.on_change = show_right, on_change
        self.editor_context = editor_context
        self.notebook = notebook
        self.tabs = tabs
        self.pages: dict[str, tb.Frame] = {}
        self.editors: dict[str, Any] = {}
        self._loading: set[str] = set()
        notebook.bind("<<NotebookTabChanged>>", self._on_tab_changed)
        notebook.bind("<ButtonPress-1>", self._on_click)
        notebook.bind("<Button-2>", self._on_middle_click)
        notebook.bind("<Button-3>", self._on_tab_menu)

    def thread_exists(self, rel: str) -> bool:
        return thread_exists(self.workspace, rel)

    def add_page(self, rel: str) -> tb.Frame:
        page = tb.Frame(self.notebook)
        page.rel = rel  # type: ignore[attr-defined]
        self.pages[rel] = page
        idx = self.tabs.tabs.index(rel)
        if idx >= len(self.notebook.tabs()):
            self.notebook.add(page, text=self._tab_text(rel))
        else:
            self.notebook.insert(idx, page, text=self._tab_text(rel))
        return page

    @staticmethod
    def _tab_text(rel: str) -> str:
        return tab_title(rel) + "  "

    def open_thread(self, rel: str) -> Any:
        """Open (or focus) the tab of `rel`; returns its editor view."""
        added = self.tabs.open(rel)
        if added:
            self.add_page(rel)
        self.show_right()
        self.notebook.select(self.pages[rel])
        self.tree.select(rel)
        self.on_change()
        return self.ensure_editor(rel)

    def ensure_editor(self, rel: str) -> Any:
        """The editor of an open tab, built on first use. Large files are read and validated
        in a worker thread (a "Loading…" label shows meanwhile) so the window never stalls;
        then this returns None and the editor appears when the pump delivers the thread."""
        if rel in self.editors or rel in self._loading:
            return self.editors.get(rel)
        page = self.pages.get(rel)
        if page is None:
            return None
        try:
            size = self.workspace.resolve(rel).stat().st_size
        except (OSError, UserFacingError):
            size = 0
        if size <= LARGE_FILE:
            return self._build_editor(rel, None)
        self._loading.add(rel)
        lbl = tb.Label(page, text=f"Loading {rel} ({size / 1e6:.1f} MB)…", bootstyle="secondary", padding=20)
        lbl.pack(fill="both", expand=True)
        page.loading_label = lbl  # type: ignore[attr-defined]
        ws = self.workspace

        def done(future: Future[Any]) -> None:
            try:
                thread = future.result()
            except Exception as exc:  # reported on the UI thread
                self._load_failed(rel, exc)
                return
            self._build_editor(rel, thread)

        self.ui.pump.run_in_worker(lambda: ws.open(rel), done, name="thread-loader")
        return None

    def _build_editor(self, rel: str, thread: Any) -> Any:
        self._loading.discard(rel)
        page = self.pages.get(rel)
        if page is None or rel in self.editors:
            return self.editors.get(rel)
        lbl = getattr(page, "loading_label", None)
        if lbl is not None:
            lbl.destroy()
            page.loading_label = None  # type: ignore[attr-defined]
        from .editor.view import EditorView

        try:
            ed = EditorView(page, self.editor_context, rel, thread=thread)
        except UserFacingError as exc:
            self._load_failed(rel, exc)
            return None
        ed.pack(fill="both", expand=True)
        self.editors[rel] = ed
        return ed

    def _load_failed(self, rel: str, exc: BaseException) -> None:
        self._loading.discard(rel)
        page = self.pages.get(rel)
        if page is None:
            return
        lbl = getattr(page, "loading_label", None)
        if lbl is not None:
            lbl.destroy()
        text = error_text(exc)
        label = tb.Label(page, text=text, bootstyle="danger", wraplength=600, padding=(20, 40, 20, 8))
        label.pack(fill="x", anchor="nw")
        page.failure_widgets = [label]  # type: ignore[attr-defined]
        if isinstance(exc, ValidationFailed) and only_records_invalid(exc.problems):
            box = tb.Frame(page, padding=(20, 0, 20, 20))
            box.pack(fill="x", anchor="nw")
            page.failure_box = box  # type: ignore[attr-defined]
            page.failure_widgets.append(box)  # type: ignore[attr-defined]
            tb.Label(box, wraplength=600, bootstyle="secondary", text=(
                "Only run-history or evaluation records are invalid. You can open the thread without them, "
                "as LLM Space does; the file changes only when you edit the thread.")).pack(anchor="w", pady=(8, 4))
            tb.Button(box, text="Open without the invalid records", bootstyle="warning-outline",
                      command=lambda: self.open_repaired(rel)).pack(anchor="w")
        self.editors[rel] = None

    def open_repaired(self, rel: str) -> Any:
        """Open a thread with its invalid run/evaluation records left out (after a failed load)."""
        try:
            thread = self.workspace.open_repaired(rel)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return None
        page = self.pages.get(rel)
        for widget in getattr(page, "failure_widgets", None) or []:
            widget.destroy()
        if page is not None:
            page.failure_widgets = []  # type: ignore[attr-defined]
        self.editors.pop(rel, None)
        return self._build_editor(rel, thread)

    def active_editor(self) -> Any:
        return self.editors.get(self.tabs.active) if self.tabs.active else None

    # -- commands on the active editor (Edit › Undo/Redo, Run › Run / Stop) ------------------
    def undo(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            self.ui.status.clear_error()
            ed.undo()

    def redo(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            self.ui.status.clear_error()
            ed.redo()

    def run_or_stop(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            ed.run_controls.run_or_stop()

    def regenerate(self) -> None:
        """Ctrl+R: the active editor runs its last turn again (`RunControls.regenerate`)."""
        ed = self.active_editor()
        if ed is not None:
            ed.run_controls.regenerate()

    def _on_tab_changed(self, _e: Any = None) -> None:
        try:
            cur = self.notebook.select()
        except tk.TclError:
            return
        if not cur:
            return
        page = self.notebook.nametowidget(cur)
        rel = getattr(page, "rel", None)
        if rel:
            if rel != self.tabs.active:
                self.ui.status.clear_error()  # an error about the tab left behind is old news
            self.tabs.activate(rel)
            ed = self.ensure_editor(rel)
            if ed is not None:
                ed.refresh_model()  # keys or providers may have changed meanwhile
            self.tree.select(rel)
            self.on_change()

    def _on_click(self, e: Any) -> str | None:
        """A click on a tab selects it and keeps the focus on the tab strip. (Tk's own binding
        moves the focus into the page's first field — the title, all selected — where a stray
        keystroke would rename the file.)"""
        tab = str(self.notebook.tk.call(str(self.notebook), "identify", "tab", e.x, e.y))
        if not tab:
            return None
        self.notebook.select(int(tab))
        self.notebook.focus_set()
        return "break"

    def _on_middle_click(self, e: Any) -> None:
        try:
            idx = self.notebook.index(f"@{e.x},{e.y}")
        except tk.TclError:
            return
        self.close_tab(self.tabs.tabs[idx])

    def _on_tab_menu(self, e: Any) -> tk.Menu | None:
        """Right click on a tab: Close, Close Others, Close All, Reopen Closed Tab."""
        try:
            idx = self.notebook.index(f"@{e.x},{e.y}")
        except tk.TclError:
            return None
        rel = self.tabs.tabs[idx]
        self.notebook.select(self.pages[rel])
        menu = style_menu(self.notebook, tk.Menu(self.notebook, tearoff=False))
        menu.add_command(label="Close", command=lambda: self.close_tab(rel))
        menu.add_command(label="Close Others", command=self.close_others)
        menu.add_command(label="Close All", command=self.close_all)
        menu.add_command(label="Reopen Closed Tab", command=self.reopen_closed)
        menu.tk_popup(e.x_root, e.y_root)
        return menu

    def close_tab(self, rel: str, *, remember: bool = True) -> None:
        ed = self.editors.pop(rel, None)
        if ed is not None:
            ed.close()
        page = self.pages.pop(rel, None)
        if remember:
            self.tabs.close(rel)
        else:
            self.tabs.removed(rel)
        if page is not None:
            self.notebook.forget(page)
            page.destroy()
        try:
            self.workspace.forget(rel)
        except Exception:
            pass
        self.show_right()
        if self.tabs.active in self.pages:
            self.notebook.select(self.pages[self.tabs.active])
        self.on_change()

    def close_active(self) -> None:
        if self.tabs.active:
            self.close_tab(self.tabs.active)

    def close_others(self) -> None:
        keep = self.tabs.active
        for rel in [t for t in self.tabs.tabs if t != keep]:
            self._close_pages([rel])
        if keep:
            self.tabs.close_others(keep)
        self.show_right()
        self.on_change()

    def close_all(self) -> None:
        self._close_pages(list(self.tabs.tabs))
        self.tabs.close_all()
        self.show_right()
        self.on_change()

    def _close_pages(self, rels: list[str]) -> None:
        for rel in rels:
            ed = self.editors.pop(rel, None)
            if ed is not None:
                ed.close()
            page = self.pages.pop(rel, None)
            if page is not None:
                self.notebook.forget(page)
                page.destroy()

    def reopen_closed(self) -> None:
        before = set(self.tabs.tabs)
        group = self.tabs.reopen()
        for rel in group:
            if rel not in before and self.thread_exists(rel):
                self.add_page(rel)
            elif rel not in before:
                self.tabs.tabs.remove(rel)
        if self.tabs.active in self.pages:
            self.show_right()
            self.notebook.select(self.pages[self.tabs.active])
        self.on_change()

    def step_tab(self, delta: int) -> None:
        """Ctrl+Tab: the next (or previous) tab; the focus goes to the tab strip, never stays
        in the tab that was left (hidden now)."""
        rel = self.tabs.step(delta)
        if rel:
            self.notebook.select(self.pages[rel])
            self.notebook.focus_set()

    # -- tree callbacks ------------------------------------------------------------------
    def rename_entry(self, rel: str, name: str) -> str:
        ed = self.editors.get(rel)
        if ed is not None:
            ed.flush()
        new_rel = self.tree.p.rename(rel, name)
        self._retarget(rel, new_rel)
        return new_rel

    def before_move(self, rel: str) -> None:
        for t, ed in list(self.editors.items()):
            if ed is not None and (t == rel or t.startswith(rel + "/")):
                ed.flush()

    def after_move(self, old: str, new: str) -> None:
        self._retarget(old, new)

    def _retarget(self, old: str, new: str) -> None:
        if old == new:
            return
        mapping = {}
        for t in list(self.pages):
            if t == old or t.startswith(old + "/"):
                mapping[t] = new + t[len(old):]
        self.tabs.renamed(old, new)
        for t, n in mapping.items():
            page = self.pages.pop(t)
            page.rel = n  # type: ignore[attr-defined]
            self.pages[n] = page
            self.notebook.tab(page, text=self._tab_text(n))
            if t in self.editors:
                ed = self.editors.pop(t)
                self.editors[n] = ed
                if ed is not None:
                    ed.moved(n)
        self.on_change()

    def before_remove(self, rel: str) -> None:
        for t in list(self.pages):
            if t == rel or t.startswith(rel + "/"):
                ed = self.editors.pop(t, None)
                if ed is not None:
                    ed.close(save=False)

    def after_remove(self, rel: str) -> None:
        for t in list(self.pages):
            if t == rel or t.startswith(rel + "/"):
                self.close_tab(t, remember=False)

    def check_open_files(self) -> None:
        """Reload open, unedited threads that another program changed; close vanished ones."""
        for ed in list(self.editors.values()):
            if ed is not None:
                ed.check_external_change()

