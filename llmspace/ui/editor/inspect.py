"""Read-only view of one recorded run ("Inspect" in the run history): model, message count,
captured time, usage, the system prompt and the messages with their tool calls; Previous /
Next walk the history; "Fork from this message" writes a new thread up to the selected
message (`Workspace.fork_run`) and opens it in a new tab. Built with `context.RunRecords`. Logic in
`presenters/history.HistoryIntents`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from .fork import fork_and_open

if TYPE_CHECKING:
    from .context import RunRecords


def _excerpt(text: str, limit: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class RunInspector(tb.Toplevel):
    """One run, read-only, with navigation and fork."""

    def __init__(self, runs: RunRecords, run_id: str) -> None:
        run = runs.intents.inspect(run_id)  # may refuse before any widget exists
        super().__init__(title="Inspect run", master=runs.ui.root, size=(900, 600))
        self.runs = runs
        self.run_id = run_id
        self.bind("<Escape>", lambda e: self.destroy())
        nav = tb.Frame(self, padding=(6, 6, 6, 0))
        nav.pack(fill="x")
        self.prev_btn = tb.Button(nav, text="← Previous", bootstyle="secondary-outline", command=self.previous)
        self.prev_btn.pack(side="left")
        self.next_btn = tb.Button(nav, text="Next →", bootstyle="secondary-outline", command=self.next)
        self.next_btn.pack(side="left", padx=4)
        self.fork_btn = tb.Button(nav, text="Fork from this message", bootstyle="primary-outline", command=self.fork)
        self.fork_btn.pack(side="right")
        self.header = tb.Label(self, text="", padding=6)
        self.header.pack(anchor="w")
        paned = tb.Panedwindow(self, orient="horizontal")
        paned.pack(fill="both", expand=True, padx=6, pady=(0, 6))
        self.messages = tb.Treeview(paned, columns=("role",), show="tree headings", selectmode="browse")
        self.messages.heading("#0", text="Message")
        self.messages.heading("role", text="Role")
        self.messages.column("role", width=80, stretch=False)
        self.messages.column("#0", width=240)
        self.messages.bind("<<TreeviewSelect>>", lambda e: self._sync_fork())
        self.text = tb.Text(paned, wrap="word", width=50, height=20)  # fills its pane
        paned.add(self.messages, weight=1)
        paned.add(self.text, weight=2)
        self.show(run)

    def show(self, run: Any) -> None:
        """Fill the window with `run` (a `core.history.RunView`)."""
        from ...core.history import absolute_time

        self.run_id = run.id
        self.title(" · ".join(p for p in ("Run", absolute_time(run.timestamp), run.model) if p))
        parts = [run.model, run.messages_label, absolute_time(run.timestamp), run.usage_label]
        self.header.configure(text=" · ".join(p for p in parts if p))
        self.messages.delete(*self.messages.get_children(""))
        text = self.text
        text.configure(state="normal")
        text.delete("1.0", "end")
        if run.system_prompt:
            text.insert("end", "System prompt\n" + run.system_prompt + "\n\n")
        for i, m in enumerate(run.messages, start=1):
            self.messages.insert("", "end", iid=m.id, text=f"{i}. {_excerpt(m.text()) or '(no text)'}", values=(m.role,))
            text.insert("end", f"{m.role.capitalize()}\n{m.text()}\n")
            for c in getattr(m, "toolCalls", None) or []:
                out = c.output.display_text() if c.output is not None else ""
                text.insert("end", f"→ {c.input.name}({c.input.arguments})\n← {out}\n")
            text.insert("end", "\n")
        text.configure(state="disabled")
        kids = self.messages.get_children("")
        if kids:
            self.messages.selection_set(kids[-1])
        prev_id, next_id = self.runs.intents.neighbours(run.id)
        self.prev_btn.configure(state="normal" if prev_id else "disabled")
        self.next_btn.configure(state="normal" if next_id else "disabled")
        self._sync_fork()

    def _sync_fork(self) -> None:
        self.fork_btn.configure(state="normal" if self.messages.selection() else "disabled")

    def _go(self, index: int) -> str | None:
        target = self.runs.intents.neighbours(self.run_id)[index]
        if target is None:
            return None
        self.show(self.runs.intents.inspect(target))
        return target

    def previous(self) -> str | None:
        """The newer run (the one above in the list)."""
        return self._go(0)

    def next(self) -> str | None:
        """The older run (the one below in the list)."""
        return self._go(1)

    def fork(self) -> str | None:
        """Write a new thread up to the selected message and open it in a new tab."""
        sel = self.messages.selection()
        if not sel:
            return None
        return fork_and_open(self.runs, self.run_id, sel[0])
