"""Bounds of run verdict records (the thread's `evaluations`) and rubric records, and the rules that apply when a thread is loaded,
the same rules the original app applies when it loads a thread (so both keep the same records).

Evaluations, in file order:
- dropped: not an object, run ids not strings or equal, unknown verdict, `createdAt` or
  `updatedAt` missing or not a finite number, or a run that is not in the run history;
- a missing or blank id becomes `evaluation-<left>-<right>-<index in the file>`;
- the note is trimmed, an empty one left out;
- a structured payload (`rubric` and/or `runScores` present) is kept only when the rubric
  snapshot normalises (ids and names trimmed, names bounded, criteria with a blank id or name
  or a repeated id or case-insensitive name left out, first 6 kept, at least 2, revision a
  safe integer ≥ 1) and the scores form a complete grid of whole numbers 1–5 for exactly the
  two runs; they are then stored canonically as [left, right] × criteria order. Anything else
  degrades to the verdict-only record;
- walking from the end, a record whose id or unordered run pair a later kept record already
  has is dropped (the last valid one wins); at most `MAX_EVALUATIONS`, the newest.
Rubric definitions: the snapshot rules plus finite `createdAt`/`updatedAt`; a later rubric
with the same id replaces the earlier one in its place; at most `MAX_RUBRICS`, the newest.

`normalize_records(thread)` applies these to a validated Thread in place, touching only what
changes (unknown keys of a record survive, so an untouched file round-trips).
`sanitize_records(data)` prepares raw JSON that does not validate: it keeps what the rules
keep, with run-history ids back-filled by their index in the file first. No I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from .history import run_ids, unset
from .model import Criterion, Evaluation, Rubric, RubricSnapshot, RunScores, Thread

MAX_EVALUATIONS = 50
MAX_RUBRICS = 20
MIN_CRITERIA, MAX_CRITERIA = 2, 6
NAME_MAX, DESCRIPTION_MAX = 80, 240
MAX_SAFE_INTEGER = 2**53 - 1
VERDICTS = ("leftBetter", "rightBetter", "tie", "pass", "fail")

T = TypeVar("T")


# -- value checks (JavaScript's Number.isFinite / isInteger / isSafeInteger, String.trim) ------


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return _finite(value) and float(value).is_integer()


def _trimmed(value: Any) -> str | None:
    return (value.strip() or None) if isinstance(value, str) else None


def _bounded(value: Any, limit: int) -> str | None:
    text = _trimmed(value)
    return text[:limit] if text else None


# -- raw records -------------------------------------------------------------------------------


def _criteria(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    out: list[dict[str, Any]] = []
    ids: set[str] = set()
    names: set[str] = set()
    for raw in value:
        if not isinstance(raw, dict):
            continue
        cid, name = _trimmed(raw.get("id")), _bounded(raw.get("name"), NAME_MAX)
        if not cid or not name or cid in ids or name.lower() in names:
            continue
        ids.add(cid)
        names.add(name.lower())
        item: dict[str, Any] = {"id": cid, "name": name}
        description = _bounded(raw.get("description"), DESCRIPTION_MAX)
        if description:
            item["description"] = description
        out.append(item)
    out = out[:MAX_CRITERIA]
    return out if len(out) >= MIN_CRITERIA else None


def rubric_snapshot(value: Any) -> dict[str, Any] | None:
    """The normalised snapshot {id, name, criteria, revision}, or None when it is malformed."""
    if not isinstance(value, dict):
        return None
    rid, name, criteria = _trimmed(value.get("id")), _bounded(value.get("name"), NAME_MAX), _criteria(value.get("criteria"))
    revision: Any = value.get("revision")
    if not rid or not name or criteria is None or not _integer(revision) or not 1 <= revision <= MAX_SAFE_INTEGER:
        return None
    return {"id": rid, "name": name, "criteria": criteria, "revision": int(revision)}


def _run_scores(value: Any, rubric: dict[str, Any], left: str, right: str) -> list[dict[str, Any]] | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    wanted = [c["id"] for c in rubric["criteria"]]
    grid: dict[str, dict[str, int]] = {}
    for raw in value:
        run_id = _trimmed(raw.get("runId")) if isinstance(raw, dict) else None
        scores = raw.get("scores") if isinstance(raw, dict) else None
        if not run_id or run_id not in (left, right) or run_id in grid or not isinstance(scores, list) or len(scores) != len(wanted):
            return None
        row: dict[str, int] = {}
        for item in scores:
            cid = _trimmed(item.get("criterionId")) if isinstance(item, dict) else None
            score: Any = item.get("score") if isinstance(item, dict) else None
            if not cid or cid in row or not _integer(score) or not 1 <= score <= 5:
                return None
            row[cid] = int(score)
        grid[run_id] = row
    if len(grid) != 2 or any(set(row) != set(wanted) for row in grid.values()):
        return None
    return [{"runId": run_id, "scores": [{"criterionId": cid, "score": grid[run_id][cid]} for cid in wanted]}
            for run_id in (left, right)]


def evaluation_record(value: Any, index: int, runs: set[str] | None) -> dict[str, Any] | None:
    """The normalised record (JSON-ready), or None when it is dropped. `runs=None` skips the
    check that both runs exist (done later, once the run history is normalised)."""
    if not isinstance(value, dict):
        return None
    left, right, verdict = value.get("leftRunId"), value.get("rightRunId"), value.get("verdict")
    if not isinstance(left, str) or not isinstance(right, str) or left == right or verdict not in VERDICTS:
        return None
    if not _finite(value.get("createdAt")) or not _finite(value.get("updatedAt")):
        return None
    if runs is not None and (left not in runs or right not in runs):
        return None
    eid = value.get("id")
    out: dict[str, Any] = {"id": eid if isinstance(eid, str) and eid.strip() else f"evaluation-{left}-{right}-{index}",
                           "leftRunId": left, "rightRunId": right, "verdict": verdict}
    note = _trimmed(value.get("note"))
    if note:
        out["note"] = note
    out["createdAt"], out["updatedAt"] = value["createdAt"], value["updatedAt"]
    if "rubric" in value or "runScores" in value:
        rubric = rubric_snapshot(value.get("rubric"))
        scores = _run_scores(value.get("runScores"), rubric, left, right) if rubric is not None else None
        if rubric is not None and scores is not None:
            out["rubric"], out["runScores"] = rubric, scores
    return out


def rubric_record(value: Any) -> dict[str, Any] | None:
    snap = rubric_snapshot(value)
    if snap is None or not _finite(value.get("createdAt")) or not _finite(value.get("updatedAt")):
        return None
    return {**snap, "createdAt": value["createdAt"], "updatedAt": value["updatedAt"]}


def last_wins(items: Iterable[T], keys: Callable[[T], tuple[Any, Any]]) -> list[T]:
    """Walking from the end, drop an item whose id or pair a later kept item already has."""
    seen_ids: set[Any] = set()
    seen_pairs: set[Any] = set()
    kept: list[T] = []
    for item in reversed(list(items)):
        key, pair = keys(item)
        if key in seen_ids or pair in seen_pairs:
            continue
        seen_ids.add(key)
        seen_pairs.add(pair)
        kept.append(item)
    kept.reverse()
    return kept


def _eval_keys(ev: Evaluation) -> tuple[str, frozenset[str]]:
    return ev.id, frozenset((ev.leftRunId, ev.rightRunId))


# -- validated threads -------------------------------------------------------------------------


def _dump(node: Any) -> dict[str, Any]:
    data: dict[str, Any] = node.model_dump(exclude_unset=True, by_alias=True, mode="json")
    return data


def _same_snapshot(node: RubricSnapshot, snap: Mapping[str, Any]) -> bool:
    data = _dump(node)
    criteria = [{k: c[k] for k in ("id", "name", "description") if k in c} for c in data.get("criteria", [])]
    return (data.get("id"), data.get("name"), criteria, data.get("revision")) == (
        snap["id"], snap["name"], snap["criteria"], snap["revision"])


def _apply_snapshot(node: RubricSnapshot, snap: Mapping[str, Any]) -> None:
    if _same_snapshot(node, snap):
        return
    node.id, node.name, node.revision = snap["id"], snap["name"], snap["revision"]
    node.criteria = [Criterion(**c) for c in snap["criteria"]]


def _apply_evaluation(ev: Evaluation, norm: Mapping[str, Any]) -> None:
    if "note" in norm:
        if ev.note != norm["note"]:
            ev.note = norm["note"]
    elif "note" in ev.model_fields_set:
        unset(ev, "note")
    if "rubric" not in norm:
        unset(ev, "rubric")
        unset(ev, "runScores")
        return
    if ev.rubric is None:  # not reachable for a validated record; kept for safety
        ev.rubric = RubricSnapshot.model_validate(norm["rubric"])
    else:
        _apply_snapshot(ev.rubric, norm["rubric"])
    current = [_dump(rs) for rs in ev.runScores or []]
    if [{"runId": rs.get("runId"), "scores": [{"criterionId": s.get("criterionId"), "score": s.get("score")}
                                               for s in rs.get("scores", [])]} for rs in current] != norm["runScores"]:
        ev.runScores = [RunScores.model_validate(rs) for rs in norm["runScores"]]


def normalize_records(thread: Thread) -> None:
    """Apply the load rules to `evaluationRubrics` and `evaluations` of a validated thread
    (after `normalize_history`, so back-filled run ids count). Lists are replaced only when
    something is dropped or reordered."""
    if thread.evaluationRubrics is not None:
        rubrics: list[Rubric] = []
        where: dict[str, int] = {}
        for r in thread.evaluationRubrics:
            norm = rubric_record(_dump(r))
            if norm is None:
                continue
            _apply_snapshot(r, norm)
            if r.id in where:
                rubrics[where[r.id]] = r
            else:
                where[r.id] = len(rubrics)
                rubrics.append(r)
        rubrics = rubrics[-MAX_RUBRICS:]
        if [id(r) for r in rubrics] != [id(r) for r in thread.evaluationRubrics]:
            thread.evaluationRubrics = rubrics
    if thread.evaluations is None:
        return
    runs = run_ids(thread)
    kept: list[Evaluation] = []
    for index, ev in enumerate(thread.evaluations):
        norm = evaluation_record(_dump(ev), index, runs)
        if norm is None:
            continue
        _apply_evaluation(ev, norm)
        kept.append(ev)
    kept = last_wins(kept, _eval_keys)[-MAX_EVALUATIONS:]
    if [id(e) for e in kept] != [id(e) for e in thread.evaluations]:
        thread.evaluations = kept


# -- raw JSON that does not validate -----------------------------------------------------------


def sanitize_records(data: Any) -> Any:
    """Apply the record-level load rules to raw thread JSON before it is validated (in place).

    Without this a single malformed evaluation, rubric or run entry would make the whole file
    unreadable. Run entries get their fallback id (`run-<trunc(ts)>-<index in the file>`) and
    are dropped when they still do not validate; rubrics that do not validate are dropped;
    evaluations are normalised by `evaluation_record` (without the run check, which
    `normalize_records` does after the history is normalised), their unknown keys kept.
    Returns `data`."""
    from pydantic import ValidationError

    from .model import RunSnapshot

    if not isinstance(data, dict):
        return data

    def valid(model: Any, item: Any) -> bool:
        try:
            model.model_validate(item)
            return True
        except ValidationError:
            return False

    history = data.get("runHistory")
    if isinstance(history, list):
        for index, run in enumerate(history):
            if isinstance(run, dict) and _finite(run.get("timestamp")) and not (isinstance(run.get("id"), str) and run["id"].strip()):
                run["id"] = f"run-{math.trunc(run['timestamp'])}-{index}"
        data["runHistory"] = [run for run in history if valid(RunSnapshot, run)]
    rubrics = data.get("evaluationRubrics")
    if isinstance(rubrics, list):
        data["evaluationRubrics"] = [r for r in rubrics if valid(Rubric, r)]
    evaluations = data.get("evaluations")
    if isinstance(evaluations, list):
        out = []
        for index, item in enumerate(evaluations):
            norm = evaluation_record(item, index, None)
            if norm is None:
                continue
            norm.update({k: v for k, v in item.items() if k not in norm and k not in ("rubric", "runScores", "note", "id")})
            if valid(Evaluation, norm):
                out.append(norm)
        data["evaluations"] = out
    return data
