"""The Evaluations menu's actions: New Evaluation… (the dialog, then the run), Compare Two
Results…, and "Open as thread" of a cell.

A run from the dialog writes `<thread>.eval.yaml` beside the thread (a free name: `-2`, `-3`
… when taken), then on the worker pool reads and checks it (`evals/run.prepare`: nothing is
called before everything is checked) and opens its results folder; the results window
opens on the Tk thread, and `evals/run.run_cells` runs on the worker pool, each journaled
record posted through the pump (`ui/pump.py`) to the window as it lands.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import UserFacingError
from ...presenters.eval_form import NewEvalForm
from ...presenters.eval_grid import EvalGrid, GridCell, open_as_thread
from ..services import UiServices
from .compare_window import CompareWindow
from .new_dialog import NewEvaluationDialog
from .results_window import ResultsWindow

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...core.model import Thread
    from ...evals.run import Outcome
    from ...evals.start import Started
    from ..app_services import EvalServices


def eval_file_for(thread_file: Path) -> Path:
    """A free `<stem>.eval.yaml` beside the thread."""
    stem = thread_file.name[:-5] if thread_file.name.endswith(".json") else thread_file.stem
    path, n = thread_file.with_name(f"{stem}.eval.yaml"), 2
    while path.exists():
        path, n = thread_file.with_name(f"{stem}-{n}.eval.yaml"), n + 1
    return path


class EvalActions:
    def __init__(self, ui: UiServices, app: EvalServices, open_thread: Callable[[str], Any], refresh_tree: Callable[[], Any],
                 active_thread: Callable[[], str | None]) -> None:
        self.ui, self.app = ui, app
        self.open_thread, self.refresh_tree, self.active_thread = open_thread, refresh_tree, active_thread
        self.windows: list[ResultsWindow] = []
        self.runs: list[Future[Outcome]] = []  # the evaluations started here (tests wait on them)
        self.stops: list[threading.Event] = []  # one per run: set to stop it

    def stop_all(self) -> None:
        """Stop every running evaluation (the window is closing); each writes what finished."""
        for stop in self.stops:
            stop.set()

    # -- New Evaluation… -----------------------------------------------------------------
    def threads(self) -> list[str]:
        out: list[str] = []
        stack = list(self.app.workspace.list_tree())
        while stack:
            e = stack.pop(0)
            if e.is_dir:
                stack[:0] = list(e.children or [])
            else:
                out.append(e.rel)
        return out

    def default_models(self, thread: Thread) -> str:
        choice = self.app.providers.choose(thread.model).model
        return f"{choice.provider}/{choice.id}" if choice is not None else ""

    def new_evaluation(self) -> NewEvaluationDialog:
        return NewEvaluationDialog(self.ui, self.app.workspace, self.threads(), self.active_thread(),
                                   self.default_models, self.start)

    def start(self, form: NewEvalForm) -> Future[Started]:
        """Write the evaluation file, prepare it off the Tk thread, then run it into a results window."""
        from ...evals.spec import load_spec, write_spec
        from ...evals.start import start_run

        thread_file = self.app.workspace.resolve(form.thread_rel)
        runner = self.app.runner

        def prepare() -> Started:
            out = eval_file_for(thread_file)
            write_spec(out, form.spec_data(thread_file, out.parent))
            return start_run(runner, load_spec(out))

        self.ui.status.set("Preparing the evaluation…")
        return self.ui.pump.run_in_worker(prepare, self._prepared, name="eval-prepare")

    def _prepared(self, future: Future[Started]) -> None:
        from ...evals import run as runmod

        try:
            started = future.result()
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return
        prepared, folder, records = started.prepared, started.folder, started.records
        spec = prepared.spec
        grid = EvalGrid.from_plan(prepared.plan, spec.pass_k)
        grid.add_records(records)
        grid.refresh()
        window = ResultsWindow(self.ui.root, f"Evaluation {spec.name} · {folder.name}", grid,
                               lambda cell: self.open_case(prepared.thread_rel, cell))
        window.grid_view.rebuild()
        self.windows.append(window)
        self.ui.status.set(f"Evaluating {prepared.thread_rel}: {len(prepared.plan.cells)} cells → {folder}")
        pump = self.ui.pump

        stop = threading.Event()
        self.stops.append(stop)
        window.running(stop)

        def run() -> Outcome:
            return runmod.run_cells(prepared, folder, records, concurrency=spec.concurrency, budget=spec.budget,
                                  on_record=lambda r: pump.post(window.add_record, r), stop=stop)

        def done(f: Future[Outcome]) -> None:
            try:
                outcome = f.result()
            except UserFacingError as exc:
                self.ui.errors.show(str(exc))
                if window.winfo_exists():
                    window.done("stopped by an error")
                return
            text = f"results in {outcome.folder}"
            if outcome.interrupted:
                text = f"stopped; what finished is in {outcome.folder} (run it again to resume)"
            self.ui.status.set(f"Evaluation {spec.name} finished: {text}")
            if window.winfo_exists():
                window.done(text)

        self.runs.append(pump.run_in_worker(run, done, name="eval-run"))

    # -- a cell --------------------------------------------------------------------------
    def open_case(self, thread_rel: str, cell: GridCell) -> str:
        """A new thread of this case beside the evaluated one (the original is not changed); opened in a tab."""
        ws = self.app.workspace
        new = open_as_thread(ws.open(thread_rel), cell)
        folder, _, name = thread_rel.rpartition("/")
        stem = name[:-5] if name.endswith(".json") else name
        case = re.sub(r"[^\w.-]+", "-", cell.case).strip("-.") or "case"
        rel = ws.create_thread(folder, f"{stem}-{case}", new)
        self.refresh_tree()
        self.open_thread(rel)
        self.ui.status.set(f"Opened case {cell.case} as {rel}")
        return rel

    # -- Open Results… -------------------------------------------------------------------
    def pick_results(self) -> ResultsWindow | None:
        """Evaluations › Open Results…: a results folder (under `$LLM_SPACE_HOME/evals`) in the grid."""
        from ...evals.run import results_root

        root = results_root(self.app.runner)
        picked = self.ui.dialogs.choose_folder("Open evaluation results", str(root) if root.is_dir() else "")
        return self.open_results(Path(picked)) if picked else None

    def open_results(self, folder: Path) -> ResultsWindow | None:
        """A finished (or stopped) results folder in a results window; its cases' variables
        come from the dataset named in its summary, when that is still readable."""
        from ...evals.compare import read_rows, read_summary
        from ...evals.dataset import load_dataset

        try:
            summary = read_summary(folder)
            rows = read_rows(folder / "results.jsonl")
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(str(exc))
            return None
        values: dict[str, dict[str, str]] = {}
        try:
            dataset = load_dataset(Path(str(summary.get("dataset") or "")))
            values = {c.id: {k: v if isinstance(v, str) else str(v) for k, v in c.values.items()} for c in dataset.cases}
        except (UserFacingError, OSError):
            pass  # "Open as thread" then leaves the variables as the thread has them
        repeat = int(summary.get("repeat") or 1)
        grid = EvalGrid.from_rows(rows, repeat, int(summary.get("passK") or repeat), values)
        thread_rel = str(summary.get("thread") or "")
        open_case = (lambda cell: self.open_case(thread_rel, cell)) if thread_rel else None
        window = ResultsWindow(self.ui.root, f"Evaluation {summary.get('name') or folder.parent.name} · {folder.name}",
                               grid, open_case)
        window.done(f"results in {folder}")
        self.windows.append(window)
        return window

    # -- Compare Two Results… ------------------------------------------------------------
    def compare(self) -> CompareWindow:
        from ...evals.run import results_root

        return CompareWindow(self.ui, results_root(self.app.runner))
