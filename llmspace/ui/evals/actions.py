"""The Evaluations menu's actions: New Evaluation… (the dialog, then the run), Compare Two
Results…, and "Open as thread" of a cell.

What each does is `presenters/evaluations.py`'s: a run from the dialog is an
`EvaluationSession` — prepared on the worker pool (`<thread>.eval.yaml` written beside the
thread, read, checked and its results folder opened), then its results window opens on the Tk
thread and the session runs on the worker pool, each journaled record posted through the pump
(`ui/pump.py`) to the window as it lands. Stop in the window, or `stop_all()` when the main
window closes, calls `EvaluationSession.stop()`.

Running again: "Run again" on a results window (`run_again`) and Evaluations › Open
Evaluation File… (`open_eval_file`) open the dialog filled with the evaluation file's form and
a note when its thread or the file changed since; an unchanged form runs that file again in a
new results folder (`presenters/evaluations.py`'s `Rerun`).

Optimize Prompt… (`optimize_prompt`, on an evaluation file, or a results window's results folder
whose cells are then the baseline): the dialog, then `presenters/optimize.py`'s `OptimizeSession`
runs on the worker pool into an `OptimizeWindow`, each engine event posted through the pump.
"""

from __future__ import annotations

import re
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import UserFacingError
from ...presenters.eval_conversation import file_read_warning
from ...presenters.eval_form import NewEvalForm
from ...presenters.eval_grid import GridCell, open_as_thread
from ...presenters.evaluations import Evaluations, EvaluationSession, Outcome, Rerun
from ...presenters.optimize import OptimizeSession, OptimizeState, reflector_models
from ..services import UiServices
from .compare_window import CompareWindow
from .new_dialog import NewEvaluationDialog
from .optimize_window import OptimizeDialog, OptimizeWindow
from .results_window import ResultsWindow

EVAL_FILE_TYPES = (("Evaluation files", "*.eval.yaml *.eval.yml *.eval.json *.eval-*.yaml"), ("All files", "*"))

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...core.model import Thread
    from ..app_services import EvalServices


class EvalActions:
    def __init__(self, ui: UiServices, app: EvalServices, open_thread: Callable[[str], Any], refresh_tree: Callable[[], Any],
                 active_thread: Callable[[], str | None]) -> None:
        self.ui, self.app = ui, app
        self.open_thread, self.refresh_tree, self.active_thread = open_thread, refresh_tree, active_thread
        self.evaluations = Evaluations(app.workspace, app.runner)
        self.windows: list[ResultsWindow] = []
        self.sessions: list[EvaluationSession] = []  # the evaluations started here
        self.runs: list[Future[Outcome]] = []  # their runs (tests wait on them)
        self.optimizations: list[tuple[OptimizeSession, OptimizeWindow, Future[Any]]] = []

    def stop_all(self) -> None:
        """Stop every running evaluation (the window is closing); each writes what finished."""
        for session in self.sessions:
            session.stop()
        for optimization, _window, _future in self.optimizations:
            optimization.stop()

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

    def new_evaluation(self, rerun: Rerun | None = None) -> NewEvaluationDialog:
        """The New Evaluation dialog; filled with `rerun`'s form to run an evaluation file again."""
        return NewEvaluationDialog(self.ui, self.app.workspace, self.threads(), self.active_thread(),
                                   self.default_models, lambda form: self.start(form, rerun),
                                   initial=rerun.form if rerun is not None else None,
                                   note=rerun.note if rerun is not None else "")

    def open_eval_file(self) -> NewEvaluationDialog | None:
        """Evaluations › Open Evaluation File…: an evaluation file in the dialog, to run it again."""
        picked = self.ui.dialogs.open_file("Open an evaluation file", EVAL_FILE_TYPES)
        if not picked:
            return None
        try:
            rerun = self.evaluations.open_eval_file(Path(picked))
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(str(exc))
            return None
        return self.new_evaluation(rerun)

    def run_again(self, folder: Path) -> NewEvaluationDialog | None:
        """A results window's "Run again": the dialog filled with the file those results ran,
        saying when the thread or the file changed since (the run takes them as they are now)."""
        try:
            rerun = self.evaluations.again(folder)
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(str(exc))
            return None
        if rerun.note:
            self.ui.status.set(rerun.note)
        return self.new_evaluation(rerun)

    def start(self, form: NewEvalForm, rerun: Rerun | None = None) -> Future[EvaluationSession]:
        """Write the evaluation file (or take `rerun`'s, unchanged), prepare it off the Tk
        thread, then run it into a results window."""
        session = self.evaluations.start(form, rerun)

        def prepare() -> EvaluationSession:
            session.prepare()
            return session

        self.ui.status.set("Preparing the evaluation…")
        return self.ui.pump.run_in_worker(prepare, self._prepared, name="eval-prepare")

    def _prepared(self, future: Future[EvaluationSession], replaces: ResultsWindow | None = None) -> None:
        try:
            session = future.result()
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            if replaces is not None and replaces.winfo_exists() and replaces.resume_run is not None:
                replaces.offer_resume(replaces.resume_run)  # Resume again after fixing what was said
            return
        if replaces is not None and replaces.winfo_exists():
            replaces.destroy()  # the live window of the resumed run takes its place
        thread_rel = session.thread_rel
        window = ResultsWindow(self.ui.root, session.title, session.grid, lambda cell: self.open_case(thread_rel, cell))
        window.grid_view.rebuild()
        self.windows.append(window)
        self.sessions.append(session)
        self.ui.status.set(session.status_line)
        pump = self.ui.pump
        window.running(session.stop)
        folder = session.folder
        window.offer_run_again(lambda: self.run_again(folder))
        window.offer_optimize(lambda: self.optimize_prompt(folder))

        def done(f: Future[Outcome]) -> None:
            try:
                outcome = f.result()
            except UserFacingError as exc:
                self.ui.errors.show(str(exc))
                if window.winfo_exists():
                    window.done("stopped by an error")
                return
            text = session.finished_text(outcome)
            self.ui.status.set(f"Evaluation {session.name} finished: {text}")
            if window.winfo_exists():
                window.done(text)

        self.runs.append(pump.run_in_worker(lambda: session.run(lambda r: pump.post(window.add_record, r)), done,
                                            name="eval-run"))

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
        warning = file_read_warning(new, rel) if cell.shown is not None and cell.shown.conversation is not None else None
        if warning:  # a conversation is someone else's text, as an import is
            self.ui.dialogs.info(f"Check this thread before you run it:\n\n{warning}", "The conversation's thread reads local files")
        return rel

    # -- Open Results… -------------------------------------------------------------------
    def pick_results(self) -> ResultsWindow | None:
        """Evaluations › Open Results…: a results folder (under `$LLM_SPACE_HOME/evals`) in the grid."""
        root = self.evaluations.results_root()
        picked = self.ui.dialogs.choose_folder("Open evaluation results", str(root) if root.is_dir() else "")
        return self.open_results(Path(picked)) if picked else None

    def open_results(self, folder: Path) -> ResultsWindow | None:
        """A finished (or stopped) results folder in a results window; its cases' variables
        come from the dataset named in its summary, when that is still readable."""
        try:
            opened = self.evaluations.open_results(folder)
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(str(exc))
            return None
        thread_rel = opened.thread_rel
        open_case = (lambda cell: self.open_case(thread_rel, cell)) if thread_rel else None
        window = ResultsWindow(self.ui.root, opened.title, opened.grid, open_case)
        window.done(opened.text)
        window.offer_run_again(lambda: self.run_again(folder))
        window.offer_optimize(lambda: self.optimize_prompt(folder))
        if opened.interrupted:
            window.offer_resume(lambda: self.resume(folder, window))
        self.windows.append(window)
        return window

    def resume(self, folder: Path, window: ResultsWindow | None = None) -> Future[EvaluationSession] | None:
        """Resume on an interrupted results folder: its evaluation continues in that folder as
        `eval run` resumes (the finished cells are not asked again), in a live results window
        that replaces `window`."""
        try:
            session = self.evaluations.resume(folder)
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(str(exc))
            return None

        def prepare() -> EvaluationSession:
            session.prepare()
            return session

        self.ui.status.set(f"Resuming the evaluation in {folder}…")
        return self.ui.pump.run_in_worker(prepare, lambda f: self._prepared(f, replaces=window), name="eval-prepare")

    # -- Compare Two Results… ------------------------------------------------------------
    def compare(self) -> CompareWindow:
        return CompareWindow(self.ui, self.evaluations.results_root(), self.evaluations.compare)

    # -- Optimize Prompt… ----------------------------------------------------------------
    def pick_optimize(self) -> OptimizeDialog | None:
        """Evaluations › Optimize Prompt…: an evaluation file, then the dialog."""
        picked = self.ui.dialogs.open_file("Optimize the prompt of an evaluation", EVAL_FILE_TYPES)
        return self.optimize_prompt(Path(picked)) if picked else None

    def optimize_prompt(self, picked: Path) -> OptimizeDialog | None:
        """The Optimize Prompt dialog for an evaluation file or a results folder of one."""
        try:
            session = OptimizeSession(self.app.runner, picked)
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(str(exc))
            return None
        dialog = OptimizeDialog(self.ui.root, session.title, session.form(), lambda form: self._optimize(session, form))

        def offer(f: Future[list[str]]) -> None:
            if f.exception() is None:
                dialog.offer_models(f.result())

        self.ui.pump.run_in_worker(lambda: reflector_models(self.app), offer, name="optimize-models")  # type: ignore[arg-type]
        return dialog

    def _optimize(self, session: OptimizeSession, form: Any) -> OptimizeWindow | None:
        try:
            session.options(form)
            state = OptimizeState(session.original_text())
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(str(exc))
            return None
        window = OptimizeWindow(self.ui.root, session.title, state, self.open_optimized)
        window.running(session.stop)
        pump = self.ui.pump

        def done(f: Future[Any]) -> None:
            try:
                result = f.result()
            except UserFacingError as exc:
                self.ui.errors.show(str(exc))
                window.failed(str(exc))
                return
            window.finish(result)
            self.ui.status.set(f"{session.title}: {state.verdict[0] if state.verdict else state.phase}")
            if result.optimized is not None:
                self.refresh_tree()

        future = pump.run_in_worker(lambda: session.run(form, lambda e: pump.post(window.on_event, e)), done,
                                    name="optimize-run")
        self.optimizations.append((session, window, future))
        self.ui.status.set(f"{session.title}: running")
        return window

    def open_optimized(self, path: Path) -> Any:
        """"Open optimized thread": the thread written beside the evaluated one, in a tab."""
        rel = self.app.workspace.thread_rel(path)
        if rel is None:
            self.ui.errors.show(f"{path} is outside the workspace; open it with File › Import from Files….")
            return None
        self.refresh_tree()
        return self.open_thread(rel)
