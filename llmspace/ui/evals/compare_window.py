"""Evaluations › Compare Two Results…: pick results folders A (the baseline) and B, and the
paired comparison (`presenters/evaluations.compare_folders`, run on the worker pool) is listed
with the flips first — pass → fail, then fail → pass — then the other score changes, under a
headline with the exact McNemar p-value and the paired bootstrap (`presenters/eval_compare`).
Close or Esc closes the window.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters.eval_compare import ComparisonView
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

    def show(self, view: ComparisonView) -> None:
        self.view = view
        self.title(f"Compare: {view.title}")
        self.headline.configure(text=view.headline)
        self.rows.delete(*self.rows.get_children())
        for r in view.rows:
            self.rows.insert("", "end", values=(r.change, r.case, r.column, r.detail), tags=(r.kind,))
        self.groups.configure(text="\n".join(f"{label}: {line}" for label, line in view.per_column))
