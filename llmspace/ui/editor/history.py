"""Run history panel (toggled from the editor header): newest first, with summary, relative
time, model, message count and usage; Inspect (read-only view with Previous/Next and Fork from
a message, `inspect.py`), Restore (one undo step), Remove (with confirmation; its evaluations
go too), Compare two selected runs (`compare.py`), Fork the selected run at its last message;
below, the saved evaluations (Open, Remove). Logic in `presenters/history.HistoryIntents` (`view.p.history_intents`) and
`core.history`. Caller: `ui/editor/view.py`.
"""

from __future__ import annotations

from typing import Any

import ttkbootstrap as tb

from ...errors import UserFacingError
from .compare import CompareDialog


class HistoryPanel(tb.Frame):
    """List of recorded runs of one thread."""

    def __init__(self, master: Any, view: Any) -> None:
        super().__init__(master, padding=4)
        self.view = view
        tb.Label(self, text="Run history", font="TkHeadingFont").pack(anchor="w")
        self.list = tb.Treeview(self, columns=("when", "model", "n", "usage"), show="tree headings", height=12,
                                selectmode="extended")
        self.list.heading("#0", text="Summary")
        for col, label, width in (("when", "When", 64), ("model", "Model", 90), ("n", "Msgs", 40), ("usage", "Usage", 80)):
            self.list.heading(col, text=label)
            self.list.column(col, width=width, stretch=False)
        self.list.column("#0", width=110, minwidth=80)
        # the panel is narrow at 1280x800: scroll sideways to the Msgs/Usage columns
        self.xscroll = tb.Scrollbar(self, orient="horizontal", command=self.list.xview)
        self.list.configure(xscrollcommand=self.xscroll.set)
        self.list.pack(fill="both", expand=True)
        self.xscroll.pack(fill="x")
        bar = tb.Frame(self)
        bar.pack(fill="x", pady=(4, 0))
        tb.Button(bar, text="Inspect", bootstyle="secondary-outline", command=self.inspect).pack(side="left")
        tb.Button(bar, text="Restore", bootstyle="primary-outline", command=self.restore).pack(side="left", padx=4)
        tb.Button(bar, text="Remove", bootstyle="danger-outline", command=self.remove).pack(side="left")
        bar2 = tb.Frame(self)
        bar2.pack(fill="x", pady=(4, 0))
        tb.Button(bar2, text="Compare two", bootstyle="info-outline", command=self.compare).pack(side="left")
        tb.Button(bar2, text="Fork", bootstyle="secondary-outline", command=self.fork).pack(side="left", padx=4)
        tb.Label(self, text="Evaluations", font="TkHeadingFont").pack(anchor="w", pady=(8, 0))
        self.evals = tb.Treeview(self, show="tree", height=5, selectmode="browse")
        self.evals.pack(fill="x")
        self.evals.bind("<Double-1>", lambda e: self.open_evaluation())
        ebar = tb.Frame(self)
        ebar.pack(fill="x", pady=(4, 0))
        tb.Button(ebar, text="Open", bootstyle="info-outline", command=self.open_evaluation).pack(side="left")
        tb.Button(ebar, text="Remove", bootstyle="danger-outline", command=self.remove_evaluation).pack(side="left", padx=4)

    def refresh(self) -> None:
        from ...core.history import relative_time

        self.list.delete(*self.list.get_children(""))
        for row in self.view.p.history_intents.history():
            self.list.insert("", "end", iid=row.id, text=row.summary,
                             values=(relative_time(row.timestamp), row.model, row.message_count, row.usage_label))
        self.evals.delete(*self.evals.get_children(""))
        for eid, text in self.view.p.history_intents.evaluation_rows():
            self.evals.insert("", "end", iid=eid, text=text)

    def selected(self) -> str | None:
        sel = self.list.selection()
        return sel[0] if sel else None

    def compare(self) -> Any:
        sel = self.list.selection()
        if len(sel) != 2:
            self.view.window.set_status("Select two runs to compare.")
            return None
        # oldest first: A is the earlier run
        a, b = sel[1], sel[0]
        try:
            return CompareDialog(self.view, a, b)
        except UserFacingError as exc:
            self.view.window.show_error(str(exc))
            return None

    def inspect(self) -> Any:
        """Open the read-only view of the selected run (Previous/Next, Fork from a message)."""
        run_id = self.selected()
        if not run_id:
            self.view.window.set_status("Select a run to inspect.")
            return None
        from .inspect import RunInspector

        try:
            return RunInspector(self.view, run_id)
        except UserFacingError as exc:
            self.view.window.show_error(str(exc))
            return None

    def fork(self) -> str | None:
        """Fork the selected run at its last message into a new thread (opened in a new tab);
        Inspect forks from any message."""
        run_id = self.selected()
        if not run_id:
            self.view.window.set_status("Select a run to fork.")
            return None
        msgs = self.view.p.history_intents.inspect(run_id).messages
        if not msgs:
            self.view.window.show_error("This run has no messages to fork from.")
            return None
        return fork_and_open(self.view, run_id, msgs[-1].id)

    def restore(self) -> None:
        run_id = self.selected()
        if run_id:
            try:
                self.view.p.history_intents.restore_run(run_id)
            except UserFacingError as exc:
                self.view.window.show_error(str(exc))

    def remove(self) -> None:
        run_id = self.selected()
        if not run_id:
            return
        if not self.view.window.dialogs.confirm("Remove this run? Evaluations that use it are removed too.", "Remove run"):
            return
        try:
            self.view.p.history_intents.remove_run(run_id)
        except UserFacingError as exc:
            self.view.window.show_error(str(exc))

    def open_evaluation(self) -> Any:
        """Open the compare dialog of the selected evaluation's pair (as it was saved: A, B)."""
        sel = self.evals.selection()
        if not sel:
            return None
        try:
            a, b = self.view.p.history_intents.evaluation_pair(sel[0])
            return CompareDialog(self.view, a, b)
        except UserFacingError as exc:
            self.view.window.show_error(str(exc))
            return None

    def remove_evaluation(self) -> bool:
        sel = self.evals.selection()
        if not sel:
            return False
        if not self.view.window.dialogs.confirm("Remove this evaluation?", "Remove evaluation"):
            return False
        try:
            self.view.p.history_intents.remove_evaluation(sel[0])
        except UserFacingError as exc:
            self.view.window.show_error(str(exc))
            return False
        return True


def fork_and_open(view: Any, run_id: str, message_id: str) -> str | None:
    """Write a new thread from `run_id` up to `message_id`, show it in the tree and open it
    in a new tab (the history panel and the run inspector both fork this way)."""
    window = view.window
    try:
        new_rel = view.p.history_intents.fork_from(run_id, message_id)
    except UserFacingError as exc:
        window.show_error(str(exc))
        return None
    window.tree_view.refresh()
    window.open_thread(new_rel)
    window.set_status(f"Forked into {new_rel}")
    return new_rel
