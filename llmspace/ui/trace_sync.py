"""The "Sync…" dialog of a connected trace project (`presenters.trace_sync.TraceSync`).

The original's filters: a free text, sort (Newest, Oldest, Name, User, Session, ID) and limit
(25, 50, 100), and the more filters (From, To, name, user, session, environment; for Phoenix
its filter expression). Search lists what the server found, several rows to pick (Ctrl/Shift
click, Space, Ctrl+A); "Sync N selected" fetches them with a progress bar and Cancel. A trace
whose workbench was edited is kept unless the question before the sync is answered
"Rebuild". The project's last sync time and status are shown at the top. Searches and syncs
run on the worker pool; results come back through the pump. Errors are shown in the dialog,
and nothing typed is cleared. Enter searches, Escape cancels the work in flight or closes.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..cancel import CancelToken
from ..errors import error_text
from ..presenters.trace_sync import LIMITS, SORTS, ResultRow, SyncForm, SyncOutcome, TraceSync, rebuild_question
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from .services import UiServices

FILTERS = (("start", "From"), ("end", "To"), ("name", "Name"), ("user", "User id"), ("session", "Session id"),
           ("environment", "Environment"))


class SyncDialog(tb.Toplevel):
    """Search a connected project's server and sync the traces picked."""

    def __init__(self, ui: UiServices, presenter: TraceSync, on_synced: Callable[[SyncOutcome], object]) -> None:
        super().__init__(title=f"Sync {presenter.name}", master=ui.root)
        self.ui, self.p, self.on_synced = ui, presenter, on_synced
        self.rows: list[ResultRow] = []
        self.working: str = ""  # "search" | "sync" | ""
        self.generation = 0  # a search or sync cancelled is ignored when it ends
        self.cancel_event: CancelToken | None = None
        self.closed = False
        body = tb.Frame(self, padding=12)
        body.pack(fill="both", expand=True)
        self.last = tb.Label(body, text=presenter.last_sync(), bootstyle="secondary")
        self.last.pack(anchor="w")
        top = tb.Frame(body)
        top.pack(fill="x", pady=(8, 4))
        tb.Label(top, text="Search").pack(side="left")
        self.text = tb.Entry(top, width=28)
        self.text.pack(side="left", fill="x", expand=True, padx=(6, 8))
        tb.Label(top, text="Sort").pack(side="left")
        self.sort = tb.Combobox(top, values=SORTS, state="readonly", width=8)
        self.sort.set(SORTS[0])
        self.sort.pack(side="left", padx=(4, 8))
        tb.Label(top, text="Limit").pack(side="left")
        self.limit = tb.Combobox(top, values=[str(n) for n in LIMITS], state="readonly", width=4)
        self.limit.set(str(LIMITS[0]))
        self.limit.pack(side="left", padx=(4, 8))
        self.search_btn = tb.Button(top, text="Search", bootstyle="primary", command=self.search)
        self.search_btn.pack(side="left")
        more = tb.Labelframe(body, text="More filters (From/To: 2026-12-01 09:30, local time; default: the last 7 days)",
                             padding=6)
        more.pack(fill="x", pady=4)
        self.filters: dict[str, tb.Entry] = {}
        for i, (name, label) in enumerate(FILTERS):
            tb.Label(more, text=label).grid(row=i // 3, column=(i % 3) * 2, sticky="w", padx=(0, 4), pady=2)
            entry = tb.Entry(more, width=18)
            entry.grid(row=i // 3, column=(i % 3) * 2 + 1, sticky="ew", padx=(0, 8), pady=2)
            self.filters[name] = entry
        if presenter.has_expression:
            tb.Label(more, text="Filter expression").grid(row=2, column=0, sticky="w", padx=(0, 4), pady=2)
            entry = tb.Entry(more)
            entry.grid(row=2, column=1, columnspan=5, sticky="ew", pady=2)
            self.filters["expression"] = entry
        for entry in (self.text, *self.filters.values()):
            entry.bind("<Return>", lambda e: self.search())
        box = tb.Frame(body)
        box.pack(fill="both", expand=True, pady=4)
        self.results = tb.Treeview(box, show="tree", selectmode="extended", height=10)
        sb = tb.Scrollbar(box, orient="vertical", command=self.results.yview)
        self.results.configure(yscrollcommand=sb.set)
        sb.pack(side="right", fill="y")
        self.results.pack(side="left", fill="both", expand=True)
        self.results.bind("<<TreeviewSelect>>", lambda e: self._selection_changed())
        self.results.bind("<Control-a>", self._select_all_key)
        self.results.bind("<Return>", lambda e: self.sync_selected())
        self.progress = tb.Progressbar(body, mode="determinate", maximum=1)
        self.progress.pack(fill="x", pady=(4, 2))
        self.message = WrappedLabel(body, text="Search to list the server's traces; nothing syncs by itself.",
                                    bootstyle="secondary")
        self.message.pack(fill="x")
        bar = tb.Frame(body)
        bar.pack(fill="x", pady=(8, 0))
        self.close_btn = tb.Button(bar, text="Close", bootstyle="secondary", command=self.close)
        self.close_btn.pack(side="right")
        self.cancel_btn = tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.cancel, state="disabled")
        self.cancel_btn.pack(side="right", padx=(0, 6))
        self.sync_btn = tb.Button(bar, text="Sync 0 selected", bootstyle="primary", command=self.sync_selected,
                                  state="disabled")
        self.sync_btn.pack(side="right", padx=(0, 6))
        self.all_btn = tb.Button(bar, text="Select all", bootstyle="secondary-link", command=self.select_all)
        self.all_btn.pack(side="left")
        self.bind("<Escape>", lambda e: self.cancel() if self.working else self.close())
        self.protocol("WM_DELETE_WINDOW", self.close)
        if str(ui.root.winfo_viewable()) == "1":
            self.transient(ui.root)
        self.text.focus_set()

    # -- the form -------------------------------------------------------------------------
    def read(self) -> SyncForm:
        form = SyncForm(text=self.text.get(), sort=self.sort.get(), limit=int(self.limit.get()))
        for name, entry in self.filters.items():
            setattr(form, name, entry.get())
        return form

    def say(self, text: str, error: bool = False) -> None:
        self.message.configure(bootstyle="danger" if error else "secondary")
        self.message.set_text(text)

    def _set_busy(self, what: str) -> None:
        self.working = what
        idle = "normal" if not what else "disabled"
        self.search_btn.configure(state=idle)
        self.cancel_btn.configure(state="normal" if what else "disabled")
        self._selection_changed()

    # -- search ---------------------------------------------------------------------------
    def search(self) -> bool:
        """Search on a worker; True when a search started."""
        if self.working:
            return False
        form = self.read()
        self.generation += 1
        mine = self.generation
        self._set_busy("search")
        self.progress.configure(mode="indeterminate")
        self.progress.start(50)
        self.say("Searching…")
        self.ui.pump.run_in_worker(lambda: self.p.search_work(form), lambda f: self._found(mine, f),
                                   name="trace-search")
        return True

    def _found(self, mine: int, future: Future[list[ResultRow]]) -> None:
        if self.closed or mine != self.generation:
            return
        self._stop_progress()
        self._set_busy("")
        try:
            rows = future.result()
        except Exception as exc:  # shown in the dialog, the filters kept
            self.say(error_text(exc), error=True)
            return
        self.rows = rows
        self.results.delete(*self.results.get_children())
        for row in rows:
            self.results.insert("", "end", iid=row.id, text=row.label)
        self.say(f"{len(rows)} trace(s) found. Pick the ones to sync." if rows else
                 "No traces match. Widen the time range or clear a filter.")
        self._selection_changed()
        if rows:
            self.results.focus(rows[0].id)
            self.results.focus_set()

    def _stop_progress(self) -> None:
        self.progress.stop()
        self.progress.configure(mode="determinate", value=0, maximum=1)

    # -- picking ---------------------------------------------------------------------------
    def selected(self) -> list[str]:
        return list(self.results.selection())

    def select_all(self) -> None:
        self.results.selection_set(self.results.get_children())

    def _select_all_key(self, e: Any) -> str:
        self.select_all()
        return "break"

    def _selection_changed(self) -> None:
        count = len(self.results.selection())
        self.sync_btn.configure(text=f"Sync {count} selected",
                                state="normal" if count and not self.working else "disabled")

    # -- sync -----------------------------------------------------------------------------
    def sync_selected(self) -> bool:
        """Sync the picked traces on a worker (asking first when a re-sync would touch an
        edited workbench); True when a sync started."""
        ids = self.selected()
        if not ids or self.working:
            return False
        edited = self.p.edited(ids)
        rebuild = bool(edited) and self.ui.dialogs.confirm_action(
            rebuild_question(edited), "Edited workbenches", "Rebuild from the new data", "Keep my edits")
        self.generation += 1
        mine = self.generation
        self.cancel_event = cancel = CancelToken()
        self._set_busy("sync")
        self.progress.configure(mode="determinate", maximum=len(ids), value=0)
        self.say(f"Syncing {len(ids)} trace(s)…")

        def progress(done: int, total: int) -> None:
            self.ui.pump.post(self._progress, mine, done, total)

        self.ui.pump.run_in_worker(lambda: self.p.sync_work(ids, rebuild=rebuild, cancel=cancel, progress=progress),
                                   lambda f: self._synced(mine, f), name="trace-sync")
        return True

    def _progress(self, mine: int, done: int, total: int) -> None:
        if self.closed or mine != self.generation:
            return
        self.progress.configure(maximum=max(total, 1), value=done)
        self.say(f"Synced {done} of {total}…" if not (self.cancel_event and self.cancel_event.cancelled)
                 else "Cancelling…")

    def _synced(self, mine: int, future: Future[SyncOutcome]) -> None:
        try:
            report: SyncOutcome | None = future.result()
            problem = ""
        except Exception as exc:  # shown in the dialog; the sync status was recorded by the core
            report, problem = None, error_text(exc)
        if report is not None or problem:
            self.on_synced(report or SyncOutcome())  # the panel lists what came in (or the failed status)
        if self.closed or mine != self.generation:
            return
        self._stop_progress()
        self._set_busy("")
        self.last.configure(text=self.p.last_sync())
        if problem:
            self.say(problem, error=True)
        elif report is not None:
            self.say(self.p.outcome(report), error=bool(report.skipped))

    def cancel(self) -> None:
        """Stop the work in flight: a search's answer is ignored; a sync's HTTP call is cut off at once."""
        if self.working == "search":
            self.generation += 1
            self._stop_progress()
            self._set_busy("")
            self.say("Search cancelled.")
        elif self.working == "sync" and self.cancel_event is not None:
            self.cancel_event.cancel()
            self.cancel_btn.configure(state="disabled")
            self.say("Cancelling…")

    def close(self) -> None:
        if self.closed:
            return
        if self.cancel_event is not None:
            self.cancel_event.cancel()
        self.closed = True
        self.destroy()

    def row(self, trace_id: str) -> Any:
        return next((r for r in self.rows if r.id == trace_id), None)
