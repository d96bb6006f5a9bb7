"""Evaluations › New Evaluation…: the thread, a dataset with a preview of its first rows and
where each of the thread's variables gets its value, the models, assertions (one per line),
the judge and repeats. Run stays disabled while the form has problems (listed under it) or
the preview is being read (on the worker pool); the logic is `presenters/eval_form.py`.
To run an evaluation file again (a results window's "Run again", Evaluations › Open
Evaluation File…) it opens filled with that file's form (`initial`) and says what changed since
(`note`). "Fresh answers" asks the models again instead of reusing cached answers.
"Whole conversations" makes each row a scenario a simulated user plays: the preview lists the
scenarios' persona and goal instead of the variables, and the user model's field shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters.eval_form import NewEvalForm, Preview, dataset_preview
from .. import tkvars
from ..services import UiServices

if TYPE_CHECKING:
    from ...core.model import Thread
    from ...core.workspace import Workspace

DATASET_TYPES = (("Datasets", "*.csv *.jsonl *.ndjson *.json *.yaml *.yml"), ("All files", "*"))
CASE_HINT = ("One per line: TYPE (checks the case's expected) or TYPE: VALUE — contains, regex: ^\\d+$, "
             "llm-rubric: Is it correct?")
CONVERSATION_HINT = ("One per line, over the whole conversation: goal-met, no-leak, turns: 4, tool-called: NAME, "
                     "no-tool-called: NAME. Left empty: goal-met with a judge, else each scenario's own assert. "
                     "User model empty: the first model.")


def size_for(screen_w: int, screen_h: int) -> tuple[int, int]:
    """The dialog's size: 900×680 when the screen has room, else the screen less room for a
    panel and the title bar (on 1024×600, 900×520; the form gives way, Run stays in view)."""
    return min(900, screen_w - 40), min(680, screen_h - 80)


class NewEvaluationDialog(tb.Toplevel):
    def __init__(self, ui: UiServices, workspace: Workspace, threads: list[str], thread_rel: str | None,
                 default_models: Callable[[Thread], str], on_run: Callable[[NewEvalForm], Any],
                 initial: NewEvalForm | None = None, note: str = "") -> None:
        super().__init__(master=ui.root, title="Run Evaluation Again" if initial is not None else "New Evaluation")
        self.geometry("{}x{}".format(*size_for(self.winfo_screenwidth(), self.winfo_screenheight())))
        self.ui, self.workspace = ui, workspace
        self.default_models = default_models
        self.on_run = on_run
        self.preview: Preview | None = None
        self.loading = False  # a preview is being read
        self._asked = 0  # previews asked for (only the newest is shown)
        self._read_for: tuple[str, int, bool] | None = None  # the dataset and thread of the last preview asked for
        self.thread: Thread | None = None
        self.note = tb.Label(self, text=note, bootstyle="warning", justify="left", wraplength=820)
        if note:
            self.note.pack(fill="x", padx=10, pady=(10, 0))
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        body.columnconfigure(1, weight=1)

        def label(row: int, text: str) -> None:
            tb.Label(body, text=text).grid(row=row, column=0, sticky="nw", padx=(0, 8), pady=4)

        label(0, "Thread")
        self.thread_var = tkvars.StringVar(self, thread_rel or (threads[0] if threads else ""))
        self.thread_box = tb.Combobox(body, textvariable=self.thread_var, values=threads, state="readonly")
        self.thread_box.grid(row=0, column=1, columnspan=2, sticky="ew", pady=4)
        self.thread_box.bind("<<ComboboxSelected>>", lambda e: self.thread_changed(), add=True)
        label(1, "Dataset")
        self.dataset_var = tkvars.StringVar(self, "")
        self.dataset_entry = tb.Entry(body, textvariable=self.dataset_var)
        self.dataset_entry.grid(row=1, column=1, sticky="ew", pady=4)
        self.dataset_entry.bind("<FocusOut>", lambda e: self.dataset_changed(), add=True)
        self.dataset_entry.bind("<Return>", lambda e: self.dataset_changed(), add=True)
        tb.Button(body, text="Browse…", bootstyle="secondary", command=self.browse).grid(row=1, column=2, padx=(6, 0))
        label(2, "Each row")
        self.conversation_var = tkvars.BooleanVar(self, False)
        kinds = tb.Frame(body)
        kinds.grid(row=2, column=1, columnspan=2, sticky="w", pady=4)
        self.kind_case = tb.Radiobutton(kinds, text="One test case", variable=self.conversation_var, value=False,
                                        command=self.kind_changed)
        self.kind_case.pack(side="left")
        self.kind_conversation = tb.Radiobutton(kinds, text="Whole conversations (a simulated user plays each row)",
                                                variable=self.conversation_var, value=True, command=self.kind_changed)
        self.kind_conversation.pack(side="left", padx=(12, 0))
        label(3, "Preview")
        self.table = tb.Treeview(body, show="headings", height=5)
        self.table.grid(row=3, column=1, columnspan=2, sticky="nsew", pady=4)
        self.mapping_label = tb.Label(body, text="Variables")
        self.mapping_label.grid(row=4, column=0, sticky="nw", padx=(0, 8), pady=4)
        self.mapping = tb.Treeview(body, columns=("variable", "source"), show="headings", height=3)
        self.mapping.heading("variable", text="Variable")
        self.mapping.heading("source", text="Value from")
        self.mapping.column("variable", width=160, stretch=False)
        self.mapping.tag_configure("missing", foreground=tb.Style().colors.danger)
        self.mapping.grid(row=4, column=1, columnspan=2, sticky="nsew", pady=4)
        label(5, "Models")
        self.models_var = tkvars.StringVar(self, "")
        self.models_entry = tb.Entry(body, textvariable=self.models_var)
        self.models_entry.grid(row=5, column=1, columnspan=2, sticky="ew", pady=4)
        self.user_label = tb.Label(body, text="User model")
        self.user_label.grid(row=6, column=0, sticky="nw", padx=(0, 8), pady=4)
        self.user_model_var = tkvars.StringVar(self, "")
        self.user_model_entry = tb.Entry(body, textvariable=self.user_model_var)  # PROVIDER/MODEL, as Models
        self.user_model_entry.grid(row=6, column=1, columnspan=2, sticky="ew", pady=4)
        label(7, "Assertions")
        self.assertions = tb.Text(body, height=4, wrap="none")
        self.assertions.grid(row=7, column=1, columnspan=2, sticky="ew", pady=4)
        self.hint = tb.Label(body, text=CASE_HINT, bootstyle="secondary", justify="left")
        self.hint.grid(row=8, column=1, columnspan=2, sticky="ew")  # wrapped to the room it gets, never cut
        self.hint.bind("<Configure>", lambda e: self.hint.configure(wraplength=max(120, e.width - 2)), add=True)
        label(9, "Judge")
        self.judge_var = tkvars.StringVar(self, "")
        tb.Entry(body, textvariable=self.judge_var).grid(row=9, column=1, columnspan=2, sticky="ew", pady=4)
        label(10, "Repeats")
        self.repeat_var = tkvars.StringVar(self, "1")
        tb.Spinbox(body, from_=1, to=100, textvariable=self.repeat_var, width=6).grid(row=10, column=1, sticky="w", pady=4)
        self.problems = tb.Label(body, text="", bootstyle="danger", justify="left", wraplength=820)
        self.problems.grid(row=11, column=0, columnspan=3, sticky="w", pady=(8, 0))
        bar = tb.Frame(self, padding=(10, 0, 10, 10))
        bar.pack(side="bottom", fill="x", before=body)  # placed first: a short screen squeezes the form, not Run
        self.btn_run = tb.Button(bar, text="Run", bootstyle="primary", command=self.run)
        self.btn_run.pack(side="right")
        tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.destroy).pack(side="right", padx=6)
        self.fresh_var = tkvars.BooleanVar(self, False)
        self.fresh_check = tb.Checkbutton(bar, text="Fresh answers (ask the models again, not the cache)",
                                          variable=self.fresh_var)
        self.fresh_check.pack(side="left")
        if initial is not None:
            self._fill(initial)
        self._show_kind()
        for var in (self.models_var, self.judge_var, self.repeat_var, self.user_model_var):
            var.trace_add("write", lambda *a: self.check())
        self.assertions.bind("<KeyRelease>", lambda e: self.check(), add=True)
        self.bind("<Escape>", lambda e: self.destroy())
        self.thread_changed()

    # -- fields --------------------------------------------------------------------------
    def _fill(self, form: NewEvalForm) -> None:
        """The fields of an evaluation file's form (to run it again)."""
        self.thread_var.set(form.thread_rel)
        self.dataset_var.set(form.dataset)
        self.models_var.set(form.models)
        self.assertions.insert("1.0", form.assertions)
        self.judge_var.set(form.judge)
        self.repeat_var.set(str(form.repeat))
        self.conversation_var.set(form.conversation)
        self.user_model_var.set(form.user_model)

    def kind_changed(self) -> None:
        """Test cases or whole conversations: the fields shown and the preview follow."""
        self._show_kind()
        self.dataset_changed()

    def _show_kind(self) -> None:
        conversation = bool(self.conversation_var.get())
        for widget, shown in ((self.user_label, conversation), (self.user_model_entry, conversation),
                              (self.mapping_label, not conversation), (self.mapping, not conversation)):
            if shown:
                widget.grid()
            else:
                widget.grid_remove()
        self.hint.configure(text=CONVERSATION_HINT if conversation else CASE_HINT)

    def thread_changed(self) -> None:
        rel = self.thread_var.get()
        self.thread = None
        if rel:
            try:
                self.thread = self.workspace.open(rel)
            except UserFacingError as exc:
                self.problems.configure(text=exc.message)
        if self.thread is not None and not self.models_var.get().strip():
            self.models_var.set(self.default_models(self.thread))
        self.dataset_changed()

    def browse(self) -> None:
        path = self.ui.dialogs.open_file("Choose a dataset", DATASET_TYPES)
        if path:
            self.dataset_var.set(path)
            self.dataset_changed()

    def dataset_changed(self) -> None:
        """Read the dataset's preview on the worker pool (a large file never stalls the
        window); the answer for an older choice is dropped."""
        path = self.dataset_var.get().strip()
        thread = self.thread
        conversation = bool(self.conversation_var.get())
        if (path, id(thread), conversation) == self._read_for:
            return  # unchanged (the entry lost the focus, say)
        self._read_for = (path, id(thread), conversation)
        self._asked += 1
        asked = self._asked
        if not path:
            self._show(None)
            return
        self.loading = True
        self.problems.configure(text="Reading the dataset…")
        self.btn_run.configure(state="disabled")
        self.ui.pump.run_in_worker(lambda: dataset_preview(Path(path).expanduser(), thread, conversation=conversation),
                                   lambda f: self._show(f.result()) if asked == self._asked else None,
                                   name="eval-dataset-preview")

    def _show(self, preview: Preview | None) -> None:
        if not self.winfo_exists():
            return
        self.loading = False
        self.preview = preview
        self.table.delete(*self.table.get_children())
        self.mapping.delete(*self.mapping.get_children())
        if self.preview is not None:
            self.table.configure(columns=self.preview.columns)
            for col in self.preview.columns:
                self.table.heading(col, text=col)
                self.table.column(col, width=140, stretch=True)
            for row in self.preview.rows:
                self.table.insert("", "end", values=row)
            for name, source, ok in self.preview.mapping:
                self.mapping.insert("", "end", values=(name, source), tags=() if ok else ("missing",))
            current = self.assertions.get("1.0", "end").strip()
            if not current and self.preview.has_expected:
                self.assertions.insert("1.0", "contains")
        self.check()

    def form(self) -> NewEvalForm:
        try:
            repeat = int(self.repeat_var.get() or 0)
        except ValueError:
            repeat = 0
        return NewEvalForm(self.thread_var.get(), self.dataset_var.get().strip(), self.models_var.get(),
                           self.assertions.get("1.0", "end").strip(), self.judge_var.get().strip(), repeat,
                           bool(self.fresh_var.get()), bool(self.conversation_var.get()), self.user_model_var.get().strip())

    def check(self) -> list[str]:
        if self.loading:
            return ["Reading the dataset…"]
        problems = self.form().problems(self.preview)
        self.problems.configure(text="\n".join(problems))
        self.btn_run.configure(state="disabled" if problems else "normal")
        return problems

    def run(self) -> Any:
        if self.check():
            return None
        result = self.on_run(self.form())
        self.destroy()
        return result
