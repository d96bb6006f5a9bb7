"""The workspace tree on the left: folders and threads in a `tb.Treeview`, expanded state
kept, a context menu (New File, New Folder, Rename in place, Duplicate, Move to Trash,
Reveal, Refresh, Import), drag to move with an overwrite confirmation. It follows the
workspace's change events (created, renamed, removed: `core/workspace.Workspace.subscribe`,
brought onto the Tk thread by the pump and redrawn once per idle moment), so a thread
renamed by a plugin command or written by another part of the app shows at once; a ~2 s
poll of folder mtimes shows what other programs change.

The logic lives in `presenters.tree.TreePresenter`; this file only draws and routes.
Built by `ui/main_window.py` with the UI services, `on_change` (the window saves the
expanded folders) and `on_drop` (dropped files: ZIPs install, the rest import); the tabs
(`ui/tab_pages.TabPages`, built after the tree) are attached as `tree.tabs` (seen through
`TreeTabs`): opening, renaming, moving and removing files keep them right.
"""

from __future__ import annotations

import importlib
import tkinter as tk
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import ttkbootstrap as tb

from ..core.names import shown_name
from ..core.workspace import WorkspaceChange
from ..presenters.tree import TreePresenter
from . import tkvars
from .reveal import reveal_path

if TYPE_CHECKING:
    from .services import UiServices

POLL_MS = 2000


INLINE_ENTRY = "Inline.TEntry"


def inline_entry_style(widget: Any) -> str:
    """The rename box's style for the current theme: the entry with little padding (so it
    nearly fits a row) and a selection whose text reads on it (4.5:1) in either theme."""
    from .theme import readable

    try:
        style = widget.winfo_toplevel().style
        bg = str(style.colors.selectbg)
        style.configure(INLINE_ENTRY, padding=(4, 1), selectbackground=bg,
                        selectforeground=readable(widget, str(style.colors.selectfg), bg))
    except Exception:  # cosmetic: the default entry style
        return "TEntry"
    return INLINE_ENTRY


class TreeTabs(Protocol):
    """What the tree asks of the open tabs (`ui/tab_pages.TabPages`): open a thread, rename
    a file (the tab follows), keep tabs right around a move or a delete, and check the open
    files against the disk."""

    def open_thread(self, rel: str) -> Any: ...

    def rename_entry(self, rel: str, name: str) -> str: ...

    def before_move(self, rel: str) -> None: ...

    def after_move(self, old: str, new: str) -> None: ...

    def before_remove(self, rel: str) -> None: ...

    def after_remove(self, rel: str) -> None: ...

    def check_open_files(self) -> None: ...


class TreeView(tb.Frame):
    """Workspace tree widget."""

    tabs: TreeTabs  # attached by the composition root once the tabs are built
    share: Callable[[str], object] | None = None  # Share… of a thread (attached by the composition root)

    def __init__(self, master: Any, ui: UiServices, presenter: TreePresenter, *, on_change: Callable[[], None],
                 on_drop: Callable[[list[str]], None]) -> None:
        super().__init__(master)
        self.ui = ui
        self.p = presenter
        self.on_change, self.on_drop = on_change, on_drop
        bar = tb.Frame(self)
        bar.pack(fill="x", padx=4, pady=(4, 2))
        # the buttons are packed first and narrow, so a narrow sidebar shortens the heading, not them
        tb.Button(bar, text="+", width=2, padding=(4, 4), bootstyle="secondary-link", command=self.new_file).pack(side="right")
        tb.Button(bar, text="⟳", width=2, padding=(4, 4), bootstyle="secondary-link", command=self.refresh).pack(side="right")
        tb.Label(bar, text="Workspace", font="TkHeadingFont").pack(side="left")
        self.tree = tb.Treeview(self, show="tree", selectmode="browse")
        sb = tb.Scrollbar(self, orient="vertical", command=self.tree.yview)
        self.tree.configure(yscrollcommand=sb.set)
        sb.pack(side="right", fill="y")
        self.tree.pack(side="left", fill="both", expand=True)
        self.tree.tag_configure("folder", font="TkHeadingFont")
        self.tree.bind("<<TreeviewOpen>>", lambda e: self._on_open_close(True))
        self.tree.bind("<<TreeviewClose>>", lambda e: self._on_open_close(False))
        self.tree.bind("<<TreeviewSelect>>", self._on_select)
        self.tree.bind("<Button-3>", self._on_context)
        if self.tk.call("tk", "windowingsystem") == "aqua":  # macOS: right click is Button-2
            self.tree.bind("<Button-2>", self._on_context)
            self.tree.bind("<Control-Button-1>", self._on_context)
        self.tree.bind("<F2>", lambda e: self.begin_rename())
        self.tree.bind("<Delete>", lambda e: self.delete())
        self.tree.bind("<ButtonPress-1>", self._drag_start, add=True)
        self.tree.bind("<B1-Motion>", self._drag_motion, add=True)
        self.tree.bind("<ButtonRelease-1>", self._drag_end, add=True)
        self._drag: dict[str, Any] | None = None
        self._editor: tb.Entry | None = None
        self._suppress_select = False
        self.menu = tk.Menu(self, tearoff=False)
        items: list[tuple[str, Callable[[], object]] | None] = [
            ("New File", self.new_file), ("New Folder", self.new_folder), None,
            ("Rename", self.begin_rename), ("Duplicate", self.duplicate), ("Move to Trash", self.delete), None,
            ("Reveal in File Manager", self.reveal), ("Refresh", self.refresh), None,
            ("Import from Files…", self.import_files), ("Import from Clipboard", self.import_clipboard), None,
            ("Share…", self.share_selected)]
        for item in items:
            if item is None:
                self.menu.add_separator()
            else:
                self.menu.add_command(label=item[0], command=item[1])
        self._poll_job: str | None = None
        self._drawn: tuple[Any, ...] | None = None  # the listing the tree shows
        self._follow_job: str | None = None
        unsubscribe = presenter.ws.subscribe(self._workspace_changed)
        self.bind("<Destroy>", lambda e: unsubscribe() if e.widget is self else None, add=True)

    # -- drawing -------------------------------------------------------------------------
    def refresh(self, force: bool = True) -> bool:
        """Re-read the workspace and redraw, keeping selection and expanded folders.

        With `force=False` (the poll) nothing is redrawn when the listing is unchanged (our
        own autosaves touch folder mtimes too). Returns True when the tree was redrawn."""
        sel = self.selected()
        self.p.refresh()
        if not force and (self.p.all_folders(), self.p.all_threads()) == self._drawn:
            return False
        self.redraw(select=sel)
        return True

    def redraw(self, select: str | None = None) -> None:
        tree = self.tree
        tree.delete(*tree.get_children(""))
        expanded = self.p.expanded

        def add(parent: str, entries: list[Any]) -> None:
            for e in entries:
                if e.is_dir:
                    pin = "🔖 " if e.rel == "shared" else ""  # shared links land here, pinned first
                    tree.insert(parent, "end", iid=e.rel, text=pin + shown_name(e.name) + "/", open=e.rel in expanded, values=("dir",),
                                tags=("folder",))
                    add(e.rel, e.children or [])
                else:
                    tree.insert(parent, "end", iid=e.rel, text=shown_name(e.title), values=("file",))

        add("", self.p.entries)
        self._drawn = self.p.all_folders(), self.p.all_threads()
        if select and tree.exists(select):
            self._suppress_select = True
            tree.selection_set(select)
            tree.see(select)
            self.after_idle(self._unsuppress)
        self.ui.status.show_counts(len(self.p.all_threads()), self.p.ws.root)

    def _unsuppress(self) -> None:
        self._suppress_select = False

    def select(self, rel: str) -> None:
        if self.tree.exists(rel):
            self._suppress_select = True
            self.tree.selection_set(rel)
            self.tree.see(rel)
            self.after_idle(self._unsuppress)

    def selected(self) -> str | None:
        sel = self.tree.selection()
        return sel[0] if sel else None

    def enable_file_drops(self) -> bool:
        """Accept files dropped from the file manager (imported into the selected folder;
        plugin ZIPs are installed) when tkinterdnd2 can load; otherwise do nothing."""
        try:  # untyped: imported by name
            dnd = importlib.import_module("tkinterdnd2")
        except ImportError:
            return False
        tree: Any = self.tree  # importing tkinterdnd2 adds drop_target_register/dnd_bind to every widget
        try:
            dnd.TkinterDnD.require(self.winfo_toplevel())
            tree.drop_target_register(dnd.DND_FILES)

            def on_drop(e: Any) -> Any:
                self.on_drop(list(self.tk.splitlist(e.data)))  # ZIPs install, the rest import
                return e.action

            tree.dnd_bind("<<Drop>>", on_drop)
            return True
        except Exception:  # an old tkdnd or a platform without it: keep the app working
            import logging

            logging.getLogger("llmspace.ui").debug("file drops unavailable", exc_info=True)
            return False

    # -- polling for external changes ----------------------------------------------------
    def start_polling(self) -> None:
        self._poll_job = self.after(POLL_MS, self._poll)

    def stop_polling(self) -> None:
        if self._poll_job:
            self.after_cancel(self._poll_job)
            self._poll_job = None

    def _workspace_changed(self, change: WorkspaceChange) -> None:
        """A workspace event (any thread): the tree is brought up to date on the Tk thread."""
        if change.kind != "saved":  # a save changes no name
            self.ui.pump.post(self._follow)

    def _follow(self) -> None:
        if self._follow_job is None and self.winfo_exists():
            self._follow_job = self.after_idle(self._follow_now)

    def _follow_now(self) -> None:
        self._follow_job = None
        if self._editor is None and self._drag is None:  # an inline rename or a drag keeps its rows
            self.refresh(force=False)

    def _poll(self) -> None:
        try:
            if self._editor is None and self._drag is None and self.p.changed_on_disk():
                self.refresh(force=False)
            self.tabs.check_open_files()
        finally:
            self._poll_job = self.after(POLL_MS, self._poll)

    # -- events --------------------------------------------------------------------------
    def _on_open_close(self, opened: bool) -> None:
        item = self.tree.focus()
        if item:
            self.p.set_expanded(item, opened)
            self.on_change()

    def _on_select(self, _e: Any = None) -> None:
        if self._suppress_select:
            return
        rel = self.selected()
        if rel and not self.p.is_dir(rel):
            self.tabs.open_thread(rel)

    def share_selected(self) -> Any:
        """Share… the selected thread (`share` is attached by the composition root)."""
        rel = self.selected()
        if self.share is None or not rel or self.p.is_dir(rel):
            self.ui.errors.show("Select a thread to share.")
            return None
        return self.share(rel)

    def _on_context(self, e: Any) -> None:
        row = self.tree.identify_row(e.y)
        if row:
            self._suppress_select = True
            self.tree.selection_set(row)
            self.after_idle(self._unsuppress)
        self.menu.tk_popup(e.x_root, e.y_root)

    # -- intents -------------------------------------------------------------------------
    def new_file(self) -> str | None:
        rel = self.ui.errors.guard(lambda: self.p.new_file(self.selected()))
        if rel:
            self.redraw(select=rel)
            self.tabs.open_thread(rel)
            self.begin_rename(rel)
        return rel

    def new_folder(self) -> str | None:
        rel = self.ui.errors.guard(lambda: self.p.new_folder(self.selected()))
        if rel:
            self.redraw(select=rel)
            self.begin_rename(rel)
        return rel

    def begin_rename(self, rel: str | None = None) -> tb.Entry | None:
        """Put an entry over the item for in-place renaming (Return commits, Escape cancels)."""
        rel = rel or self.selected()
        if not rel or not self.tree.exists(rel):
            return None
        self.cancel_rename()
        self.tree.see(rel)
        self.update_idletasks()
        bbox = self.tree.bbox(rel)
        name = rel.rpartition("/")[2]
        name = name[:-5] if name.endswith(".json") and not self.p.is_dir(rel) else name
        var = tkvars.StringVar(value=name)
        entry = tb.Entry(self.tree, textvariable=var, style=inline_entry_style(self))
        if bbox:
            x, y, w, h = bbox
            # as tall as the entry asks (its glyphs were clipped to the row's height)
            tall = max(h + 2, entry.winfo_reqheight())
            entry.place(x=x + 16, y=y - (tall - h) // 2, width=max(120, w - 16), height=tall)
        else:
            entry.place(x=0, y=0, relwidth=1.0)
        entry.select_range(0, "end")
        entry.focus_set()
        entry.bind("<Return>", lambda e: self.commit_rename(rel, var.get()))
        entry.bind("<Escape>", lambda e: self.cancel_rename())
        entry.bind("<FocusOut>", lambda e: self.commit_rename(rel, var.get()) if self._editor is entry else None)
        self._editor = entry
        return entry

    def cancel_rename(self) -> None:
        """End the inline rename box; the keyboard focus it had goes back to the tree."""
        if self._editor is not None:
            ed, self._editor = self._editor, None
            try:
                had_focus = self.focus_get() is ed
            except (KeyError, tk.TclError):
                had_focus = False
            ed.destroy()
            if had_focus:
                self.tree.focus_set()

    def commit_rename(self, rel: str, name: str) -> str | None:
        self.cancel_rename()
        old_name = rel.rpartition("/")[2]
        if name.strip() in (old_name, old_name[:-5] if old_name.endswith(".json") else old_name):
            return rel
        new_rel = self.ui.errors.guard(lambda: self.tabs.rename_entry(rel, name))
        if new_rel:
            self.redraw(select=new_rel)
        return new_rel

    def duplicate(self) -> str | None:
        rel = self.selected()
        if not rel:
            return None
        new_rel = self.ui.errors.guard(lambda: self.p.duplicate(rel))
        if new_rel:
            self.redraw(select=new_rel)
        return new_rel

    def delete(self) -> bool:
        rel = self.selected()
        if not rel:
            return False
        if not self.ui.dialogs.confirm(self.p.delete_prompt(rel), "Move to Trash"):
            return False
        self.tabs.before_remove(rel)
        ok = self.ui.errors.guard(lambda: self.p.delete(rel)) is not None
        if ok:
            self.tabs.after_remove(rel)
            self.redraw()
        return ok

    def move(self, rel: str, dest_folder: str) -> str | None:
        """Move with the overwrite confirmation the original asks for."""
        overwrite = False
        if self.p.move_conflicts(rel, dest_folder):
            name = rel.rpartition("/")[2]
            where = dest_folder or "the workspace"
            if not self.ui.dialogs.confirm(f"“{name}” already exists in {where}. Replace it? The existing one goes to the trash.", "Replace"):
                return None
            overwrite = True
        self.tabs.before_move(rel)
        new_rel = self.ui.errors.guard(lambda: self.p.move(rel, dest_folder, overwrite=overwrite))
        if new_rel:
            self.tabs.after_move(rel, new_rel)
            self.redraw(select=new_rel)
        return new_rel

    def reveal(self) -> None:
        reveal_path(self.ui.errors, self.p.reveal_path(self.selected()))

    def import_files(self, paths: list[str] | None = None) -> list[str]:
        paths = paths if paths is not None else self.ui.dialogs.open_files()
        if not paths:
            return []
        created = self.ui.errors.guard(lambda: self.p.import_files(paths, self.selected())) or []
        self.redraw(select=created[0] if created else None)
        msg = f"Imported {len(created)} thread(s) from {len(paths)} file(s)."
        skipped = self.p.last_import_skipped
        if skipped:
            msg += " Skipped: " + "; ".join(f"{n} ({why})" for n, why in skipped[:5])
        self.ui.status.set(msg)
        self._warn_file_reads()
        return created

    def _warn_file_reads(self) -> None:
        """An imported thread is someone else's text: say which local files it would read."""
        warnings = self.p.last_import_warnings
        if warnings:
            self.ui.dialogs.info(
                "Check these imported threads before you run them:\n\n" + "\n\n".join(warnings[:10])
                + ("\n\n…" if len(warnings) > 10 else ""), "Imported threads read local files")

    def import_clipboard(self, text: str | None = None) -> list[str]:
        if text is None:
            try:
                text = self.clipboard_get()
            except tk.TclError:
                text = ""
        created = self.ui.errors.guard(lambda: self.p.import_text(text or "", self.selected())) or []
        if created:
            self.redraw(select=created[0])
            self.tabs.open_thread(created[0])
            self._warn_file_reads()
        return created

    # -- drag to move --------------------------------------------------------------------
    def _drag_start(self, e: Any) -> None:
        row = self.tree.identify_row(e.y)
        self._drag = {"rel": row, "x": e.x, "y": e.y, "active": False} if row else None

    def _drag_motion(self, e: Any) -> None:
        d = self._drag
        if d and not d["active"] and abs(e.y - d["y"]) + abs(e.x - d["x"]) > 6:
            d["active"] = True
            self.tree.configure(cursor="hand2")

    def _drag_end(self, e: Any) -> None:
        d, self._drag = self._drag, None
        self.tree.configure(cursor="")
        if not d or not d["active"]:
            return
        target = self.tree.identify_row(e.y)
        dest = self.p.folder_of(target) if target else ""
        if dest != self.p.folder_of(d["rel"]) or self.p.is_dir(d["rel"]):
            if dest != d["rel"].rpartition("/")[0]:
                self.move(d["rel"], dest)
