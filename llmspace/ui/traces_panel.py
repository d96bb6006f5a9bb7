"""The Traces panel: the sidebar's second page beside the workspace tree (Files | Traces).

It draws what `presenters.traces_panel.TracesPanelPresenter` lists — trace projects with
their badge, each project's traces with start time, model, observation count and status —
and routes the intents: "New trace project…", "Import…" (a file picker, several files; the
files go to the selected project, else the only one, else a new "Imported traces" when there
is none), files dropped on the panel (tkinterdnd2, as the workspace tree takes them; into the
project under the pointer), rename, remove (to the trash), open and "Copy to workspace",
"Connect…" (Langfuse or Phoenix: `ui/trace_connect.py`) and "Sync…" on a connected project
(`ui/trace_sync.py`). With no project, it says what a trace file is and where to get one.

Opening a trace opens its workbench, `trace/<projectId>/<traceKey>/workbench.json`, in a tab
like any thread; the tab is named after the trace and its editor's header shows the source
(`TraceSourceRow`: badge, trace id with Copy, the web app link when known). Built by
`ui/main_window.py`; the tabs (`ui/tab_pages.TabPages`) are attached as `panel.tabs`.
"""

from __future__ import annotations

import functools
import importlib
import logging
import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError
from ..presenters.trace_connect import connected_message
from ..presenters.trace_sync import TraceSync
from ..presenters.traces_panel import NO_TRACES, ImportOutcome, TraceSource, TracesPanelPresenter, parse_path
from .trace_connect import ConnectDialog
from .trace_sync import SyncDialog
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from .services import UiServices
    from .tab_pages import TabPages

log = logging.getLogger("llmspace.ui")

TRACE_FILES = (("Trace files (JSON, JSON Lines)", "*.json *.jsonl *.ndjson"), ("All files", "*"))
DEFAULT_PROJECT = "Imported traces"


class TraceSourceRow(tb.Frame):
    """Under a workbench's title: "Langfuse trace · <id> [Copy id] [Open in Langfuse]"."""

    def __init__(self, master: Any, source: TraceSource, copy: Callable[[str], object],
                 open_link: Callable[[str], object]) -> None:
        super().__init__(master)
        self.source = source
        tb.Label(self, text=source.badge, bootstyle="info").pack(side="left")
        self.id_label = tb.Label(self, text=source.trace_id, bootstyle="secondary")
        self.id_label.pack(side="left", padx=(8, 4))
        self.copy_btn = tb.Button(self, text="Copy id", bootstyle="secondary-link", padding=(2, 0),
                                  command=lambda: copy(source.trace_id))
        self.copy_btn.pack(side="left")
        self.link_btn: tb.Button | None = None
        if source.url:
            app = source.badge.removesuffix(" trace")
            self.link_btn = tb.Button(self, text=f"Open in {app}", bootstyle="info-link", padding=(2, 0),
                                      command=lambda: open_link(str(source.url)))
            self.link_btn.pack(side="left")


class TracesPanel(tb.Frame):
    """Trace projects and their traces."""

    tabs: TabPages  # attached by the composition root once the tabs are built

    def __init__(self, master: Any, ui: UiServices, presenter: TracesPanelPresenter, *,
                 open_link: Callable[[str], object], thread_written: Callable[[str], object]) -> None:
        super().__init__(master)
        self.ui, self.p = ui, presenter
        self.open_link, self.thread_written = open_link, thread_written
        bar = tb.Frame(self)
        bar.pack(fill="x", padx=4, pady=(4, 2))
        self.import_btn = tb.Button(bar, text="Import…", padding=(4, 4), bootstyle="secondary-link",
                                    command=self.import_files)
        self.import_btn.pack(side="right")
        self.new_btn = tb.Button(bar, text="+", width=2, padding=(4, 4), bootstyle="secondary-link",
                                 command=self.new_project)
        self.new_btn.pack(side="right")
        self.sync_btn = tb.Button(bar, text="Sync…", padding=(4, 4), bootstyle="secondary-link",
                                  command=self.sync_project)
        self.sync_btn.pack(side="right")
        self.connect_btn = tb.Button(bar, text="Connect…", padding=(4, 4), bootstyle="secondary-link",
                                     command=self._connect_menu)
        self.connect_btn.pack(side="right")
        self.connect_menu = tk.Menu(self, tearoff=False)
        for kind, label in (("langfuse", "Connect Langfuse…"), ("phoenix", "Connect Phoenix…")):
            self.connect_menu.add_command(label=label, command=functools.partial(self.connect, kind))
        tb.Label(bar, text="Traces", font="TkHeadingFont").pack(side="left")
        self.empty = WrappedLabel(self, text="", bootstyle="secondary", padding=(8, 8), anchor="nw")
        self.body = tb.Frame(self)
        self.tree = tb.Treeview(self.body, show="tree", selectmode="browse")
        sb = tb.Scrollbar(self.body, orient="vertical", command=self.tree.yview)
        self.tree.configure(yscrollcommand=sb.set)
        sb.pack(side="right", fill="y")
        self.tree.pack(side="left", fill="both", expand=True)
        self.tree.tag_configure("project", font="TkHeadingFont")
        self.tree.tag_configure("empty", foreground="gray")
        try:  # a trace whose status is error reads in the theme's danger colour
            self.tree.tag_configure("error", foreground=str(ui.root.style.colors.danger))
        except Exception:
            log.debug("no danger colour for error traces", exc_info=True)
        self.closed: set[str] = set()  # projects the user folded
        self.importing = False
        self.dialog: ConnectDialog | SyncDialog | None = None  # the last connect or sync form opened
        self.tree.bind("<<TreeviewOpen>>", lambda e: self.closed.discard(self.tree.focus()))
        self.tree.bind("<<TreeviewClose>>", lambda e: self.closed.add(self.tree.focus()))
        self.tree.bind("<Double-Button-1>", lambda e: self.open_selected())
        self.tree.bind("<Return>", lambda e: self.open_selected())
        self.tree.bind("<F2>", lambda e: self.rename())
        self.tree.bind("<Delete>", lambda e: self.remove())
        self.tree.bind("<Button-3>", self._on_context)
        if self.tk.call("tk", "windowingsystem") == "aqua":
            self.tree.bind("<Button-2>", self._on_context)
            self.tree.bind("<Control-Button-1>", self._on_context)
        self.menu = tk.Menu(self, tearoff=False)
        items: list[tuple[str, Callable[[], object]] | None] = [
            ("Open", self.open_selected), ("Copy to Workspace", self.copy_to_workspace), None,
            ("New Trace Project…", self.new_project), ("Connect Langfuse…", lambda: self.connect("langfuse")),
            ("Connect Phoenix…", lambda: self.connect("phoenix")), ("Sync…", self.sync_project),
            ("Import…", self.import_files), None,
            ("Rename…", self.rename), ("Move to Trash", self.remove), None, ("Refresh", self.refresh)]
        for item in items:
            if item is None:
                self.menu.add_separator()
            else:
                self.menu.add_command(label=item[0], command=item[1])
        self.bind("<Map>", lambda e: self.refresh() if e.widget is self else None, add=True)  # shown: read again
        self.refresh()

    # -- drawing -------------------------------------------------------------------------
    def refresh(self) -> None:
        sel = self.tree.selection()
        self.ui.errors.guard(self.p.refresh)
        self.redraw(select=sel[0] if sel else None)
        notices = self.p.take_notices()
        if notices:  # told once, after the window is drawn
            self.ui.status.set(notices[-1])
            self.after_idle(lambda: self.ui.dialogs.info("\n\n".join(notices), "Trace projects"))

    def redraw(self, select: str | None = None) -> None:
        self.tree.delete(*self.tree.get_children())
        empty = self.p.empty_text
        if empty:
            self.body.pack_forget()
            self.empty.set_text(empty)
            self.empty.pack(fill="both", expand=True)
            return
        self.empty.pack_forget()
        self.body.pack(fill="both", expand=True)
        for project in self.p.projects:
            pid = project_item(project.id)
            self.tree.insert("", "end", iid=pid, text=project.label, tags=("project",),
                             open=pid not in self.closed)
            for trace in project.traces:
                self.tree.insert(pid, "end", iid=trace.path, text=trace.label,
                                 tags=("error",) if trace.status == "error" else ())
            if not project.traces:
                self.tree.insert(pid, "end", iid=f"empty:{project.id}", text=NO_TRACES, tags=("empty",))
        if select and self.tree.exists(select):
            self.tree.selection_set(select)
            self.tree.see(select)

    def selected(self) -> str | None:
        sel = self.tree.selection()
        return sel[0] if sel else None

    def selected_project(self) -> str | None:
        """The project of the selected row (a project, one of its traces or its empty row)."""
        return project_of(self.selected())

    # -- intents -------------------------------------------------------------------------
    def new_project(self) -> str | None:
        name = self.ui.dialogs.ask_string(
            "Name of the new trace project (it holds the traces of one Langfuse project, collector or Phoenix "
            "project; to fetch traces from a Langfuse or Phoenix server, use Connect… instead):", "New Trace Project")
        if not name:
            return None
        project_id: str | None = self.ui.errors.guard(lambda: self.p.new_project(name))
        if project_id:
            self.redraw(select=project_item(project_id))
            self.ui.status.set(f"Made trace project {name.strip()}. Import trace files into it.")
        return project_id

    def _connect_menu(self) -> None:
        btn = self.connect_btn
        self.connect_menu.tk_popup(btn.winfo_rootx(), btn.winfo_rooty() + btn.winfo_height())

    def connect(self, kind: str) -> ConnectDialog:
        """"Connect Langfuse…" / "Connect Phoenix…": the form; the project is listed once made."""
        def connected(project: dict[str, Any]) -> None:
            if not self.winfo_exists():
                return
            self.ui.errors.guard(self.p.refresh)
            self.redraw(select=project_item(str(project["id"])))
            where = getattr(getattr(self.p.store, "secrets", None), "where", "the secret store")
            self.ui.status.set(connected_message(project, str(where)))

        self.dialog = ConnectDialog(self.ui, self.p.store, kind, connected)
        return self.dialog

    def sync_project(self, project_id: str | None = None) -> SyncDialog | None:
        """"Sync…" on the selected connected project (else the only connected one)."""
        connected = [p.id for p in self.p.projects if p.connected]
        project_id = project_id or self.selected_project() or (connected[0] if len(connected) == 1 else None)
        if project_id is None:
            self.ui.errors.show("Select a connected trace project to sync (make one with Connect…).")
            return None
        presenter = self.ui.errors.guard(lambda: TraceSync(self.p.store, project_id))
        if presenter is None:
            return None

        def synced(report: Any) -> None:
            if not self.winfo_exists():
                return
            self.ui.errors.guard(self.p.refresh)
            self.redraw(select=project_item(project_id))
            self.tabs.check_open_files()  # a rebuilt workbench that is open reloads

        self.dialog = SyncDialog(self.ui, presenter, synced)
        return self.dialog

    def import_files(self, paths: list[str] | None = None, project_id: str | None = None) -> bool:
        """Import trace files (the picker when `paths` is None) on a worker; the panel lists
        them, and names each refused file with its reason, when it is done. Returns True when
        an import started."""
        paths = paths if paths is not None else self.ui.dialogs.open_files("Import trace files", TRACE_FILES)
        if not paths or self.importing:
            return False
        target = self.p.import_target(project_id or self.selected_project())
        if target is None and not self.p.projects:
            target = self.ui.errors.guard(lambda: self.p.new_project(DEFAULT_PROJECT))
        if target is None:
            self.ui.errors.show("Select the trace project to import into, then import again.")
            return False
        self.importing = True
        self.import_btn.configure(state="disabled")
        self.ui.status.set(f"Importing {len(paths)} trace file(s)…")
        self.ui.pump.run_in_worker(lambda: self.p.import_work(target, paths),
                                   lambda future: self._imported(target, future), name="trace-import")
        return True

    def _imported(self, target: str, future: Future[ImportOutcome]) -> None:
        self.importing = False
        if not self.winfo_exists():
            return
        self.import_btn.configure(state="normal")
        self.ui.errors.guard(self.p.refresh)
        outcome = self.ui.errors.guard(future.result)
        if outcome is None:
            self.redraw()
            return
        made = [row.path for row in outcome.imported]
        self.redraw(select=made[0] if made else project_item(target))
        self.ui.status.set(outcome.message)
        if outcome.refused or outcome.warnings:
            parts = []
            if outcome.refused:
                parts.append("Not imported:\n" + "\n".join(f"• {name}: {why}" for name, why in outcome.refused))
            if outcome.warnings:
                parts.append("Check these traces before you run them:\n" + "\n".join(outcome.warnings[:10]))
            self.ui.dialogs.info("\n\n".join(parts), "Import trace files")

    def open_selected(self) -> Any:
        rel = self.selected()
        if rel is None or parse_path(rel) is None:
            return None
        return self.open_trace(rel)

    def open_trace(self, rel: str) -> Any:
        """Open the trace's workbench in a tab (made from raw.json on first open)."""
        ed = self.ui.errors.guard(lambda: self.tabs.open_thread(rel))
        self.show_sources()
        return ed

    def show_sources(self) -> None:
        """Name every workbench tab after its trace, and show the source in the header of
        each one whose editor is built (editors are built when their tab is first shown)."""
        if not self.winfo_exists():  # asked after idle, the window may be gone
            return
        for rel, page in list(self.tabs.pages.items()):
            if parse_path(rel) is None:
                continue
            ed = self.tabs.editors.get(rel)
            named = getattr(page, "trace_named", False)
            if named and (ed is None or ed.header.source_row is not None):
                continue
            source = self.p.source_of(rel)
            if source is None:
                continue
            if not named:
                self.tabs.notebook.tab(page, text=source.title + "  ")
                page.trace_named = True  # type: ignore[attr-defined]
            if ed is not None and ed.header.source_row is None:
                ed.header.show_source_row(TraceSourceRow(ed.header, source, self.copy_text, self.open_link))

    def copy_text(self, text: str) -> None:
        self.clipboard_clear()
        self.clipboard_append(text)
        self.ui.status.set("Copied the trace id.")

    def rename(self) -> bool:
        item = self.selected()
        project_id = project_of(item)
        if item is None or project_id is None or item.startswith("empty:"):
            return False
        found = parse_path(item)
        project = self.p.project(project_id)
        if found is None:
            name = self.ui.dialogs.ask_string("New name of the trace project:", "Rename", project.name if project else "")
            if not name or self.ui.errors.guard(lambda: self.p.rename_project(project_id, name)) is None:
                return False
            self.redraw(select=item)
            return True
        row = next((t for t in project.traces if t.key == found[1]), None) if project else None
        title = self.ui.dialogs.ask_string("New title of the trace:", "Rename", row.title if row else "")
        if not title:
            return False
        return self.ui.errors.guard(lambda: self.rename_workbench(item, title)) is not None

    @staticmethod
    def is_workbench(rel: str) -> bool:
        return parse_path(rel) is not None

    def rename_workbench(self, rel: str, title: str) -> str:
        """Rename the trace of workbench `rel` (from the panel, or the title field of its tab);
        its path stays. An open editor saves its edits first and then reloads the new title."""
        found = parse_path(rel)
        if found is None:
            raise UserFacingError(f"{rel} is not a trace's workbench.")
        ed = self.tabs.editors.get(rel)
        if ed is not None:
            if ed.p.read_only:  # the run's end would write the old title back
                raise UserFacingError("Stop the run before renaming the trace.")
            ed.flush()
        written = self.p.rename_trace(found[0], found[1], title)
        self.tabs.check_open_files()  # the saved workbench changed on disk: the editor reloads it
        page = self.tabs.pages.get(rel)
        if page is not None:
            self.tabs.notebook.tab(page, text=written + "  ")
        self.redraw(select=rel)
        return rel

    def remove(self) -> bool:
        item = self.selected()
        project_id = project_of(item)
        if item is None or project_id is None or item.startswith("empty:"):
            return False
        found = parse_path(item)
        key = found[1] if found else None
        if not self.ui.dialogs.confirm(self.p.remove_prompt(project_id, key), "Move to Trash"):
            return False
        prefix = item if key else f"trace/{project_id}/"
        for rel in [r for r in list(self.tabs.pages) if r == prefix or r.startswith(prefix)]:
            self.tabs.close_tab(rel, remember=False)
        text = self.ui.errors.guard(lambda: self.p.remove(project_id, key))
        self.redraw(select=project_item(project_id) if key else None)
        if text:
            self.ui.status.set(text)
        return bool(text)

    def copy_to_workspace(self, rel: str | None = None) -> str | None:
        """The selected trace's workbench as a normal thread in the workspace, opened in a tab."""
        rel = rel or self.selected()
        found = parse_path(rel) if rel else None
        if rel is None or found is None:
            self.ui.errors.show("Select a trace to copy to the workspace.")
            return None
        ed = self.tabs.editors.get(rel)
        if ed is not None:
            ed.flush()
        result = self.ui.errors.guard(lambda: self.p.copy_to_workspace(*found))
        if result is None:
            return None
        new_rel, warning = result
        self.thread_written(new_rel)
        self.ui.status.set(f"Copied the trace to {new_rel}.")
        if warning:
            self.ui.dialogs.info("Check this thread before you run it:\n\n" + warning, "Copied thread reads local files")
        return str(new_rel)

    def _on_context(self, e: Any) -> None:
        item = self.tree.identify_row(e.y)
        if item:
            self.tree.selection_set(item)
        self.menu.tk_popup(e.x_root, e.y_root)

    # -- drops ---------------------------------------------------------------------------
    def enable_file_drops(self) -> bool:
        """Accept trace files dropped from the file manager (into the project under the
        pointer) when tkinterdnd2 can load; otherwise the picker still works."""
        try:
            dnd = importlib.import_module("tkinterdnd2")
            dnd.TkinterDnD.require(self.winfo_toplevel())
            for widget in (self.tree, self.empty):
                target: Any = widget  # tkinterdnd2 adds drop_target_register/dnd_bind to every widget
                target.drop_target_register(dnd.DND_FILES)
                target.dnd_bind("<<Drop>>", self._drop)
            return True
        except Exception:  # an old tkdnd or a platform without it
            log.debug("trace file drops unavailable", exc_info=True)
            return False

    def _drop(self, e: Any) -> Any:
        paths = list(self.tk.splitlist(e.data))
        project_id = None
        try:
            y = int(e.y_root) - self.tree.winfo_rooty()
            project_id = project_of(self.tree.identify_row(y)) if self.tree.winfo_ismapped() else None
        except (TypeError, ValueError, tk.TclError):
            pass
        self.after_idle(lambda: self.import_files(paths, project_id))
        return e.action


def project_item(project_id: str) -> str:
    return f"project:{project_id}"


def project_of(item: str | None) -> str | None:
    """The project id of a row: `project:<id>`, `empty:<id>` or a workbench path."""
    if not item:
        return None
    for prefix in ("project:", "empty:"):
        if item.startswith(prefix):
            return item[len(prefix):]
    found = parse_path(item)
    return found[0] if found else None

