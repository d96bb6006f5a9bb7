"""Run verdicts: the verdicts and rubric scores a user gives two runs of a thread side by side,
and the rubrics they are scored on, stored in the thread JSON under the original app's keys
`evaluations` and `evaluationRubrics` (hence "evaluation" in the function names). Not to be
confused with the assertions of `evals/assertions.py` or the dataset evaluations of `evals/`.

Rubrics: `create_rubric`, `update_rubric` (unchanged input → no revision bump; otherwise
revision + 1 and `updatedAt`), `delete_rubric`, `find_rubric`. 2–6 ordered criteria, names
≤ 80 characters and unique case-insensitively, descriptions ≤ 240, at most 20 rubrics (a 21st
is refused, as the original refuses it).

Verdicts (an `evaluations` record each): `save_evaluation` keeps one record per unordered run pair (a reversed pair
updates the existing record, keeping id and createdAt); verdict leftBetter / rightBetter / tie /
pass / fail; note trimmed (empty → absent); with a rubric, a complete 1–5 score grid is
required and stored canonically as [left run, right run] × criteria order, next to an immutable
snapshot of the rubric; at most 50 evaluations (oldest dropped). `averages` gives the mean per
run and the B − A delta. `normalize_evaluations` applies the load rules (ported in
llmspace/core/run_verdict_records.py, which also holds the record bounds).

Dialog helpers (`switch_rubric`, `draft_averages`, `removal_needs_confirmation`) follow the
original compare dialog. The record rules for raw JSON that does not validate are
`run_verdict_records.sanitize_records` (`Workspace.open_repaired`). Mutates the given Thread in place; no I/O, no model call.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UserFacingError
from .history import find_run, run_ids, unset
from .model import Criterion, CriterionScore, Evaluation, Rubric, RubricSnapshot, RunScores, Thread
from .run_verdict_records import (
    DESCRIPTION_MAX,
    MAX_CRITERIA,
    MAX_EVALUATIONS,
    MAX_RUBRICS,
    MAX_SAFE_INTEGER,
    MIN_CRITERIA,
    NAME_MAX,
    VERDICTS,
    normalize_records,
)

_FLIP = {"leftBetter": "rightBetter", "rightBetter": "leftBetter"}


def _now() -> int:
    return int(time.time() * 1000)


def _short_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# -- rubrics ---------------------------------------------------------------------------------


@dataclass
class CriterionInput:
    """One criterion as the user typed it (id given when editing an existing criterion)."""

    name: str
    description: str | None = None
    id: str | None = None


def _clean_name(name: Any, what: str) -> str:
    text = name.strip() if isinstance(name, str) else ""
    if not text:
        raise UserFacingError(f"The {what} needs a name.", hint="Type a name.")
    if len(text) > NAME_MAX:
        raise UserFacingError(f"The {what} name {text[:20]!r}… is {len(text)} characters; the limit is {NAME_MAX}.",
                              hint="Shorten the name.")
    return text


def _clean_criteria(items: Sequence[CriterionInput | Mapping[str, Any]], old: Sequence[Criterion] = ()) -> list[Criterion]:
    """Validated criteria nodes (ids kept, new ones given fresh ids; old ids reused by name)."""
    if not MIN_CRITERIA <= len(items) <= MAX_CRITERIA:
        raise UserFacingError(f"A rubric needs {MIN_CRITERIA} to {MAX_CRITERIA} criteria; {len(items)} given.",
                              hint="Add or remove criteria.")
    by_name = {c.name.casefold(): c.id for c in old}
    out: list[Criterion] = []
    names: set[str] = set()
    ids: set[str] = set()
    for raw in items:
        item = raw if isinstance(raw, CriterionInput) else CriterionInput(
            name=raw.get("name", ""), description=raw.get("description"), id=raw.get("id"))
        name = _clean_name(item.name, "criterion")
        key = name.casefold()
        if key in names:
            raise UserFacingError(f"Two criteria are named {name!r}; criterion names must be unique (ignoring case).")
        names.add(key)
        desc = item.description.strip() if isinstance(item.description, str) else ""
        if len(desc) > DESCRIPTION_MAX:
            raise UserFacingError(f"The description of {name!r} is {len(desc)} characters; the limit is {DESCRIPTION_MAX}.",
                                  hint="Shorten the description.")
        cid = item.id or by_name.get(key) or _short_id("c")
        while cid in ids:
            cid = _short_id("c")
        ids.add(cid)
        fields: dict[str, Any] = {"id": cid, "name": name}
        if desc:
            fields["description"] = desc
        out.append(Criterion(**fields))
    return out


def find_rubric(thread: Thread, key: str) -> Rubric:
    """A rubric by id, or by name (case-insensitive); a clear error otherwise."""
    rubrics = thread.evaluationRubrics or []
    for r in rubrics:
        if r.id == key:
            return r
    matches = [r for r in rubrics if r.name.casefold() == key.strip().casefold()]
    if len(matches) == 1:
        return matches[0]
    listing = ", ".join(f"{r.name} ({r.id})" for r in rubrics) or "none"
    raise UserFacingError(f"No rubric {key!r} in this thread (rubrics: {listing}).",
                          hint="Create one with `llmspace rubric add THREAD NAME --criterion NAME …`.")


def create_rubric(thread: Thread, name: str, criteria: Sequence[CriterionInput | Mapping[str, Any]],
                  rubric_id: str | None = None, now: int | None = None) -> Rubric:
    """Add a rubric (revision 1); refused when the thread already has `MAX_RUBRICS`."""
    rubrics = list(thread.evaluationRubrics or [])
    if len(rubrics) >= MAX_RUBRICS:
        raise UserFacingError(f"This thread already has {len(rubrics)} rubrics, the most a thread can hold ({MAX_RUBRICS}).",
                              hint="Delete a rubric you no longer use, or edit an existing one, then try again.")
    if rubric_id is not None and any(r.id == rubric_id for r in rubrics):
        raise UserFacingError(f"A rubric with id {rubric_id!r} already exists.", hint="Edit it, or choose another id.")
    clean = _clean_name(name, "rubric")
    stamp = _now() if now is None else now
    rubric = Rubric(id=rubric_id or _short_id("rubric"), name=clean, criteria=_clean_criteria(criteria),
                    revision=1, createdAt=stamp, updatedAt=stamp)
    rubrics.append(rubric)
    thread.evaluationRubrics = rubrics
    return rubric


def update_rubric(thread: Thread, rubric_id: str, name: str | None = None,
                  criteria: Sequence[CriterionInput | Mapping[str, Any]] | None = None, now: int | None = None) -> Rubric:
    """Edit a rubric; returns it unchanged when nothing differs, else with revision + 1."""
    rubric = find_rubric(thread, rubric_id)
    new_name = _clean_name(name, "rubric") if name is not None else rubric.name
    new_criteria = _clean_criteria(criteria, rubric.criteria) if criteria is not None else rubric.criteria
    same = new_name == rubric.name and [c.model_dump(exclude_unset=True) for c in new_criteria] == [
        c.model_dump(exclude_unset=True) for c in rubric.criteria]
    if same:
        return rubric
    if rubric.revision >= MAX_SAFE_INTEGER:
        raise UserFacingError(f"Rubric {rubric.name!r} cannot be revised any further.", hint="Create a new rubric.")
    rubric.name = new_name
    rubric.criteria = [Criterion(**c.model_dump(exclude_unset=True)) for c in new_criteria]
    rubric.revision = rubric.revision + 1
    rubric.updatedAt = _now() if now is None else now
    return rubric


def delete_rubric(thread: Thread, rubric_id: str) -> Rubric:
    """Remove a rubric definition; saved evaluations keep their snapshots."""
    rubric = find_rubric(thread, rubric_id)
    thread.evaluationRubrics = [r for r in thread.evaluationRubrics or [] if r is not rubric]
    return rubric


def snapshot_rubric(rubric: RubricSnapshot) -> RubricSnapshot:
    """An independent snapshot (id, name, criteria, revision; no timestamps)."""
    return RubricSnapshot(
        id=rubric.id, name=rubric.name, revision=rubric.revision,
        criteria=[Criterion(**c.model_dump(exclude_unset=True)) for c in rubric.criteria],
    )


# -- evaluations -------------------------------------------------------------------------------


def find_pair(thread: Thread, a: str, b: str) -> Evaluation | None:
    """The evaluation of the unordered pair {a, b}, if any."""
    for ev in thread.evaluations or []:
        if {ev.leftRunId, ev.rightRunId} == {a, b}:
            return ev
    return None


def _canonical_scores(rubric: RubricSnapshot, left: str, right: str,
                      scores: Mapping[str, Mapping[str, int]]) -> list[RunScores]:
    """The complete grid as [left, right] × criteria order; refuses gaps and bad values."""
    rows: list[tuple[str, list[CriterionScore]]] = []
    missing: list[str] = []
    for side, run_id in (("A", left), ("B", right)):
        given = scores.get(run_id) or {}
        unknown = set(given) - {c.id for c in rubric.criteria}
        if unknown:
            raise UserFacingError(f"Run {side} has scores for unknown criteria: {', '.join(sorted(unknown))}.",
                                  hint=f"Criteria of {rubric.name!r}: {', '.join(c.name for c in rubric.criteria)}.")
        row: list[CriterionScore] = []
        for c in rubric.criteria:
            value = given.get(c.id)
            if value is None:
                missing.append(f"{side}:{c.name}")
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
                raise UserFacingError(f"Score {value!r} for {side}:{c.name} must be a whole number from 1 to 5.")
            row.append(CriterionScore(criterionId=c.id, score=value))
        rows.append((run_id, row))
    if missing:
        raise UserFacingError(f"The score grid is incomplete; missing {', '.join(missing)}.",
                              hint="Score every criterion for both runs (1–5).")
    return [RunScores(runId=run_id, scores=row) for run_id, row in rows]


def save_evaluation(
    thread: Thread,
    left_run_id: str,
    right_run_id: str,
    verdict: str,
    note: str | None = None,
    rubric_id: str | None = None,
    scores: Mapping[str, Mapping[str, int]] | None = None,
    evaluation_id: str | None = None,
    now: int | None = None,
) -> Evaluation:
    """Create or update the evaluation of a run pair (see the module docstring for the rules)."""
    if verdict not in VERDICTS:
        raise UserFacingError(f"Unknown verdict {verdict!r}.", hint=f"Use one of: {', '.join(VERDICTS)}.")
    if left_run_id == right_run_id:
        raise UserFacingError("An evaluation compares two different runs; both ids are the same.")
    find_run(thread, left_run_id)
    find_run(thread, right_run_id)
    existing = find_pair(thread, left_run_id, right_run_id)
    if evaluation_id is not None:
        other = next((e for e in thread.evaluations or [] if e.id == evaluation_id), None)
        if other is not None and other is not existing:
            raise UserFacingError(f"Evaluation id {evaluation_id!r} belongs to another pair of runs.")
    rubric_snap: RubricSnapshot | None = None
    run_scores: list[RunScores] | None = None
    if rubric_id is not None:
        try:
            rubric_snap = snapshot_rubric(find_rubric(thread, rubric_id))
        except UserFacingError:
            if existing is not None and existing.rubric is not None and existing.rubric.id == rubric_id:
                rubric_snap = snapshot_rubric(existing.rubric)  # rubric deleted since; keep the snapshot
            else:
                raise
        run_scores = _canonical_scores(rubric_snap, left_run_id, right_run_id, scores or {})
    elif scores:
        raise UserFacingError("Scores need a rubric.", hint="Pass --rubric NAME with --scores.")
    text = note.strip() if isinstance(note, str) else ""
    stamp = _now() if now is None else now
    if existing is not None:
        existing.leftRunId, existing.rightRunId = left_run_id, right_run_id
        existing.verdict = verdict  # type: ignore[assignment]
        if text:
            existing.note = text
        else:
            unset(existing, "note")
        existing.updatedAt = stamp
        if rubric_snap is not None:
            existing.rubric, existing.runScores = rubric_snap, run_scores
        else:
            unset(existing, "rubric")
            unset(existing, "runScores")
        return existing
    fields: dict[str, Any] = {"id": evaluation_id or _short_id("eval"), "leftRunId": left_run_id,
                              "rightRunId": right_run_id, "verdict": verdict}
    if text:
        fields["note"] = text
    fields["createdAt"] = fields["updatedAt"] = stamp
    if rubric_snap is not None:
        fields["rubric"], fields["runScores"] = rubric_snap, run_scores
    ev = Evaluation(**fields)
    evaluations = list(thread.evaluations or [])
    evaluations.append(ev)
    thread.evaluations = evaluations[-MAX_EVALUATIONS:]
    return ev


def remove_evaluation(thread: Thread, evaluation_id: str) -> None:
    if not any(e.id == evaluation_id for e in thread.evaluations or []):
        raise UserFacingError(f"No evaluation {evaluation_id!r} in this thread.")
    thread.evaluations = [e for e in thread.evaluations or [] if e.id != evaluation_id]


@dataclass
class Averages:
    left: float
    right: float

    @property
    def delta(self) -> float:
        """B − A."""
        return self.right - self.left


def averages(ev: Evaluation) -> Averages | None:
    """Unweighted mean per run and the B − A delta; None for legacy or incomplete records."""
    if ev.rubric is None or not ev.runScores:
        return None
    means: dict[str, float] = {}
    ids = [c.id for c in ev.rubric.criteria]
    for rs in ev.runScores:
        got = {s.criterionId: s.score for s in rs.scores}
        if set(got) != set(ids):
            return None
        means[rs.runId] = sum(got.values()) / len(ids)
    if ev.leftRunId not in means or ev.rightRunId not in means:
        return None
    return Averages(means[ev.leftRunId], means[ev.rightRunId])


def displayed_verdict(ev: Evaluation, left_run_id: str) -> str:
    """The verdict as seen with `left_run_id` on the left (left/right flip; tie/pass/fail stay)."""
    if ev.leftRunId == left_run_id:
        return ev.verdict
    return _FLIP.get(ev.verdict, ev.verdict)


def preferred_rubric(thread: Thread) -> Rubric | None:
    """The rubric of the most recently updated evaluation that still exists, else the newest."""
    rubrics = {r.id: r for r in thread.evaluationRubrics or []}
    scored = [e for e in thread.evaluations or [] if e.rubric is not None and e.rubric.id in rubrics]
    if scored:
        return rubrics[max(scored, key=lambda e: e.updatedAt).rubric.id]  # type: ignore[union-attr]
    if thread.evaluationRubrics:
        return max(thread.evaluationRubrics, key=lambda r: r.createdAt)
    return None


# -- load rules (llmspace/core/run_verdict_records.py) -------------------------------------------


def normalize_evaluations(thread: Thread) -> None:
    """The original's load rules for rubrics and evaluations (see `run_verdict_records`): invalid
    records dropped, notes trimmed, malformed structured → verdict-only, the last valid record
    of an id or run pair wins, caps. Run after `history.normalize_history`."""
    normalize_records(thread)


def orphaned(thread: Thread) -> list[Evaluation]:
    """Evaluations that refer to runs no longer in the history."""
    ids = run_ids(thread)
    return [e for e in thread.evaluations or [] if e.leftRunId not in ids or e.rightRunId not in ids]


# -- helpers for the compare dialog (draft scores while the user edits) ---------------------------

Grid = dict[str, dict[str, int]]  # run id -> criterion id -> score


def saved_grid(ev: Evaluation | None) -> Grid:
    """The scores of a saved evaluation as a grid (empty for legacy records)."""
    if ev is None or not ev.runScores:
        return {}
    return {rs.runId: {s.criterionId: s.score for s in rs.scores} for rs in ev.runScores}


def switch_rubric(new: RubricSnapshot | None, draft_rubric: RubricSnapshot | None, draft: Grid,
                  saved: Evaluation | None) -> Grid:
    """The draft scores after choosing rubric `new` in the dialog.

    Same rubric id and revision as the draft → the draft is kept; returning to the saved
    evaluation's rubric snapshot → its saved scores come back; another revision of the same
    rubric → scores reconciled by criterion id; a different rubric (or none) → cleared."""
    if new is None:
        return {}
    if draft_rubric is not None and (draft_rubric.id, draft_rubric.revision) == (new.id, new.revision):
        return {run: dict(row) for run, row in draft.items()}
    if saved is not None and saved.rubric is not None and (saved.rubric.id, saved.rubric.revision) == (new.id, new.revision):
        return saved_grid(saved)
    if draft_rubric is not None and draft_rubric.id == new.id:
        ids = {c.id for c in new.criteria}
        return {run: {cid: s for cid, s in row.items() if cid in ids} for run, row in draft.items()}
    return {}


def draft_averages(rubric: RubricSnapshot, left: str, right: str, grid: Grid) -> Averages | None:
    """Averages of a draft grid, or None while it is incomplete."""
    ids = [c.id for c in rubric.criteria]
    rows = [grid.get(left) or {}, grid.get(right) or {}]
    if any(any(not isinstance(row.get(i), int) or not 1 <= row[i] <= 5 for i in ids) for row in rows):
        return None
    return Averages(sum(rows[0][i] for i in ids) / len(ids), sum(rows[1][i] for i in ids) / len(ids))


def removal_needs_confirmation(saved: Evaluation | None, selected: RubricSnapshot | None) -> bool:
    """True when saving would drop the scores of a scored evaluation ("Remove scores and save")."""
    return saved is not None and saved.rubric is not None and selected is None


RECORD_FIELDS = ("runHistory", "evaluations", "evaluationRubrics")


def only_records_invalid(problems: list[tuple[str, str]]) -> bool:
    """True when every validation problem lies in run-history, rubric or evaluation records,
    so the thread can be opened with those records left out (`Workspace.open_repaired`)."""
    return bool(problems) and all(path.split("[", 1)[0].split(".", 1)[0] in RECORD_FIELDS for path, _ in problems)
