"""The Optimize view's logic (no Tk): Evaluations › Optimize Prompt… on an evaluation file or a
results folder of one, the form (reflector, rollouts, budget, minutes), the run, and the live
state the window draws — step, rollouts used, best validation score, cost, time left, the
validation score per step as a small chart, each candidate with its diff against the original,
then the held-out verdict with the McNemar figures and the optimized thread.

    session = OptimizeSession(runner, Path("quiz.eval.yaml"))      # or a results folder (its baseline)
    form = session.form()                                            # defaults: the judge, else the model
    result = session.run(form, on_event)                             # worker thread; engine events arrive
    state.apply(event)                                               # Tk thread (through the pump)
    session.stop()                                                   # any thread: ends as Ctrl-C does

The engine is `optimize/engine.py`; a results folder (of `eval run`) gives its evaluation file and
is the baseline (`--from`), so the original prompt's cells are not asked again. Stop keeps what
finished: the next run of the same settings resumes in that folder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserFacingError
from ..evals.journal import NAME as JOURNAL
from ..evals.journal import read_journal
from ..evals.records import Candidate
from ..evals.spec import load_spec
from ..optimize.engine import Options, Result, optimize
from ..optimize.events import CandidateSeen, Event, Phase, Progress
from ..optimize.results import prompt_diff
from .catalog import model_choices
from .compare_diff import DiffLine, diff_lines
from .history_chart import Axis

if TYPE_CHECKING:
    from ..agent.runner import Runner
    from ..app import App

PERCENT_AXIS = Axis(0.0, 1.0, (0.0, 0.25, 0.5, 0.75, 1.0), ("0%", "25%", "50%", "75%", "100%"))
STATUS_MARK = {"validated": "✓ validated", "lost": "✗ lost on its minibatch", "rejected": "⊘ rejected"}


@dataclass
class OptimizeForm:
    reflector: str  # "provider/model"
    rollouts: str = "150"
    budget: str = ""  # USD, empty: no limit
    max_minutes: str = ""  # empty: no limit

    def problems(self) -> list[str]:
        out = []
        provider, _, model = self.reflector.strip().partition("/")
        if not provider or not model:
            out.append("Reflector: give a model as provider/model (e.g. ollama/qwen3).")
        for label, text, whole in (("Rollouts", self.rollouts, True), ("Budget", self.budget, False),
                                   ("Max minutes", self.max_minutes, False)):
            if not text.strip() and not whole:
                continue
            try:
                value = int(text) if whole else float(text)
            except ValueError:
                out.append(f"{label}: {text!r} is not a {'whole ' if whole else ''}number.")
                continue
            if value <= 0:
                out.append(f"{label} must be more than 0.")
        return out


@dataclass(frozen=True)
class CandidateRow:
    id: str
    step: int
    parent: str | None
    status: str
    text: str
    reason: str | None
    validation: float | None

    @property
    def status_text(self) -> str:
        return STATUS_MARK.get(self.status, self.status)

    @property
    def label(self) -> str:
        score = "" if self.validation is None else f" · validation {self.validation:.0%}"
        why = f" ({self.reason})" if self.reason else ""
        return f"step {self.step} · {self.id} from {self.parent or '—'} · {self.status_text}{score}{why}"


@dataclass(frozen=True)
class ChartPoint:
    step: int
    value: float
    text: str


@dataclass
class OptimizeState:
    """What the window shows, updated by the engine's events (`apply`) and the result (`finish`)."""

    original: str  # the prompt being rewritten
    phase: str = "Starting…"
    step: int = 0
    rollouts_used: int = 0
    rollout_limit: int = 0
    best_validation: float | None = None
    original_validation: float | None = None
    spent: float = 0.0
    seconds_left: float | None = None
    candidates: list[CandidateRow] = field(default_factory=list)
    verdict: list[str] = field(default_factory=list)  # the verdict's lines, once it is known
    promoted: bool = False
    optimized: Path | None = None
    folder: Path | None = None
    finished: bool = False

    def apply(self, event: Event) -> None:
        if isinstance(event, Phase):
            self.phase = event.text
            if event.original_validation is not None:
                self.original_validation = event.original_validation
        elif isinstance(event, Progress):
            self.step, self.rollouts_used, self.rollout_limit = event.step, event.rollouts_used, event.rollout_limit
            self.best_validation, self.spent, self.seconds_left = event.best_validation, event.spent, event.seconds_left
        elif isinstance(event, CandidateSeen):
            self._candidate(event.candidate)

    def _candidate(self, c: Candidate) -> None:
        row = CandidateRow(c.id, c.step, c.parent, c.status, c.text, c.reason, c.validation)
        self.candidates = [r for r in self.candidates if r.id != row.id] + [row]
        self.candidates.sort(key=lambda r: r.step)

    def progress_line(self) -> str:
        best = "–" if self.best_validation is None else f"{self.best_validation:.0%}"
        left = "" if self.seconds_left is None else f" · {self.seconds_left / 60:.1f} min left"
        limit = f"/{self.rollout_limit}" if self.rollout_limit else ""
        return f"step {self.step} · rollouts {self.rollouts_used}{limit} · best validation {best} · ${self.spent:.4f}{left}"

    def chart(self) -> tuple[list[ChartPoint], list[ChartPoint]]:
        """The validation score per step: each validated candidate's, and the best so far
        (starting from the original's at step 0)."""
        points = [ChartPoint(r.step, r.validation, f"{r.id} (step {r.step}): {r.validation:.0%}")
                  for r in self.candidates if r.status == "validated" and r.validation is not None]
        best: list[ChartPoint] = []
        top = self.original_validation
        if top is not None:
            best.append(ChartPoint(0, top, f"the original: {top:.0%}"))
        for p in points:
            if top is None or p.value > top:
                top = p.value
                best.append(ChartPoint(p.step, top, f"best after step {p.step}: {top:.0%}"))
        last = max([self.step, *(p.step for p in points)])
        if best and last > best[-1].step:
            best.append(ChartPoint(last, best[-1].value, f"best at step {last}: {best[-1].value:.0%}"))
        return points, best

    def diff(self, cid: str) -> list[DiffLine]:
        """The candidate's prompt against the original, as the compare dialog's styled diff lines."""
        row = next((r for r in self.candidates if r.id == cid), None)
        if row is None:
            return []
        text = prompt_diff(self.original, row.text, "prompt")
        return diff_lines(text) if text else [DiffLine("(the same text as the original)", "plain", 0)]

    def finish(self, result: Result) -> None:
        self.finished = True
        self.folder = result.folder
        self.optimized = result.optimized
        if result.interrupted:
            self.phase = "Stopped: what finished is kept; optimizing again with the same settings resumes it."
            self.verdict = [self.phase, f"Results: {result.folder}"]
            return
        v = result.verdict
        self.phase = "Finished."
        if v is None:
            reason = str((result.summary.get("verdict") or {}).get("reason") or "no significant improvement")
            self.verdict = [reason[:1].upper() + reason[1:] + "."]
        else:
            self.promoted = v.promoted
            self.verdict = [
                "Promoted: a significant improvement on the held-out cases." if v.promoted
                else f"Not promoted: {v.reason}; the best candidate is kept for you to read.",
                f"Held-out: original {v.passed_original}/{v.pairs}, candidate {v.passed_candidate}/{v.pairs} "
                f"(pass→fail {v.worse}, fail→pass {v.better}); exact McNemar p = {v.p:.4g}"
                + (f"; judge scores {v.judge.mean:+.2f} (p = {v.judge.p:.3g})" if v.judge is not None else ""),
                *v.warnings]
        if result.optimized is not None:
            self.verdict.append(f"Optimized thread: {result.optimized}")
        self.verdict.append(f"Results: {result.folder}")


def reflector_models(app: App) -> list[str]:
    """The models that can run now, as provider/model, for the reflector's list."""
    choices, _why = model_choices(app)
    return [f"{c.provider}/{c.model_id}" for c in choices if c.available]


def source_of(path: Path) -> tuple[Path, Path | None]:
    """(the evaluation file, the results folder whose cells are the baseline) of what the user
    picked: an evaluation file, or a results folder of `eval run` (its journal names the file)."""
    if path.is_file():
        return path, None
    header = read_journal(path / JOURNAL).header if (path / JOURNAL).is_file() else None
    if header is None or not header.eval_file:
        raise UserFacingError(f"{path} is neither an evaluation file nor a results folder of one.",
                              hint="Pick a .eval.yaml file, or a folder under Evaluations › Open Results….")
    eval_file = Path(header.eval_file)
    if not eval_file.is_file():
        raise UserFacingError(f"The evaluation file {eval_file} of these results is gone.",
                              hint="Optimize from an evaluation file instead.")
    return eval_file, path


class OptimizeSession:
    def __init__(self, runner: Runner, picked: Path) -> None:
        self.runner = runner
        self.eval_file, self.baseline = source_of(picked)
        self.spec = load_spec(self.eval_file)
        self._stop = threading.Event()

    @property
    def title(self) -> str:
        return f"Optimize {self.spec.name}" + (f" · from {self.baseline.name}" if self.baseline is not None else "")

    def form(self) -> OptimizeForm:
        model = self.spec.judge or self.spec.models[0]
        return OptimizeForm("/".join(model))

    def options(self, form: OptimizeForm) -> Options:
        problems = form.problems()
        if problems:
            raise UserFacingError(problems[0])
        provider, _, model = form.reflector.strip().partition("/")
        return Options(self.eval_file, reflector=(provider, model), rollouts=int(form.rollouts),
                       budget=float(form.budget) if form.budget.strip() else None,
                       max_minutes=float(form.max_minutes) if form.max_minutes.strip() else None,
                       baseline=self.baseline)

    def original_text(self) -> str:
        """The prompt the search rewrites (the thread's system prompt)."""
        from ..evals.run import resolve_thread
        from ..optimize.candidates import field_text

        return field_text(self.runner.services.workspace.open(resolve_thread(self.runner, self.spec)), "system")

    def run(self, form: OptimizeForm, on_event: Callable[[Event], None]) -> Result:
        """Optimize (on a worker thread); every engine event goes to `on_event` as it happens."""
        return optimize(self.runner, self.options(form), on_event=on_event, stop=self._stop)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

