"""The Evaluations menu's workflows (no Tk): an evaluation started from the New Evaluation
dialog — its file written beside the thread (a free name), read, checked and its results folder
opened through `evals/start.py::start_run` (the command line's path too), its cells run with
each journaled record handed on as it lands, stopped on request (the results window's Stop,
or the main window closing) —, a finished results folder opened as a grid, two folders
compared, and where results live. The widgets are `ui/evals/`; the grid is
`presenters/eval_grid.py`, the comparison's lines `presenters/eval_compare.py`.

Running again: `again(folder)` (a results window's "Run again") and `open_eval_file(path)`
(Evaluations › Open Evaluation File…) give a `Rerun` — the file's form for the dialog, and a
note when the thread or the file changed since those results (the run takes them as they are
now). A rerun whose form is left unchanged runs that file as it is, in a new results folder; a
changed one is written as a new file. New files are `<thread stem>.eval.yaml`, then
`<thread stem>.eval-2.yaml`, … (never `<stem>-2.eval.yaml`, which reads as thread `<stem>-2`'s).
The form's "fresh answers" runs without the response cache (`eval run --no-cache`).

    evaluations = Evaluations(app.workspace, app.runner)
    session = evaluations.start(form)
    session.prepare()                     # worker thread: writes <thread>.eval.yaml, checks it, opens the folder
    window = ResultsWindow(..., session.title, session.grid, ...)
    outcome = session.run(on_record)      # worker thread; session.stop() from any thread ends it early
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserFacingError
from ..evals.compare import compare_results, read_rows, read_summary
from ..evals.dataset import load_dataset
from ..evals.journal import NAME as JOURNAL
from ..evals.journal import read_journal
from ..evals.new_file import write_new_eval
from ..evals.records import CellRecord, JudgeRecord
from ..evals.run import Outcome, resolve_thread, results_root, run_cells, thread_hash
from ..evals.spec import load_spec, write_spec
from ..evals.start import Started, start_run
from .eval_compare import ComparisonView, comparison_view
from .eval_form import NewEvalForm, form_from_spec
from .eval_grid import EvalGrid

if TYPE_CHECKING:
    from ..agent.runner import Runner
    from ..core.workspace import Workspace

__all__ = ["EvaluationSession", "Evaluations", "OpenedResults", "Outcome", "Record", "Rerun", "compare_folders",
           "eval_file_for"]

Record = CellRecord | JudgeRecord  # what a run hands on as it journals it (the grid's add_record takes it)


def eval_file_for(thread_file: Path) -> Path:
    """A free `<stem>.eval.yaml` beside the thread, else `<stem>.eval-2.yaml`, `<stem>.eval-3.yaml`, …"""
    stem = thread_file.name[:-5] if thread_file.name.endswith(".json") else thread_file.stem
    path, n = thread_file.with_name(f"{stem}.eval.yaml"), 2
    while path.exists():
        path, n = thread_file.with_name(f"{stem}.eval-{n}.yaml"), n + 1
    return path


@dataclass(frozen=True)
class Rerun:
    """An evaluation file to run again: its form (the dialog prefilled), the file, and what
    changed since the results it was opened from ("" when nothing did)."""

    form: NewEvalForm
    eval_file: Path
    note: str = ""


def compare_folders(folder_a: Path, folder_b: Path) -> ComparisonView:
    """The paired comparison of two results folders (A the baseline), flips first."""
    return comparison_view(compare_results(folder_a, folder_b))


class EvaluationSession:
    """One evaluation started from the app. `prepare()` and `run()` work on a worker thread;
    `stop()` may come from any thread (the run ends after the cells in flight and writes what
    finished; running it again resumes)."""

    def __init__(self, runner: Runner, thread_file: Path, form: NewEvalForm | None,
                 resume: Path | None = None, rerun: Rerun | None = None) -> None:
        self.runner, self.thread_file, self.form = runner, thread_file, form
        self.rerun = rerun  # the evaluation file this runs again (`Evaluations.again`, `open_eval_file`)
        self.resume_folder = resume  # an interrupted results folder to continue in (`Evaluations.resume`)
        self._stop = threading.Event()
        self._started: Started | None = None
        self._grid: EvalGrid | None = None
        self.eval_file: Path | None = None

    @property
    def started(self) -> Started:
        if self._started is None:
            raise RuntimeError("prepare() the evaluation first")
        return self._started

    def prepare(self) -> None:
        """Write the evaluation file, read and check it (nothing is called before everything is
        checked) and open its results folder. UserFacingError says what to fix. A resumed
        session reads the evaluation file its folder names and continues in that folder, as
        `eval run` resumes: the journaled cells are not asked again."""
        if self.resume_folder is not None:
            self.eval_file = self.thread_file
            self._started = start_run(self.runner, load_spec(self.thread_file), out=self.resume_folder)
            return
        if self.form is None:
            raise RuntimeError("a new evaluation needs its form")
        rerun = self.rerun
        if rerun is not None and replace(self.form, fresh=False) == replace(rerun.form, fresh=False):
            out = rerun.eval_file  # unchanged: that file as it is, in a new results folder
        elif self.form.conversation:  # as `eval new --conversation` writes it
            out = eval_file_for(self.thread_file)
            workspace = self.runner.services.workspace
            write_new_eval(self.form.new_eval(self.thread_file, out), workspace.open(self.form.thread_rel), workspace.root)
        else:
            out = eval_file_for(self.thread_file)
            write_spec(out, self.form.spec_data(self.thread_file, out.parent))
        self.eval_file = out
        self._started = start_run(self.runner, load_spec(out), fresh=rerun is not None)

    @property
    def folder(self) -> Path:
        return self.started.folder

    @property
    def thread_rel(self) -> str:
        return self.started.prepared.thread_rel

    @property
    def name(self) -> str:
        return self.started.prepared.spec.name

    @property
    def title(self) -> str:
        return f"Evaluation {self.name} · {self.folder.name}"

    @property
    def status_line(self) -> str:
        fresh = " with fresh answers" if self.fresh else ""
        note = f" · {self.rerun.note}" if self.rerun is not None and self.rerun.note else ""
        return f"Evaluating {self.thread_rel}{fresh}: {len(self.started.prepared.plan.cells)} cells → {self.folder}{note}"

    @property
    def fresh(self) -> bool:
        """The models are called even when the response cache holds an answer."""
        return self.form is not None and self.form.fresh

    @property
    def grid(self) -> EvalGrid:
        """The grid of the plan with what an earlier run of the folder journaled (built once;
        the UI thread adds the records `run` hands on)."""
        if self._grid is None:
            prepared = self.started.prepared
            self._grid = EvalGrid.from_plan(prepared.plan, prepared.spec.pass_k)
            self._grid.add_records(self.started.records)
            self._grid.refresh()
        return self._grid

    def run(self, on_record: Callable[[Record], None]) -> Outcome:
        """Run the cells not journaled yet; each record goes to `on_record` (on a worker thread)
        as it is journaled."""
        started = self.started
        spec = started.prepared.spec
        return run_cells(started.prepared, started.folder, started.records, concurrency=spec.concurrency,
                         budget=spec.budget, use_cache=not self.fresh, on_record=on_record, stop=self._stop)

    def stop(self) -> None:
        """End the run: the cells in flight finish, what finished is written."""
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def finished_text(self, outcome: Outcome) -> str:
        if outcome.interrupted:
            return f"stopped; what finished is in {outcome.folder} (run it again to resume)"
        return f"results in {outcome.folder}"


@dataclass
class OpenedResults:
    """A results folder for the results window: its grid, title and the evaluated thread
    ("" when the summary names none: no "Open as thread")."""

    grid: EvalGrid
    title: str
    thread_rel: str
    text: str
    interrupted: bool = False  # stopped before it finished: the window offers Resume


class Evaluations:
    """The Evaluations menu's workflows over one workspace and runner."""

    def __init__(self, workspace: Workspace, runner: Runner) -> None:
        self.workspace, self.runner = workspace, runner

    def results_root(self) -> Path:
        """Where results folders live (`$LLM_SPACE_HOME/evals`)."""
        return results_root(self.runner)

    def start(self, form: NewEvalForm, rerun: Rerun | None = None) -> EvaluationSession:
        """The evaluation of the form's thread, not prepared yet (`rerun`: the file it runs again)."""
        return EvaluationSession(self.runner, self.workspace.resolve(form.thread_rel), form, rerun=rerun)

    def open_eval_file(self, path: Path) -> Rerun:
        """An evaluation file to run again from the dialog. UserFacingError when it cannot be read."""
        spec = load_spec(path)
        return Rerun(form_from_spec(spec, resolve_thread(self.runner, spec)), path)

    def again(self, folder: Path) -> Rerun:
        """The evaluation file of a results folder, to run again; its note says when the thread
        or the file changed since (the run takes them as they are now)."""
        header = read_journal(folder / JOURNAL).header if (folder / JOURNAL).is_file() else None
        if header is None or not header.eval_file:
            raise UserFacingError(f"{folder} does not say which evaluation file it ran (it has no journal).",
                                  hint="Open the evaluation file with Evaluations › Open Evaluation File… to run it again.")
        path = Path(header.eval_file)
        if not path.is_file():
            raise UserFacingError(f"The evaluation file {path} of these results is gone.",
                                  hint="Start one with Evaluations › New Evaluation….")
        rerun = self.open_eval_file(path)
        changed = [what for what, yes in (
            (f"the thread {rerun.form.thread_rel}",
             header.hashes.get("thread") != thread_hash(self.workspace.open(rerun.form.thread_rel))),
            (f"the evaluation file {path.name}", header.hashes.get("evalFile") != load_spec(path).raw_hash)) if yes]
        if not changed:
            return rerun
        note = " and ".join(changed) + " changed since these results: it runs as it is now."
        return replace(rerun, note=note[:1].upper() + note[1:])

    def open_results(self, folder: Path) -> OpenedResults:
        """A finished (or stopped) results folder as a grid; its cases' variables come from the
        dataset its summary names, when that is still readable. UserFacingError (or OSError)
        when the folder holds no results."""
        summary = read_summary(folder)
        rows = read_rows(folder / "results.jsonl")
        values: dict[str, dict[str, str]] = {}
        try:
            dataset = load_dataset(Path(str(summary.get("dataset") or "")))
            values = {c.id: {k: v if isinstance(v, str) else str(v) for k, v in c.values.items()} for c in dataset.cases}
        except (UserFacingError, OSError):
            pass  # "Open as thread" then leaves the variables as the thread has them
        repeat = int(summary.get("repeat") or 1)
        grid = EvalGrid.from_rows(rows, repeat, int(summary.get("passK") or repeat), values)
        title = f"Evaluation {summary.get('name') or folder.parent.name} · {folder.name}"
        interrupted = bool(summary.get("interrupted")) or summary.get("complete") is False
        text = (f"interrupted; what finished is in {folder} (Resume continues it)" if interrupted
                else f"results in {folder}")
        return OpenedResults(grid, title, str(summary.get("thread") or ""), text, interrupted)

    def resume(self, folder: Path) -> EvaluationSession:
        """The evaluation of an interrupted results folder, to continue in that folder (not
        prepared yet). UserFacingError when its summary names no evaluation file that still exists."""
        eval_file = Path(str(read_summary(folder).get("evalFile") or ""))
        if not eval_file.name or not eval_file.is_file():
            raise UserFacingError(f"Cannot resume {folder}: its evaluation file {(eval_file.name and eval_file) or '(none named)'} "
                                  "is gone. Run the evaluation again from Evaluations › New Evaluation….")
        return EvaluationSession(self.runner, eval_file, None, resume=folder)

    def compare(self, folder_a: Path, folder_b: Path) -> ComparisonView:
        """The paired comparison of two results folders (A the baseline), flips first."""
        return compare_folders(folder_a, folder_b)
