"""Evaluations › Compare Two Results…: pick results folders A (the baseline) and B, and the
paired comparison (`presenters/evaluations.compare_folders`, run on the worker pool) is listed
with the flips first — pass → fail, then fail → pass — then the other score changes, under a
headline with the exact McNemar p-value and the paired bootstrap (`presenters/eval_compare`).
Double-click (or Return on) a row shows A's and B's outputs side by side (`PairWindow`, one
per comparison window, reused). Close or Esc closes the window.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters.eval_compare import CompareRow, ComparisonView
from ...presenters.evaluations import compare_folders
from .. import tkvars
from ..services import UiServices

KIND_TEXT = {"worse": "pass → fail", "better": "fail → pass", "score": "score"}


def results_folders(root: Path) -> list[Path]:
    """Results folders under `root` (`$LLM_SPACE_HOME/evals`), newest first."""
    if not root.is_dir():
        return []
    found = [d for d in root.glob("*/*") if d.is_dir() and (d / "results.jsonl").is_file()]
    return sorted(found, key=lambda d: (d.name, d.parent.name), reverse=True)


class CompareWindow(tb.Toplevel):
    def __init__(self, ui: UiServices, results_root: Path,
                 compare: Callable[[Path, Path], ComparisonView] = compare_folders) -> None:
        super().__init__(master=ui.root, title="Compare Two Results")
        self.geometry("1000x600")
        self.ui = ui
        self.root_dir = results_root
        self.compare_fn = compare
        self.view: ComparisonView | None = None
        self.folders = results_folders(results_root)
        names = [self.label_of(f) for f in self.folders]
        pick = tb.Frame(self)
        pick.pack(fill="x", padx=8, pady=8)
        self.a_var = tkvars.StringVar(self, names[1] if len(names) > 1 else (names[0] if names else ""))
        self.b_var = tkvars.StringVar(self, names[0] if names else "")
        tb.Label(pick, text="A (baseline)").pack(side="left")
        self.a_box = tb.Combobox(pick, textvariable=self.a_var, values=names, width=34)
        self.a_box.pack(side="left", padx=(4, 12))
        tb.Label(pick, text="B").pack(side="left")
        self.b_box = tb.Combobox(pick, textvariable=self.b_var, values=names, width=34)
        self.b_box.pack(side="left", padx=4)
        self.btn_compare = tb.Button(pick, text="Compare", bootstyle="primary", command=self.run)
        self.btn_compare.pack(side="left", padx=12)
        tb.Button(pick, text="Close", bootstyle="secondary-outline", command=self.destroy).pack(side="right")
        self.bind("<Escape>", lambda e: self.destroy())
        self.headline = tb.Label(self, text="Choose two results folders." if len(names) >= 2
                                 else "Compare needs two results folders (run an evaluation twice).", wraplength=960,
                                 justify="left")
        self.headline.pack(fill="x", padx=8)
        self.rows = tb.Treeview(self, columns=("change", "case", "model", "detail"), show="headings", height=16)
        for col, text, width in (("change", "Change", 110), ("case", "Case", 200), ("model", "Model", 200),
                                 ("detail", "Why (the failing side)", 440)):
            self.rows.heading(col, text=text)
            self.rows.column(col, width=width, stretch=col == "detail")
        c = tb.Style().colors
        self.rows.tag_configure("worse", foreground=c.danger)
        self.rows.tag_configure("better", foreground=c.success)
        self.rows.pack(fill="both", expand=True, padx=8, pady=8)
        self.rows.bind("<Double-1>", self._open_clicked, add=True)
        self.rows.bind("<Return>", lambda e: self.open_row(self.rows.focus()), add=True)
        self.pair_window: PairWindow | None = None
        self.groups = tb.Label(self, text="", justify="left", wraplength=960)
        self.groups.pack(fill="x", padx=8, pady=(0, 8))
        self.done: Future[ComparisonView] | None = None

    def label_of(self, folder: Path) -> str:
        return f"{folder.parent.name}/{folder.name}"

    def _folder(self, text: str) -> Path:
        text = text.strip()
        path = Path(text).expanduser()
        return path if path.is_absolute() else self.root_dir / text

    def run(self) -> Future[ComparisonView]:
        a, b = self._folder(self.a_var.get()), self._folder(self.b_var.get())
        self.headline.configure(text="Comparing…")
        self.btn_compare.configure(state="disabled")
        self.done = self.ui.pump.run_in_worker(lambda: self.compare_fn(a, b), self._shown, name="eval-compare")
        return self.done

    def _shown(self, future: Future[ComparisonView]) -> None:
        if not self.winfo_exists():
            return
        self.btn_compare.configure(state="normal")
        try:
            view = future.result()
        except UserFacingError as exc:
            self.headline.configure(text=exc.message)
            self.ui.errors.show(str(exc))
            return
        self.show(view)

    def _open_clicked(self, event: object) -> None:
        item = self.rows.identify_row(getattr(event, "y", 0))
        if item:
            self.open_row(item)

    def open_row(self, item: str) -> PairWindow | None:
        """A's and B's side of the row `item` (a Treeview id) side by side, in the pair window
        already open when there is one."""
        if self.view is None or not item or item not in self.rows.get_children():
            return None
        row = self.view.rows[self.rows.index(item)]
        a, b = self._folder(self.a_var.get()), self._folder(self.b_var.get())
        if self.pair_window is not None and self.pair_window.winfo_exists():
            self.pair_window.show(row, a, b)
            self.pair_window.lift()
        else:
            self.pair_window = PairWindow(self, row, a, b)
        return self.pair_window

    def show(self, view: ComparisonView) -> None:
        self.view = view
        self.title(f"Compare: {view.title}")
        self.headline.configure(text=view.headline)
        self.rows.delete(*self.rows.get_children())
        for r in view.rows:
            self.rows.insert("", "end", values=(r.change, r.case, r.column, r.detail), tags=(r.kind,))
        self.groups.configure(text="\n".join(f"{label}: {line}" for label, line in view.per_column))


class PairWindow(tb.Toplevel):
    """One row of a comparison: A's side (the baseline) and B's side by side — status, why
    it failed, the output."""

    def __init__(self, master: CompareWindow, row: CompareRow, folder_a: Path, folder_b: Path) -> None:
        super().__init__(master=master, title="")
        self.geometry("960x520")
        panes = tb.Frame(self)
        panes.pack(fill="both", expand=True, padx=8, pady=(8, 4))
        panes.columnconfigure(0, weight=1, uniform="side")
        panes.columnconfigure(1, weight=1, uniform="side")
        panes.rowconfigure(1, weight=1)
        self.a_head = tb.Label(panes, text="", anchor="w")
        self.b_head = tb.Label(panes, text="", anchor="w")
        self.a_head.grid(row=0, column=0, sticky="ew", padx=(0, 4))
        self.b_head.grid(row=0, column=1, sticky="ew", padx=(4, 0))
        self.a_text = tb.Text(panes, wrap="word", width=10)
        self.b_text = tb.Text(panes, wrap="word", width=10)
        self.a_text.grid(row=1, column=0, sticky="nsew", padx=(0, 4))
        self.b_text.grid(row=1, column=1, sticky="nsew", padx=(4, 0))
        bar = tb.Frame(self)
        bar.pack(fill="x", padx=8, pady=(0, 8))
        tb.Button(bar, text="Close", bootstyle="secondary", command=self.destroy).pack(side="right")
        self.bind("<Escape>", lambda e: self.destroy())
        self.show(row, folder_a, folder_b)

    def show(self, row: CompareRow, folder_a: Path, folder_b: Path) -> None:
        self.row = row
        self.title(f"{row.case} · {row.column} · {row.change}")
        self.a_head.configure(text=f"A (baseline) · {folder_a.parent.name}/{folder_a.name}")
        self.b_head.configure(text=f"B · {folder_b.parent.name}/{folder_b.name}")
        for widget, text in ((self.a_text, row.a_text), (self.b_text, row.b_text)):
            widget.configure(state="normal")
            widget.delete("1.0", "end")
            widget.insert("end", text)
            widget.configure(state="disabled")
