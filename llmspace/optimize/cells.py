"""A candidate prompt's cells on some cases, run through the evaluation machinery.

    runs = CandidateRuns(prepared, folder, field, use_cache=True)
    result = runs.run("c3", text, {"case-1", "case-7"}, budget=0.5, stop=event)
    result.cases["case-1"].status            # pass / fail / error (compare.py's CaseResult)

Each candidate has its own evaluation results folder `runs/<id>/` under the optimization's
folder: its `journal.jsonl` (evals/journal.py) takes every cell the candidate ran, on whatever
cases were asked for so far, and `evals/run.py::run_cells` runs only the cells not journaled
there, so a second run after kill -9 requests none of them again; answers go through the
response cache `eval run` uses. The thread is copied with the candidate's text in the
rewritten field; the thread file is never touched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..evals.compare import CaseResult, read_results
from ..evals.journal import NAME as JOURNAL
from ..evals.journal import VERSION, JournalWriter, read_journal
from ..evals.plan import Cell, Plan, build_plan
from ..evals.prepared import Prepared
from ..evals.records import CellRecord, Header
from ..evals.run import run_cells
from .candidates import with_field


def case_of(key: str) -> str:
    return key.rsplit("|", 3)[0]


@dataclass
class RunResult:
    cases: dict[str, CaseResult]  # the asked-for cases that have a result
    new_cells: int  # cells journaled by this call
    spent: float
    interrupted: bool
    stopped_for_budget: bool


def _subset(plan: Plan, cases: set[str]) -> Plan:
    def stream(wanted: Callable[[str], bool] | None, rendered: bool) -> Iterator[Cell]:
        def keep(key: str) -> bool:
            return case_of(key) in cases and (wanted is None or wanted(key))
        return plan.iter_cells(keep, render=rendered)

    ids = [c for c in plan.case_ids if c in cases]
    return Plan(None, ids, plan.models, plan.variants, plan.repeat, plan.has_judge, case_count=len(ids), stream=stream)


class CandidateRuns:
    def __init__(self, base: Prepared, folder: Path, field: str, *, use_cache: bool = True) -> None:
        self.base = base
        self.folder = folder
        self.field = field
        self.use_cache = use_cache
        self._plans: dict[str, tuple[str, Prepared]] = {}

    def _prepared(self, cid: str, text: str, cases: set[str]) -> Prepared:
        known = self._plans.get(cid)
        if known is None or known[0] != text:
            thread = with_field(self.base.thread, self.field, text)
            plan = build_plan(self.base.spec, self.base.dataset, thread, self.base.runner.services.skills)
            known = (text, Prepared(self.base.spec, self.base.thread_rel, thread, self.base.dataset, plan,
                                    self.base.targets, self.base.hashes, self.base.runner))
            self._plans[cid] = known
        p = known[1]
        return Prepared(p.spec, p.thread_rel, p.thread, p.dataset, _subset(p.plan, cases), p.targets, p.hashes, p.runner)

    def journaled(self, cid: str) -> list[CellRecord]:
        read = read_journal(self.folder / cid / JOURNAL)
        return [r for r in read.records if isinstance(r, CellRecord)]

    def run(self, cid: str, text: str, cases: set[str], *, budget: float | None = None,
            stop: threading.Event | None = None) -> RunResult:
        folder = self.folder / cid
        folder.mkdir(parents=True, exist_ok=True)
        read = read_journal(folder / JOURNAL)
        if read.header is None:
            b = self.base
            writer = JournalWriter(folder / JOURNAL)
            writer.append(Header(VERSION, f"{b.spec.name} {cid}", str(b.spec.path), b.thread_rel, str(b.dataset.path),
                                 b.hashes, int(time.time() * 1000)))
            writer.close()
            read = read_journal(folder / JOURNAL)
        records = read.records[1:]
        before = sum(isinstance(r, CellRecord) for r in records)
        p = self._prepared(cid, text, cases)
        outcome = run_cells(p, folder, records, concurrency=p.spec.concurrency, budget=budget,
                            use_cache=self.use_cache, stop=stop)
        after = len(self.journaled(cid))
        results = read_results(folder)
        by_case: dict[str, list[CaseResult]] = {}
        for (case, _model, _variant), r in results.cases.items():
            by_case.setdefault(case, []).append(r)
        cases_out = {c: _fold(rs) for c, rs in by_case.items() if c in cases and all(r.status != "pending" for r in rs)}
        return RunResult(cases_out, after - before, outcome.spent, outcome.interrupted, outcome.stopped_for_budget)


def _fold(rs: list[CaseResult]) -> CaseResult:
    """One case over the file's variants: its first failing (else first) result."""
    return next((r for r in rs if r.status != "pass"), rs[0])
