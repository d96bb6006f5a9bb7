"""The trace view of one recorded run, opened from the run in History (the Trace button, or
T on the runs list): the run's steps — model calls and tool calls — in order with their start,
offset from the first step, duration and (model calls) time to the first token; for the selected step what was sent and answered as
text, and the request and response as folded JSON (the top level open, the rest folded:
Right / double-click opens a row). A trace pruned since is a step shown as removed.

`TraceWindow(ui, run, load, title)`: `run` is a copy of the run-history entry, `load` reads a
trace file (the App's `TraceWriter.load`); the files are read on the worker pool through the
pump, and the window fills when they are in. Logic in `presenters/trace_view.py`.
"""

from __future__ import annotations

import tkinter.font as tkfont
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Literal

import ttkbootstrap as tb

from ...presenters.trace_view import JsonNode, TraceStep, TraceView, trace_view
from ..list_page import fit_columns

if TYPE_CHECKING:
    from ...core.model import RunSnapshot
    from ..services import UiServices

SIZE = (1180, 640)


class TraceWindow(tb.Toplevel):
    """The steps of one run's trace, read-only."""

    def __init__(self, ui: UiServices, run: RunSnapshot, load: Callable[[str], Mapping[str, Any] | None],
                 title: str) -> None:
        super().__init__(title=f"Trace · {title}", master=ui.root, size=SIZE)
        self.ui = ui
        self.view: TraceView | None = None
        self.bind("<Escape>", lambda e: self.destroy())
        top = tb.Frame(self, padding=(8, 8, 8, 4))
        top.pack(fill="x")
        tb.Label(top, text=title, font="TkHeadingFont").pack(side="left")
        tb.Button(top, text="Close", bootstyle="secondary-outline", command=self.destroy).pack(side="right")
        self.summary = tb.Label(top, text="Reading the traces…", bootstyle="secondary")
        self.summary.pack(side="left", padx=(12, 0))
        paned = self.paned = tb.Panedwindow(self, orient="horizontal")
        paned.pack(fill="both", expand=True, padx=8, pady=(0, 8))
        left = tb.Frame(paned)
        self.steps = tb.Treeview(left, columns=("started", "offset", "duration", "first"), show="tree headings",
                                 selectmode="browse", height=12)
        for col, text, width in (("#0", "Step", 240), ("started", "Started", 100), ("offset", "After", 62),
                                 ("duration", "Took", 66), ("first", "First token", 76)):
            anchor: Literal["w", "e"] = "w" if col == "#0" else "e"
            self.steps.heading(col, text=text, anchor=anchor)
            self.steps.column(col, width=width, minwidth=40, stretch=col == "#0", anchor=anchor)
        self.steps.pack(fill="both", expand=True)
        self.steps.bind("<<TreeviewSelect>>", lambda e: self._show_selected(), add=True)
        self.note = tb.Label(left, text="", bootstyle="secondary", wraplength=520, justify="left")
        self.note.pack(fill="x", pady=(4, 0))
        right = tb.Frame(paned)
        self.heading = tb.Label(right, text="", font="TkHeadingFont")
        self.heading.pack(anchor="w")
        self.detail = tb.Label(right, text="", bootstyle="secondary", wraplength=420, justify="left")
        self.detail.pack(anchor="w", fill="x")
        self.tabs = tb.Notebook(right)
        self.tabs.pack(fill="both", expand=True, pady=(4, 0))
        self.text = tb.Text(self.tabs, wrap="word", height=20, width=60)
        self.text.tag_configure("heading", font="TkHeadingFont")
        self.request = self._json_tree()
        self.response = self._json_tree()
        self.tabs.add(self.text, text="Text")
        self.tabs.add(self.request, text="Request")
        self.tabs.add(self.response, text="Response")
        paned.add(left, weight=1)
        paned.add(right, weight=1)
        self.steps.focus_set()
        ui.pump.run_in_worker(lambda: trace_view(run, load), self._loaded, name="trace-view")

    def _json_tree(self) -> Any:
        tree = tb.Treeview(self.tabs, show="tree", selectmode="browse")
        tree.column("#0", width=420, stretch=True)
        return tree

    # -- filling -------------------------------------------------------------------------
    def _loaded(self, future: Future[TraceView]) -> None:
        if not self.winfo_exists():
            return
        try:
            view = future.result()
        except Exception as exc:  # the boundary logs it and says where
            self.summary.configure(text="Could not read the traces.")
            self.ui.errors.callback_error(type(exc), exc, exc.__traceback__)
            return
        self.show(view)

    def show(self, view: TraceView) -> None:
        """Fill the window with `view` and select its first step."""
        self.view = view
        self.summary.configure(text=view.summary)
        self.note.configure(text=view.note or "")
        self.steps.delete(*self.steps.get_children(""))
        for i, step in enumerate(view.steps):
            self.steps.insert("", "end", iid=str(i), text=step.title,
                              values=(step.started, step.offset, step.duration, step.first_token), tags=(step.kind,))
        self.steps.tag_configure("removed", foreground=tb.Style().colors.secondary)
        columns = ["started", "offset", "duration", "first"]
        fit_columns(self.steps, columns, [[s.started, s.offset, s.duration, s.first_token] for s in view.steps],
                    [str(self.steps.heading(c, "text")) for c in columns])
        self._fit_steps()
        if view.steps:
            self.steps.selection_set("0")
            self.steps.focus("0")
        else:
            self._fill(None)

    def _fit_steps(self) -> None:
        """Give the steps list the width its step titles need (the Step column stretches, so
        the pane's share decides it): the divider moves right, up to 60% of the window; in a
        window too small for that, the Started and First token columns give way (the step's
        detail says both)."""
        font = tkfont.nametofont("TkDefaultFont")
        titles = [str(self.steps.item(i, "text")) for i in self.steps.get_children("")]
        step_w = max((font.measure(t) + 44 for t in titles), default=0)
        self.update_idletasks()
        whole = self.paned.winfo_width()
        if whole <= 1:
            return
        limit = int(whole * 0.6)
        shown = list(self.steps["columns"])
        for col in ("started", "first"):
            if step_w + sum(int(self.steps.column(c, "width")) for c in shown) <= limit:
                break
            shown.remove(col)
        self.steps.configure(displaycolumns=shown)
        others = sum(int(self.steps.column(c, "width")) for c in shown)
        if step_w + others + 4 > self.paned.sashpos(0):
            self.paned.sashpos(0, min(step_w + others + 4, limit))
        # the tree does not share its width out again when its columns change: the Step column takes the rest
        self.steps.column("#0", width=max(40, self.paned.sashpos(0) - others - 4))

    def selected_step(self) -> TraceStep | None:
        sel = self.steps.selection()
        if not sel or self.view is None:
            return None
        return self.view.steps[int(sel[0])]

    def _show_selected(self) -> None:
        self._fill(self.selected_step())

    def _fill(self, step: TraceStep | None) -> None:
        self.heading.configure(text=step.title if step is not None else "")
        lines = []
        if step is not None and step.timing:
            lines.append(f"Started {step.started} ({step.offset}) · {step.timing}")
        if step is not None and step.error:
            lines.append(f"Error: {step.error}")
        self.detail.configure(text="\n".join(lines))
        text = self.text
        text.configure(state="normal")
        text.delete("1.0", "end")
        if step is not None:
            if step.kind != "removed":
                text.insert("end", "Sent\n" if step.kind == "model" else "Arguments\n", ("heading",))
                text.insert("end", step.request_text + "\n\n")
                text.insert("end", "Answered\n" if step.kind == "model" else "Result\n", ("heading",))
            text.insert("end", step.response_text)
        text.configure(state="disabled")
        for tree, node in ((self.request, step.request if step else None), (self.response, step.response if step else None)):
            tree.delete(*tree.get_children(""))
            if node is not None:
                _insert(tree, "", node, open_=True)


def _insert(tree: Any, parent: str, node: JsonNode, *, open_: bool = False) -> None:
    iid = tree.insert(parent, "end", text=node.label, open=open_)
    for child in node.children:
        _insert(tree, iid, child)
