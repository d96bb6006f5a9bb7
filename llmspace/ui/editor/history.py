"""Run history panel (toggled from the editor header): newest first, with summary, relative
time, model, message count and usage; Inspect (read-only view), Restore (one undo step) and
Remove (with confirmation). Logic in `EditorPresenter.history/restore_run/remove_run` and
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
        for col, label, width in (("when", "When", 90), ("model", "Model", 140), ("n", "Msgs", 50), ("usage", "Usage", 140)):
            self.list.heading(col, text=label)
            self.list.column(col, width=width, stretch=False)
        self.list.column("#0", width=200)
        self.list.pack(fill="both", expand=True)
        bar = tb.Frame(self)
        bar.pack(fill="x", pady=(4, 0))
        tb.Button(bar, text="Inspect", bootstyle="secondary-outline", command=self.inspect).pack(side="left")
        tb.Button(bar, text="Restore", bootstyle="primary-outline", command=self.restore).pack(side="left", padx=4)
        tb.Button(bar, text="Remove", bootstyle="danger-outline", command=self.remove).pack(side="left")
        tb.Button(bar, text="Compare", bootstyle="info-outline", command=self.compare).pack(side="left", padx=4)

    def refresh(self) -> None:
        from ...core.history import relative_time

        self.list.delete(*self.list.get_children(""))
        for row in self.view.p.history():
            self.list.insert("", "end", iid=row.id, text=row.summary,
                             values=(relative_time(row.timestamp), row.model, row.message_count, row.usage_label))

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
        run_id = self.selected()
        if not run_id:
            return None
        from ...core.history import absolute_time, inspect_run

        view = inspect_run(self.view.p.thread, run_id)
        top = tb.Toplevel(title=f"Run {view.id}", master=self.view.window.root, size=(700, 520))
        tb.Label(top, text=f"{view.model} · {view.messages_label} · {absolute_time(view.timestamp)} · {view.usage_label}",
                 padding=6).pack(anchor="w")
        text = tb.Text(top, wrap="word")
        text.pack(fill="both", expand=True)
        if view.system_prompt:
            text.insert("end", "System prompt\n" + view.system_prompt + "\n\n")
        for m in view.messages:
            text.insert("end", f"{m.role.capitalize()}\n{m.text()}\n")
            for c in getattr(m, "toolCalls", None) or []:
                out = c.output.text() if c.output is not None else ""
                text.insert("end", f"→ {c.input.name}({c.input.arguments})\n← {out}\n")
            text.insert("end", "\n")
        text.configure(state="disabled")
        return top

    def restore(self) -> None:
        run_id = self.selected()
        if run_id:
            try:
                self.view.p.restore_run(run_id)
            except UserFacingError as exc:
                self.view.window.show_error(str(exc))

    def remove(self) -> None:
        run_id = self.selected()
        if not run_id:
            return
        if not self.view.window.dialogs.confirm("Remove this run? Evaluations that use it are removed too.", "Remove run"):
            return
        try:
            self.view.p.remove_run(run_id)
        except UserFacingError as exc:
            self.view.window.show_error(str(exc))
