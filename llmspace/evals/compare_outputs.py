"""promptfoo's `select-best` and `max-score`: assertions over every output of one case, checked
in one pass over the case's cells once they are all journaled.

    run_compare(plan, ctx, records, emit, stop)   # emit(record) journals a verdict (evals/run.py's driver)

The pass runs in the driver process after the executor's cells (with `executor: ray` too: the
judge is called from the driver). A case's outputs are its cells of one repeat across models ×
variants (promptfoo's columns, prompts × providers), in plan order, numbered from 0.

- `select-best` (value: the criteria): the judge (the assertion's own `provider`, else the
  evaluation's) is shown the criteria and the outputs and answers the index of the one that
  fits best (the first integer of its answer, as promptfoo reads it); that output passes with
  score 1, the others fail with 0. One call per case and repeat, through the response cache.
- `max-score` (value: `{method: average|sum, weights: {type: n}, threshold: n}`): each
  output's score aggregates its other assertions (select-best and max-score left out), each
  check's score on 0–1 (a pass 1, a fail 0, a judge's score as it is; an llmspace llm-rubric's
  1–5 mean as (mean − 1) / 4) times the weight of its type (default 1; promptfoo's `latency`
  and `cost` name max-latency and max-cost), averaged or summed; the highest passes (a tie:
  the first), unless it is below `threshold`. No call.

Each verdict is a `JudgeRecord` on each cell (the assertion's index, its check, its score under
the type's name), keyed by the cell, the judge and the hash of what was compared, so a resumed
run neither asks again nor recomputes; the call's prompt, usage and cost are on the first
cell's record only. A cell whose call or judge failed takes no part; with fewer than two
outputs left, the others' records hold that error. A case whose cells are not all journaled
(a budget stop, Ctrl-C) waits for the run that finishes them: its cells stay pending.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, assert_never

from .assertions import COMPARE, JUDGED, Assertion, Check
from .judge import JUDGE_REPEAT, judge_key, prompt_hash
from .records import CellRecord, End, Header, JournalRecord, JudgeRecord, TurnRecord

if TYPE_CHECKING:
    from .cell import ExecContext
    from .plan import Cell, Plan

Emit = Callable[[JudgeRecord], None]
SYSTEM = ("You compare several answers to the same task and pick the one that best fits the given criteria. "
          "Reply with the index of that answer only: a single integer.")
MAX_SCORE = "max-score"  # the judge_model of max-score's records (no model is called)
ALIASES = {"max-latency": "latency", "max-cost": "cost"}  # promptfoo's names of these types, as weights may give them
_INTEGER = re.compile(r"\d+")


def select_best_prompt(criteria: str, outputs: list[str]) -> str:
    parts = [f"Criteria: {criteria.strip()}", "The answers, numbered from 0:"]
    parts += [f'<answer index="{i}">\n{o.strip() or "(empty)"}\n</answer>' for i, o in enumerate(outputs)]
    parts.append(f"Which answer best fits the criteria? Reply with its index (0 to {len(outputs) - 1}) and nothing else.")
    return "\n\n".join(parts)


def read_verdict(answer: str, count: int) -> int:
    """The index the judge chose (the first integer of its answer); ValueError when none is in range."""
    m = _INTEGER.search(answer)
    if m is None:
        raise ValueError(f"it names no index ({answer.strip()[:80]!r})")
    index = int(m.group(0))
    if index >= count:
        raise ValueError(f"it chose {index}, and the outputs are numbered 0 to {count - 1}")
    return index


def type_name(a: Assertion) -> str:
    """The type as the file wrote it (what max-score's weights name)."""
    return ("not-" if a.negate else "") + (a.grader or a.type)


def check_score(a: Assertion, c: Check) -> float:
    """One check's score on 0–1, as max-score adds it up."""
    if c.score is None or a.negate:
        return 1.0 if c.passed else 0.0
    if a.type == JUDGED and a.grader is None and a.rubric_prompt is None:  # llmspace's judge: a mean from 1 to 5
        return max(0.0, min(1.0, (c.score - 1) / 4))
    return float(c.score) if 0 <= c.score <= 1 else (1.0 if c.passed else 0.0)


def max_score_picks(value: dict[str, Any] | None, scored: list[list[tuple[str, float]]]) -> list[tuple[bool, float, str]]:
    """(passes, aggregate score, reason) of each output, given the (type, score) of its other checks."""
    options = value or {}
    weights: dict[str, float] = options.get("weights", {})

    def weight_of(kind: str) -> float:
        return weights.get(kind, weights.get(ALIASES.get(kind, kind), 1.0))

    totals = []
    for checks in scored:
        total = sum(s * weight_of(t) for t, s in checks)
        weight = sum(weight_of(t) for t, _ in checks)
        totals.append(total if options.get("method") == "sum" else (total / weight if weight > 0 else 0.0))
    best = max(range(len(totals)), key=lambda i: (totals[i], -i))  # a tie: the first
    top, threshold = totals[best], options.get("threshold")
    met = threshold is None or top >= threshold - 1e-12
    picks = []
    for i, total in enumerate(totals):
        if i == best and met:
            picks.append((True, total, f"selected as the highest-scoring output (score {total:.3f})"))
        elif i == best:
            picks.append((False, total, f"not selected: the highest score, {total:.3f}, is below the threshold {threshold:g}"))
        else:
            picks.append((False, total, f"not selected (score {total:.3f}, highest {top:.3f})"))
    return picks


def _by_repeat(cells: list[Cell]) -> Iterator[list[Cell]]:
    groups: dict[int, list[Cell]] = defaultdict(list)
    for c in cells:
        groups[c.repeat].append(c)
    yield from groups.values()


class _Pass:
    """The journaled records, and the verdicts of one run's pass."""

    def __init__(self, ctx: ExecContext, records: list[JournalRecord], emit: Emit) -> None:
        self.ctx, self.emit = ctx, emit
        self.cells: dict[str, CellRecord] = {}
        self.judges: dict[str, dict[int, JudgeRecord]] = defaultdict(dict)
        self.done: dict[str, JudgeRecord] = {}
        for r in records:
            match r:
                case CellRecord():
                    self.cells[r.key] = r
                case JudgeRecord():
                    self.judges[r.cell][r.assertion] = r
                    self.done[r.key] = r
                case Header() | End() | TurnRecord():
                    pass
                case _:
                    assert_never(r)

    def verdicts(self, cells: list[Cell], index: int, a: Assertion, model: str, phash: str,
                 outcome: Callable[[int], tuple[Check | None, dict[str, float] | None, str | None]],
                 first: dict[str, Any] | None = None) -> None:
        """Journal each cell's verdict not journaled yet; `first` (the call's prompt, answer, usage, cost) goes on the first."""
        for i, cell in enumerate(cells):
            key = judge_key(cell.key, model, phash)
            if key in self.done:
                continue
            check, scores, error = outcome(i)
            call = first if i == 0 and first is not None else {}
            rec = JudgeRecord(key, cell.key, index, model, phash, JUDGE_REPEAT, call.get("prompt", ""), call.get("raw", ""),
                              call.get("usage"), call.get("cost", 0.0), bool(call.get("cached")), call.get("latency"),
                              int(time.time() * 1000), error, scores, check.reason if check is not None else None, check)
            self.done[key] = rec
            self.emit(rec)

    def too_few(self, cells: list[Cell], index: int, a: Assertion, model: str, total: int) -> None:
        why = (f"{a.type} needs at least two outputs of this case to compare; {len(cells)} of its {total} cells gave one "
               "(the others failed)")
        self.verdicts(cells, index, a, model, "too-few", lambda _i: (None, None, why))

    def select_best(self, group: list[Cell], index: int, a: Assertion) -> bool:
        """False when the run was stopped during the call."""
        assert self.ctx.judge is not None
        model = self.ctx.judge.model_for(a)
        cells = [c for c in group if self.cells[c.key].error is None]
        if len(cells) < 2:
            self.too_few(cells, index, a, model, len(group))
            return True
        prompt = select_best_prompt(str(a.value), [self.cells[c.key].reply.output for c in cells])
        phash = prompt_hash(SYSTEM, prompt)
        keys = [judge_key(c.key, model, phash) for c in cells]
        if all(k in self.done for k in keys):
            return True
        prior = next((self.done[k] for k in keys if k in self.done), None)  # a run stopped halfway through the records
        first: dict[str, Any] | None = None
        if prior is not None:
            raw, failed = prior.raw, None
        else:
            from .cell import call_model

            data = {"system": SYSTEM, "messages": [{"role": "user", "text": prompt}], "tools": [], "params": None}
            reply = call_model(self.ctx.targets[model], data, JUDGE_REPEAT, self.ctx)
            if reply is None:
                return False
            raw, failed = reply.output, (f"judge call failed: {reply.error}" if reply.error else None)
            first = {"prompt": prompt, "raw": raw, "usage": reply.usage, "cost": reply.cost, "cached": reply.cached,
                     "latency": reply.latency_ms}
        try:
            chosen = read_verdict(raw, len(cells)) if failed is None else -1
        except ValueError as exc:
            failed = f"the judge's answer could not be read ({exc})"

        def outcome(i: int) -> tuple[Check | None, dict[str, float] | None, str | None]:
            if failed is not None:
                return None, None, failed
            won = i == chosen
            reason = f"{'selected' if won else 'not selected'} as the best of {len(cells)} outputs: {a.value}"
            return Check(a.label, won, a.weight, reason, 1.0 if won else 0.0), {a.type: 1.0 if won else 0.0}, None

        self.verdicts(cells, index, a, model, phash, outcome, first)
        return True

    def max_score(self, group: list[Cell], index: int, a: Assertion) -> None:
        others = [(i, x) for i, x in enumerate(group[0].assertions) if x.type not in COMPARE]
        cells, scored = [], []
        for cell in group:
            record = self.cells[cell.key]
            if record.error is not None:
                continue
            own = iter(record.checks)  # the checks of the assertions not judged, in order
            scores: list[tuple[str, float]] = []
            for i, x in others:
                if x.type != JUDGED:
                    check = next(own, None)
                else:
                    judged = self.judges[cell.key].get(i)
                    if judged is None:
                        return  # a judge of the case has not answered yet: the run that finishes it compares
                    check = judged.check if judged.error is None else None
                if check is None:
                    break
                scores.append((type_name(x), check_score(x, check)))
            else:
                cells.append(cell)
                scored.append(scores)
        if len(cells) < 2:
            self.too_few(cells, index, a, MAX_SCORE, len(group))
            return
        phash = hashlib.sha256(json.dumps([a.value, scored], sort_keys=True).encode()).hexdigest()[:16]
        if not others:
            why = "max-score needs another assertion in the case (besides select-best and max-score) to add up its scores"
            self.verdicts(cells, index, a, MAX_SCORE, phash, lambda _i: (None, None, why))
            return
        picks = max_score_picks(a.value, scored)
        self.verdicts(cells, index, a, MAX_SCORE, phash, lambda i: (
            Check(a.label, picks[i][0], a.weight, picks[i][2], 1.0 if picks[i][0] else 0.0), {a.type: round(picks[i][1], 4)}, None))


def run_compare(plan: Plan, ctx: ExecContext, records: list[JournalRecord], emit: Emit,
                stop: threading.Event | None = None) -> None:
    """Check the select-best and max-score assertions of every case whose cells are all journaled and whose
    verdicts are not; raises KeyboardInterrupt when `stop` is set (the app's Stop, as in the driver's loop)."""
    state = _Pass(ctx, records, emit)
    columns = len(plan.models) * len(plan.variants)
    for group in _groups(plan, state.cells):
        if len(group) < columns:
            continue
        for index, a in enumerate(group[0].assertions):
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            if ctx.cancel.cancelled:
                return
            if a.type == "select-best" and not state.select_best(group, index, a):
                return
            if a.type == MAX_SCORE:
                state.max_score(group, index, a)


def _groups(plan: Plan, done: dict[str, CellRecord]) -> Iterator[list[Cell]]:
    """The journaled cells with a select-best or max-score, by case and repeat (the dataset read once, in order)."""
    current: list[Cell] = []
    for cell in plan.iter_cells(lambda key: key in done, render=False):
        if current and cell.case_id != current[0].case_id:
            yield from _by_repeat(current)
            current = []
        if any(a.type in COMPARE for a in cell.assertions):
            current.append(cell)
    yield from _by_repeat(current)
