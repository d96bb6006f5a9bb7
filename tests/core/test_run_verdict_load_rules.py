"""The rubric cap refuses a 21st rubric, and loaded evaluations are normalised as the
original app normalises them: notes trimmed, a malformed structured payload degrades to a
verdict-only record, the last valid duplicate (id or unordered pair) wins."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from llmspace.core.history import normalize_history
from llmspace.core.run_verdict_records import sanitize_records
from llmspace.core.run_verdicts import (
    MAX_RUBRICS,
    create_rubric,
    normalize_evaluations,
)
from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.errors import UserFacingError

CRITERIA = [{"name": "Accuracy"}, {"name": "Clarity"}]
RUBRIC = {"id": "q", "name": "Quality", "revision": 1,
          "criteria": [{"id": "c1", "name": "Accuracy"}, {"id": "c2", "name": "Clarity"}]}


def _run(rid: str, ts: int = 1) -> dict[str, Any]:
    return {"id": rid, "timestamp": ts, "thread": {"title": "t"}}


def _ev(eid: str, left: str = "r0", right: str = "r1", verdict: str = "tie", **extra: Any) -> dict[str, Any]:
    return {"id": eid, "leftRunId": left, "rightRunId": right, "verdict": verdict, "createdAt": 1, "updatedAt": 2, **extra}


def _scores(left: str = "r0", right: str = "r1", a: tuple[int, int] = (4, 2), b: tuple[int, int] = (5, 5)) -> list[dict[str, Any]]:
    return [{"runId": left, "scores": [{"criterionId": "c1", "score": a[0]}, {"criterionId": "c2", "score": a[1]}]},
            {"runId": right, "scores": [{"criterionId": "c1", "score": b[0]}, {"criterionId": "c2", "score": b[1]}]}]


def _load(evaluations: list[Any], runs: list[dict[str, Any]] | None = None):
    """Load as the app does: record-level sanitising, validation, then the load rules."""
    data = {"title": "t", "runHistory": runs if runs is not None else [_run("r0"), _run("r1"), _run("r2")],
            "evaluations": copy.deepcopy(evaluations)}
    thread = thread_from_data(sanitize_records(data))
    normalize_history(thread)
    normalize_evaluations(thread)
    return thread


def _dump(thread) -> list[dict[str, Any]]:
    return [e.model_dump(exclude_unset=True, mode="json") for e in thread.evaluations or []]


# -- the rubric cap -------------------------------------------------------------------------------


def test_a_twenty_first_rubric_is_refused_and_all_twenty_are_kept():
    t = thread_from_data({"title": "t"})
    for i in range(MAX_RUBRICS):
        create_rubric(t, f"R{i}", CRITERIA, rubric_id=f"id{i}")
    before = serialize_thread(t)
    with pytest.raises(UserFacingError, match="20 rubrics") as info:
        create_rubric(t, "One too many", CRITERIA)
    assert "Delete a rubric" in (info.value.hint or str(info.value))
    assert serialize_thread(t) == before
    assert [r.id for r in t.evaluationRubrics] == [f"id{i}" for i in range(MAX_RUBRICS)]


# -- notes ----------------------------------------------------------------------------------------


def test_a_loaded_note_is_trimmed_and_a_blank_one_is_left_out():
    t = _load([_ev("e1", note="  B cites sources \n"), _ev("e2", "r1", "r2", note=" \t ")])
    assert [e.get("note") for e in _dump(t)] == ["B cites sources", None]
    assert "note" not in t.evaluations[1].model_fields_set


# -- malformed structured payloads ----------------------------------------------------------------


def test_a_well_formed_structured_evaluation_is_kept_in_canonical_order():
    scores = _scores()
    reordered = [{"runId": "r1", "scores": list(reversed(scores[1]["scores"]))}, scores[0]]
    t = _load([_ev("e1", rubric=RUBRIC, runScores=reordered)])
    ev = t.evaluations[0]
    assert ev.rubric is not None and ev.rubric.id == "q"
    assert [(rs.runId, [s.criterionId for s in rs.scores]) for rs in ev.runScores] == [("r0", ["c1", "c2"]), ("r1", ["c1", "c2"])]
    assert [s.score for s in ev.runScores[1].scores] == [5, 5]


@pytest.mark.parametrize("broken", [
    pytest.param({"rubric": RUBRIC}, id="rubric-without-scores"),
    pytest.param({"runScores": _scores()}, id="scores-without-rubric"),
    pytest.param({"rubric": RUBRIC, "runScores": _scores()[:1]}, id="one-run-scored"),
    pytest.param({"rubric": RUBRIC, "runScores": _scores(a=(4, 6))}, id="score-out-of-range"),
    pytest.param({"rubric": RUBRIC, "runScores": _scores(left="r2")}, id="scores-of-another-run"),
    pytest.param({"rubric": RUBRIC, "runScores": _scores(left="r1")}, id="same-run-twice"),
    pytest.param({"rubric": RUBRIC, "runScores": [
        {"runId": "r0", "scores": [{"criterionId": "c1", "score": 4}, {"criterionId": "c2", "score": 2},
                                   {"criterionId": "c1", "score": 5}]}, _scores()[1]]}, id="extra-duplicate-score"),
    pytest.param({"rubric": RUBRIC, "runScores": [
        {"runId": "r0", "scores": [{"criterionId": "c1", "score": 4}, {"criterionId": "zz", "score": 2}]}, _scores()[1]]},
        id="unknown-criterion"),
    pytest.param({"rubric": {**RUBRIC, "criteria": [{"id": "c1", "name": "Accuracy"}]}, "runScores": _scores()},
                 id="rubric-with-one-criterion"),
    pytest.param({"rubric": {**RUBRIC, "revision": 0}, "runScores": _scores()}, id="revision-zero"),
    pytest.param({"rubric": "Quality", "runScores": _scores()}, id="rubric-not-an-object"),
])
def test_a_malformed_structured_evaluation_falls_back_to_a_verdict_only_record(broken):
    t = _load([_ev("e1", verdict="rightBetter", note=" kept ", **broken)])
    assert _dump(t) == [{"id": "e1", "leftRunId": "r0", "rightRunId": "r1", "verdict": "rightBetter",
                         "note": "kept", "createdAt": 1, "updatedAt": 2}]


@pytest.mark.parametrize("record", [
    pytest.param(_ev("e1", verdict="better"), id="unknown-verdict"),
    pytest.param(_ev("e1", right="r0"), id="same-run-on-both-sides"),
    pytest.param({k: v for k, v in _ev("e1").items() if k != "createdAt"}, id="no-createdAt"),
    pytest.param(_ev("e1", right="gone"), id="run-not-in-history"),
    pytest.param(["not", "a", "record"], id="not-an-object"),
])
def test_an_invalid_evaluation_record_is_dropped(record):
    t = _load([record, _ev("ok", "r1", "r2")])
    assert [e["id"] for e in _dump(t)] == ["ok"]


def test_an_evaluation_without_an_id_gets_the_originals_fallback_id():
    record = {k: v for k, v in _ev("x", "r0", "r2").items() if k != "id"}
    t = _load([_ev("e1"), record])
    assert [e["id"] for e in _dump(t)] == ["e1", "evaluation-r0-r2-1"]


# -- duplicates -----------------------------------------------------------------------------------


def test_among_duplicate_pairs_the_last_valid_record_wins_in_either_orientation():
    t = _load([_ev("e1", "r0", "r1", "leftBetter"), _ev("e2", "r1", "r0", "rightBetter"),
               _ev("e3", "r0", "r1", "nonsense")])
    assert [(e["id"], e["leftRunId"], e["verdict"]) for e in _dump(t)] == [("e2", "r1", "rightBetter")]


def test_among_duplicate_ids_the_last_valid_record_wins():
    t = _load([_ev("e1", "r0", "r1", "tie"), _ev("e1", "r1", "r2", "pass"), _ev("e1", "r0", "r2", "fail", createdAt="x")])
    assert [(e["id"], e["leftRunId"], e["rightRunId"]) for e in _dump(t)] == [("e1", "r1", "r2")]


def test_a_record_only_loses_to_later_records_that_are_kept():
    # e1 shares its id with the middle record, which itself loses its pair to the last one: the
    # original walks from the end and only kept records claim an id or a pair, so e1 survives.
    t = _load([_ev("x", "r0", "r1", "tie"), _ev("x", "r1", "r2", "pass"), _ev("y", "r2", "r1", "fail")])
    assert [(e["id"], e["leftRunId"], e["rightRunId"]) for e in _dump(t)] == [("x", "r0", "r1"), ("y", "r2", "r1")]


def test_among_duplicate_run_ids_the_last_valid_run_wins():
    runs = [_run("r0", 1), _run("r1", 2), {"id": "r0", "timestamp": 3, "thread": {"title": "later"}},
            {"id": "r0", "timestamp": "never", "thread": {"title": "invalid"}}, {"id": "  ", "timestamp": 9, "thread": {}}]
    data = {"title": "t", "runHistory": runs}
    t = thread_from_data(sanitize_records(data))
    normalize_history(t)
    assert [(r.id, r.timestamp) for r in t.runHistory] == [("r1", 2), ("r0", 3), ("run-9-4", 9)]
