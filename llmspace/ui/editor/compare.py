"""Compare dialog of two recorded runs, named by time and model (title and frames): an
"Evaluate" tab with Run A and Run B side by side (with tokens, cost and latency), the rubric
picker with New/Edit/Delete, the 1–5 score grid with live averages and the B − A delta, a
note and the verdict buttons; and a read-only "Differences" tab with the structural diff of
`core/compare.py`, wrapped (continuation lines hang under their text), removed and added
lines coloured and the changed words marked (`presenters/compare_diff.py`). `RubricEditor` creates or edits a rubric (its limits — criteria
count, name and description lengths — are those of `core/run_verdict_records.py`). Logic in
`presenters/compare.py`, rules in `core/run_verdicts.py`.
"""

from __future__ import annotations

import tkinter as tk
from functools import partial
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...core.run_verdict_records import DESCRIPTION_MAX, MAX_CRITERIA, MIN_CRITERIA, NAME_MAX
from ...core.run_verdicts import CriterionInput
from ...errors import UserFacingError, error_text
from ...presenters.compare import VERDICT_LABELS, ComparePresenter

if TYPE_CHECKING:
    from ...presenters.editor import EditorPresenter
    from ..services import UiServices

SCORES = ("", "1", "2", "3", "4", "5")


def _fill_diff(box: tb.Text, lines: list[Any]) -> None:
    """Insert the styled diff lines (`presenters/compare_diff.DiffLine`) and make it read-only."""
    import tkinter.font as tkfont

    colors = tb.Style().colors
    space = tkfont.Font(font=box.cget("font")).measure(" ")
    box.tag_configure("title", font="TkHeadingFont")
    box.tag_configure("heading", font="TkHeadingFont")
    box.tag_configure("meta", foreground=colors.secondary)
    box.tag_configure("hunk", foreground=colors.info)
    box.tag_configure("removed", foreground=colors.danger)
    box.tag_configure("added", foreground=colors.success)
    box.tag_configure("removed-word", background=colors.make_transparent(0.25, colors.danger, colors.inputbg))
    box.tag_configure("added-word", background=colors.make_transparent(0.25, colors.success, colors.inputbg))
    for i, ln in enumerate(lines, start=1):
        hang = f"hang{ln.indent}"
        box.tag_configure(hang, lmargin2=space * ln.indent)
        box.insert("end", ln.text + ("\n" if i < len(lines) else ""), (ln.kind, hang))
        for start, end in ln.changed:
            box.tag_add(f"{ln.kind}-word", f"{i}.{start}", f"{i}.{end}")
    box.configure(state="disabled")


class CompareDialog(tb.Toplevel):
    """Evaluate a pair of runs; see the module docstring."""

    def __init__(self, ui: UiServices, editor: EditorPresenter, run_a: str, run_b: str) -> None:
        self.p = ComparePresenter(editor, run_a, run_b)  # may refuse before any widget exists
        lines = self.p.diff_lines()
        super().__init__(title=self.p.title(), master=ui.root, size=(1000, 720))
        self.ui, self.run_a, self.run_b = ui, run_a, run_b
        self.bind("<Escape>", lambda e: self.destroy())
        self.tabs = tb.Notebook(self)
        self.tabs.pack(fill="both", expand=True, padx=8, pady=(8, 0))
        evaluate = tb.Frame(self.tabs, padding=6)
        diff_tab = tb.Frame(self.tabs, padding=6)
        self.tabs.add(evaluate, text="Evaluate")
        self.tabs.add(diff_tab, text="Differences")
        self.body = tb.Text(diff_tab, wrap="word", font="TkFixedFont", width=80, height=20)
        scroll = tb.Scrollbar(diff_tab, orient="vertical", command=self.body.yview)
        self.body.configure(yscrollcommand=scroll.set)
        scroll.pack(side="right", fill="y")
        self.body.pack(fill="both", expand=True)
        _fill_diff(self.body, lines)
        self._build_sides(evaluate)
        self._build_rubric(evaluate)
        self._build_verdict()
        self.refresh()

    # -- layout ------------------------------------------------------------------------------
    def _build_sides(self, master: Any) -> None:
        sides = tb.Frame(master)
        sides.pack(fill="x")
        self.side_texts: list[Any] = []
        self.side_labels: list[Any] = []
        for col, (label, run_id) in enumerate((("Run A", self.run_a), ("Run B", self.run_b))):
            info = self.p.side(run_id)
            box = tb.Labelframe(sides, text=f"{label} · {info.name}", padding=4)
            box.grid(row=0, column=col, sticky="nsew", padx=(0 if col == 0 else 4, 0))
            sides.columnconfigure(col, weight=1, uniform="side")
            facts = " · ".join(f for f in (info.model, info.messages, info.captured, info.figures) if f)
            tb.Label(box, text=facts, bootstyle="secondary", wraplength=460, justify="left").pack(anchor="w")
            self.side_labels.append(box)
            # the result first: it is what is being judged, and must be visible without scrolling;
            # a reply is Markdown (drawn as in the editor), the user's input and the prompt as typed
            parts = ["Last user input: " + (info.last_user or "—")]
            if info.system_prompt:
                parts.append("System prompt: " + info.system_prompt)
            self.side_texts.append(self._result_text(box, info.result or "—", "\n\n".join(parts)))
            self.side_texts[-1].pack(fill="x")

    def _result_text(self, master: Any, result: str, rest: str) -> tb.Text:
        """A read-only box: "Result: ", the reply drawn as Markdown, then `rest` as it is."""
        from ..reveal import confirm_open
        from .markdown_text import MarkdownText

        box = tb.Text(master, wrap="word", height=12, width=40, font="TkTextFont")
        MarkdownText(box, lambda url: confirm_open(self.ui.dialogs, url)).show(result)  # drawn at once
        box.configure(state="normal")
        box.insert("1.0", "Result: ")
        box.insert("end-1c", "\n\n" + rest)
        box.configure(state="disabled")
        return box

    def _build_rubric(self, master: Any) -> None:
        row = tb.Frame(master)
        row.pack(fill="x", pady=(8, 2))
        tb.Label(row, text="Rubric").pack(side="left")
        self.rubric_box = tb.Combobox(row, state="readonly", width=36)
        self.rubric_box.pack(side="left", padx=6)
        self.rubric_box.bind("<<ComboboxSelected>>", lambda e: self._on_choose())
        tb.Button(row, text="New…", bootstyle="secondary-outline", command=self.new_rubric).pack(side="left")
        self.edit_btn = tb.Button(row, text="Edit…", bootstyle="secondary-outline", command=self.edit_rubric)
        self.edit_btn.pack(side="left", padx=4)
        self.delete_btn = tb.Button(row, text="Delete", bootstyle="danger-outline", command=self.delete_rubric)
        self.delete_btn.pack(side="left")
        self.changed_lbl = tb.Label(master, text="", bootstyle="warning", wraplength=900, justify="left")
        self.changed_lbl.pack(anchor="w")
        self.grid_frame = tb.Frame(master)
        self.grid_frame.pack(fill="x", pady=2)
        self.avg = tb.Label(master, text="", font="TkHeadingFont")
        self.avg.pack(anchor="w", pady=(2, 0))
        self.score_boxes: dict[tuple[str, str], tb.Combobox] = {}

    def _build_verdict(self) -> None:
        row = tb.Frame(self, padding=(8, 6))
        row.pack(fill="x")
        tb.Label(row, text="Note").pack(side="left")
        self.note = tb.Entry(row, width=40)
        self.note.pack(side="left", padx=6, fill="x", expand=True)
        if self.p.note:
            self.note.insert(0, self.p.note)
        self.buttons: dict[str, Any] = {}
        for label, verdict in VERDICT_LABELS:
            b = tb.Button(row, text=label, bootstyle="secondary-outline", command=lambda v=verdict: self.save(v))
            b.pack(side="left", padx=2)
            self.buttons[verdict] = b
        self.msg = tb.Label(self, text="", bootstyle="secondary", wraplength=960, justify="left")
        self.msg.pack(anchor="w", padx=8, pady=(0, 8))

    # -- refresh -----------------------------------------------------------------------------
    def refresh(self) -> None:
        choices = self.p.choices()
        self.rubric_box.configure(values=[c.label for c in choices])
        self.rubric_box.set(self.p.selected_label())
        editable = self.p.rubric is not None and any(r.id == self.p.rubric.id for r in self.p.thread.evaluationRubrics or [])
        for b in (self.edit_btn, self.delete_btn):
            b.configure(state="normal" if editable else "disabled")
        self.changed_lbl.configure(text=self.p.changed_note)
        self._draw_grid()
        self._draw_verdict()

    def _draw_grid(self) -> None:
        for w in self.grid_frame.winfo_children():
            w.destroy()
        self.score_boxes = {}
        rubric = self.p.rubric
        if rubric is None:
            self.avg.configure(text="")
            return
        tb.Label(self.grid_frame, text="Criterion", font="TkHeadingFont").grid(row=0, column=0, sticky="w")
        tb.Label(self.grid_frame, text="Run A", font="TkHeadingFont").grid(row=0, column=1, padx=8)
        tb.Label(self.grid_frame, text="Run B", font="TkHeadingFont").grid(row=0, column=2, padx=8)
        for i, c in enumerate(rubric.criteria, start=1):
            text = c.name + (f" — {c.description}" if c.description else "")
            tb.Label(self.grid_frame, text=text, wraplength=620, justify="left").grid(row=i, column=0, sticky="w", pady=1)
            for col, run in ((1, self.run_a), (2, self.run_b)):
                box = tb.Combobox(self.grid_frame, state="readonly", width=4, values=SCORES)
                value = self.p.score(run, c.id)
                box.set("" if value is None else str(value))
                box.grid(row=i, column=col, padx=8)
                box.bind("<<ComboboxSelected>>", partial(self._on_score, run, c.id, box))
                self.score_boxes[(run, c.id)] = box
        self.grid_frame.columnconfigure(0, weight=1)
        self.avg.configure(text=self.p.averages_text())

    def _draw_verdict(self) -> None:
        for verdict, b in self.buttons.items():
            b.configure(bootstyle="primary" if verdict == self.p.verdict else "secondary-outline")

    # -- intents -----------------------------------------------------------------------------
    def _on_choose(self) -> None:
        self.choose(self.rubric_box.get())

    def choose(self, label: str) -> None:
        try:
            self.p.choose_label(label)
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc), bootstyle="danger")
        self.refresh()

    def _on_score(self, run: str, criterion_id: str, box: Any, _e: Any = None) -> None:
        raw = box.get()
        self.p.set_score(run, criterion_id, int(raw) if raw else None)
        self.avg.configure(text=self.p.averages_text())

    def set_score(self, side: str, index: int, value: int | None) -> None:
        """Set the score of criterion `index` for side "A" or "B" as the user would."""
        assert self.p.rubric is not None
        run = self.run_a if side == "A" else self.run_b
        box = self.score_boxes[(run, self.p.rubric.criteria[index].id)]
        box.set("" if value is None else str(value))
        box.event_generate("<<ComboboxSelected>>")

    def save(self, verdict: str) -> bool:
        confirm = self.ui.dialogs.confirm
        try:
            ev = self.p.save(verdict, self.note.get(), confirm=confirm)
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc), bootstyle="danger")
            return False
        if ev is None:
            self.msg.configure(text="Not saved; the scores are kept.", bootstyle="secondary")
            return False
        self.msg.configure(text="Saved.", bootstyle="success")
        self.refresh()
        return True

    def new_rubric(self) -> RubricEditor:
        return RubricEditor(self, None)

    def edit_rubric(self) -> RubricEditor | None:
        rubric = self.p.rubric
        if rubric is None or not any(r.id == rubric.id for r in self.p.thread.evaluationRubrics or []):
            return None  # no rubric, or only the snapshot of a deleted one
        return RubricEditor(self, rubric)

    def delete_rubric(self) -> bool:
        rubric = self.p.rubric
        if rubric is None:
            return False
        if not self.ui.dialogs.confirm(
                f"Delete rubric {rubric.name!r}? Saved evaluations keep their scores.", "Delete rubric"):
            return False
        try:
            self.p.delete_rubric(rubric.id)
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc), bootstyle="danger")
            return False
        self.refresh()
        return True


class RubricEditor(tb.Toplevel):
    """Create or edit one rubric: a name and 2–6 criteria (name, optional description)."""

    def __init__(self, dialog: CompareDialog, rubric: Any) -> None:
        super().__init__(title="Edit rubric" if rubric is not None else "New rubric", master=dialog, size=(640, 420))
        self.dialog, self.rubric = dialog, rubric
        self.bind("<Escape>", lambda e: self.destroy())
        top = tb.Frame(self, padding=8)
        top.pack(fill="x")
        tb.Label(top, text="Name").pack(side="left")
        self.name = tb.Entry(top, width=36)
        self.name.pack(side="left", padx=6, fill="x", expand=True)
        tb.Label(self, text=f"Criteria ({MIN_CRITERIA}–{MAX_CRITERIA}; names ≤ {NAME_MAX}, descriptions ≤ "
                            f"{DESCRIPTION_MAX} characters)", bootstyle="secondary").pack(anchor="w", padx=8)
        head = tb.Frame(self, padding=(8, 2, 8, 0))
        head.pack(fill="x")
        tb.Label(head, text="Criterion", width=24).pack(side="left")
        tb.Label(head, text="Description").pack(side="left", padx=4)
        self.rows_frame = tb.Frame(self, padding=(8, 2))
        self.rows_frame.pack(fill="both", expand=True)
        self.rows: list[tuple[str | None, tk.Entry, tk.Entry, Any]] = []
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x")
        self.add_btn = tb.Button(bar, text="+ Criterion", bootstyle="secondary-outline", command=self.add_row)
        self.add_btn.pack(side="left")
        tb.Button(bar, text="Save", bootstyle="primary", command=self.save).pack(side="right")
        tb.Button(bar, text="Cancel", bootstyle="secondary-outline", command=self.destroy).pack(side="right", padx=4)
        self.msg = tb.Label(self, text="", bootstyle="danger", wraplength=600, justify="left")
        self.msg.pack(anchor="w", padx=8, pady=(0, 8))
        if rubric is not None:
            self.name.insert(0, rubric.name)
            for c in rubric.criteria:
                self.add_row(c.name, c.description or "", c.id)
        else:
            for _ in range(MIN_CRITERIA):
                self.add_row()

    def add_row(self, name: str = "", description: str = "", cid: str | None = None) -> None:
        if len(self.rows) >= MAX_CRITERIA:
            self.msg.configure(text=f"A rubric has at most {MAX_CRITERIA} criteria.")
            return
        frame = tb.Frame(self.rows_frame)
        frame.pack(fill="x", pady=1)
        remove = tb.Button(frame, text="✕", width=2, bootstyle="secondary-link")
        remove.pack(side="right")  # packed first: long entries can never push it out of view
        n = tb.Entry(frame, width=24)
        n.insert(0, name)
        n.pack(side="left")
        d = tb.Entry(frame, width=30)  # it fills the row
        d.insert(0, description)
        d.pack(side="left", padx=4, fill="x", expand=True)
        entry = (cid, n, d, frame)
        remove.configure(command=lambda: self.remove_row(entry))
        self.rows.append(entry)

    def remove_row(self, entry: Any) -> None:
        if entry in self.rows:
            self.rows.remove(entry)
            entry[3].destroy()

    def criteria(self) -> list[CriterionInput]:
        return [CriterionInput(name=n.get(), description=d.get() or None, id=cid) for cid, n, d, _f in self.rows]

    def save(self) -> Any:
        p = self.dialog.p
        try:
            if self.rubric is None:
                rubric = p.create_rubric(self.name.get(), self.criteria())
            else:
                rubric = p.update_rubric(self.rubric.id, self.name.get(), self.criteria())
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc))
            return None
        self.dialog.refresh()
        self.destroy()
        return rubric
