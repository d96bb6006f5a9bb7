"""The search for a better prompt: GEPA's reflective prompt evolution (arXiv 2507.19457), kept small.

    search = Search(runs, split, original, reflect, journal, prior, limits, seed)
    candidates = search.run()                    # every validated candidate, the original first

Each step picks a parent among the validated candidates by GEPA's per-case Pareto rule (a
candidate is drawn with weight = the validation cases on which it is among the best), takes a
minibatch of training cases (the parent's known failures first, then cases it has not run),
runs the parent on those it has not run, shows the reflector the ones it failed, checks the
rewritten prompt (`candidates.check_candidate`; the parent handed back unchanged is rejected
too), runs it on the minibatch and, when it passes
more of it than the parent, on the validation part. Randomness is seeded per step, and every
reflector answer is journaled (`Reflection`) before its candidate runs, so a second run after
kill -9 replays the same steps from the journals and requests nothing journaled again.

It stops when the rollouts (cells on training and validation cases) would run out, the
budget is spent, the time is up (`deadline`), `stop` is set, the parent passes every
training case it is shown three steps running, or five rewrites in a row were rejected (they
run no cells, so nothing else would bound the reflector calls they take).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..evals.journal import JournalWriter
from ..evals.records import Candidate, OptimizeRecord, Reflection
from .candidates import DEFAULT_CAP, check_candidate, extract_prompt
from .cells import CandidateRuns, RunResult, case_of
from .reflector import Failure
from .split import Split

MINIBATCH = 4
IDLE_STEPS = 3
REJECTED_IN_A_ROW = 5  # rejected rewrites cost no cells: this bounds the reflector calls they take


@dataclass
class Limits:
    rollouts: int = 150
    budget: float | None = None
    deadline: float | None = None  # time.monotonic() value
    minibatch: int = MINIBATCH
    cap: float = DEFAULT_CAP


@dataclass
class Cand:
    id: str
    text: str
    parent: str | None
    step: int
    outcomes: dict[str, bool] = field(default_factory=dict)  # case -> passed
    failures: dict[str, Failure] = field(default_factory=dict)

    def score(self, cases: tuple[str, ...]) -> float:
        return sum(self.outcomes.get(c, False) for c in cases) / len(cases) if cases else 0.0


Reflect = Callable[[int, Cand, list[Failure]], Reflection | None]


class Stopped(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Search:
    def __init__(self, runs: CandidateRuns, split: Split, original: Cand, reflect: Reflect, journal: JournalWriter,
                 prior: list[OptimizeRecord], limits: Limits, seed: int, *, spent: float = 0.0,
                 per_case: int = 1, stop: threading.Event | None = None,
                 on_progress: Callable[[Search], None] | None = None, free: set[str] | None = None,
                 on_candidate: Callable[[Candidate], None] | None = None) -> None:
        self.runs, self.split, self.reflect, self.journal = runs, split, reflect, journal
        self.limits, self.seed, self.per_case = limits, seed, per_case
        self.stop = stop
        self.on_progress = on_progress
        self.on_candidate = on_candidate  # every candidate's fate, replayed steps of a resumed run too
        self.spent = spent
        self.step = 0
        self.original = original
        self.validated: list[Cand] = [original]
        self.reflections = {r.step: r for r in prior if isinstance(r, Reflection)}
        self.journaled = {r.step for r in prior if isinstance(r, Candidate)}
        self.stopped_because = ""
        self.interrupted = False
        self.reflector_calls = 0
        self._rejected_in_a_row = 0
        self._parts = set(split.train) | set(split.validation)
        self._free = free or set()  # cell keys of the original's that came from --from (not rollouts)
        self.rollouts_used = sum(self._cells_in_parts(c) for c in self._folders())

    # -- bookkeeping ---------------------------------------------------------------------------

    def _folders(self) -> list[str]:
        base = self.runs.folder
        return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []

    def _cells_in_parts(self, cid: str) -> int:
        return sum(case_of(r.key) in self._parts and not (cid == "c0" and r.key in self._free) for r in self.runs.journaled(cid))

    @property
    def best(self) -> Cand | None:
        """The best validated candidate other than the original (earliest on ties)."""
        others = [c for c in self.validated if c is not self.original]
        return max(others, key=lambda c: (c.score(self.split.validation), -c.step)) if others else None

    def _check_limits(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise Stopped("stopped")
        if self.limits.deadline is not None and time.monotonic() >= self.limits.deadline:
            raise Stopped("the time limit (--max-minutes) was reached")
        if self.limits.budget is not None and self.spent >= self.limits.budget:
            raise Stopped("the budget was spent")

    def _run(self, cand: Cand, cases: list[str] | tuple[str, ...]) -> RunResult:
        wanted = [c for c in cases if c not in cand.outcomes]
        if not wanted:
            return RunResult({}, 0, 0.0, False, False)
        need = len(wanted) * self.per_case
        if self.rollouts_used + need > self.limits.rollouts:
            raise Stopped(f"the rollouts ({self.limits.rollouts}) were used up")
        self._check_limits()
        budget = None if self.limits.budget is None else self.limits.budget - self.spent
        result = self.runs.run(cand.id, cand.text, set(wanted), budget=budget, stop=self.stop)
        self.spent += result.spent
        self.rollouts_used += result.new_cells
        for case, r in result.cases.items():
            cand.outcomes[case] = r.status == "pass"
            if r.status != "pass":
                cand.failures[case] = Failure(case, {}, r.output or r.error or "", r.failed or ((r.error,) if r.error else ()))
        if self.on_progress is not None:
            self.on_progress(self)
        if result.interrupted:
            if self.stop is not None and self.stop.is_set():
                raise Stopped("stopped")
            self.interrupted = True
            raise Stopped("interrupted")
        if result.stopped_for_budget or any(c not in result.cases for c in wanted):
            raise Stopped("the budget was spent")
        return result

    # -- the steps -----------------------------------------------------------------------------

    def _parent(self, step: int) -> Cand:
        rng = random.Random(f"{self.seed}-parent-{step}")
        weights = {c.id: 0 for c in self.validated}
        for case in self.split.validation:
            top = max(c.outcomes.get(case, False) for c in self.validated)
            for c in self.validated:
                if c.outcomes.get(case, False) == top:
                    weights[c.id] += 1
        pool = [c for c in self.validated if weights[c.id] > 0] or self.validated
        return rng.choices(pool, weights=[max(1, weights[c.id]) for c in pool])[0]

    def _minibatch(self, parent: Cand, step: int) -> list[str]:
        rng = random.Random(f"{self.seed}-minibatch-{step}")
        failing = [c for c in self.split.train if parent.outcomes.get(c) is False]
        unknown = [c for c in self.split.train if c not in parent.outcomes]
        rng.shuffle(failing)
        rng.shuffle(unknown)
        return (failing + unknown)[: self.limits.minibatch]

    def _record(self, cand: Candidate) -> None:
        if self.on_candidate is not None:
            self.on_candidate(cand)
        if cand.step not in self.journaled:
            self.journal.append(cand)
            self.journaled.add(cand.step)

    def run(self) -> list[Cand]:
        idle = 0
        try:
            while True:
                self.step += 1
                self._check_limits()
                step = self.step
                parent = self._parent(step)
                batch = self._minibatch(parent, step)
                if not batch:
                    raise Stopped("the prompt passes every training case")
                self._run(parent, batch)
                failed = [parent.failures[c] for c in batch if parent.outcomes.get(c) is False]
                if not failed:
                    idle += 1
                    if idle >= IDLE_STEPS:
                        raise Stopped("the prompt passed every training case it was shown")
                    continue
                idle = 0
                self._step(step, parent, batch, failed)
        except Stopped as stop:
            self.stopped_because = stop.why
        return self.validated

    def _step(self, step: int, parent: Cand, batch: list[str], failed: list[Failure]) -> None:
        reflection = self.reflections.get(step)
        if reflection is None:
            self._check_limits()
            reflection = self.reflect(step, parent, failed)
            if reflection is None:
                self.interrupted = True
                raise Stopped("interrupted")
            self.reflector_calls += 1
            self.spent += reflection.cost
            self.journal.append(reflection)
            self.reflections[step] = reflection
        text = extract_prompt(reflection.raw)
        problem = reflection.error or check_candidate(self.original.text, text, self.limits.cap)
        if problem is None and text.strip() == parent.text.strip():
            problem = "it is its parent unchanged"  # it could only win by noise: not worth a cell
        if problem is not None:
            self._record(Candidate(f"c{step}", step, parent.id, text, "rejected", problem))
            self._rejected_in_a_row += 1
            if self._rejected_in_a_row >= REJECTED_IN_A_ROW:
                raise Stopped(f"the reflector's last {REJECTED_IN_A_ROW} rewrites were all rejected")
            return
        self._rejected_in_a_row = 0
        cand = Cand(f"c{step}", text, parent.id, step)
        self._run(cand, batch)
        mine, theirs = cand.score(tuple(batch)), parent.score(tuple(batch))
        if mine <= theirs:
            self._record(Candidate(cand.id, step, parent.id, text, "lost", None, mine, theirs))
            return
        self._run(cand, self.split.validation)
        self.validated.append(cand)
        self._record(Candidate(cand.id, step, parent.id, text, "validated", None, mine, theirs,
                               cand.score(self.split.validation)))
