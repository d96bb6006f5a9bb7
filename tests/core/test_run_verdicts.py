"""Evaluation and rubric rules."""

from __future__ import annotations

import pytest

from llmspace.core.history import append_run, remove_run
from llmspace.core.run_verdicts import (
    MAX_EVALUATIONS,
    MAX_RUBRICS,
    MAX_SAFE_INTEGER,
    averages,
    create_rubric,
    delete_rubric,
    displayed_verdict,
    find_rubric,
    normalize_evaluations,
    preferred_rubric,
    remove_evaluation,
    save_evaluation,
    update_rubric,
)
from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from llmspace.errors import UserFacingError

CRITERIA = [{"name": " Accuracy ", "description": "Facts are right"}, {"name": "Clarity"}]


def _thread(runs: int = 2):
    t = thread_from_data({"title": "t", "context": {"messages": [{"id": "u", "role": "user", "content": []}]}})
    for i in range(runs):
        append_run(t, None, timestamp_ms=i, run_id=f"r{i}")
    return t


def _grid(rubric, a: list[int], b: list[int], left="r0", right="r1"):
    ids = [c.id for c in rubric.criteria]
    return {left: dict(zip(ids, a, strict=False)), right: dict(zip(ids, b, strict=False))}


def test_rubric_create_trims_names_and_starts_at_revision_one():
    t = _thread()
    r = create_rubric(t, "  Quality ", CRITERIA, now=5)
    assert (r.name, r.revision, r.createdAt, r.updatedAt) == ("Quality", 1, 5, 5)
    assert [c.name for c in r.criteria] == ["Accuracy", "Clarity"]
    assert r.criteria[0].description == "Facts are right"
    assert "description" not in r.criteria[1].model_fields_set


@pytest.mark.parametrize("criteria, message", [
    ([{"name": "only"}], "2 to 6 criteria"),
    ([{"name": f"c{i}"} for i in range(7)], "2 to 6 criteria"),
    ([{"name": "Same"}, {"name": "same "}], "unique"),
    ([{"name": "x" * 81}, {"name": "b"}], "limit is 80"),
    ([{"name": "a", "description": "d" * 241}, {"name": "b"}], "limit is 240"),
    ([{"name": "  "}, {"name": "b"}], "needs a name"),
])
def test_rubric_criteria_are_validated(criteria, message):
    t = _thread()
    with pytest.raises(UserFacingError, match=message):
        create_rubric(t, "R", criteria)
    assert t.evaluationRubrics is None


def test_rubric_edit_without_change_keeps_revision_and_change_bumps_it():
    t = _thread()
    r = create_rubric(t, "Quality", CRITERIA, now=1)
    same = update_rubric(t, r.id, name="Quality", criteria=[{"name": "Accuracy", "description": "Facts are right"}, {"name": "Clarity"}], now=2)
    assert same.revision == 1 and same.updatedAt == 1
    changed = update_rubric(t, r.id, criteria=[{"name": "Clarity"}, {"name": "Accuracy"}, {"name": "Tone"}], now=3)
    assert changed.revision == 2 and changed.updatedAt == 3
    assert [c.name for c in changed.criteria] == ["Clarity", "Accuracy", "Tone"]


def test_rubric_edit_keeps_criterion_ids_by_name():
    t = _thread()
    r = create_rubric(t, "Q", CRITERIA)
    old_ids = {c.name: c.id for c in r.criteria}
    update_rubric(t, r.id, criteria=[{"name": "clarity"}, {"name": "Accuracy"}])
    assert {c.name.lower(): c.id for c in find_rubric(t, "q").criteria} == {k.lower(): v for k, v in old_ids.items()}


def test_rubric_refuses_revision_beyond_max_safe_integer_and_id_collisions():
    t = _thread()
    r = create_rubric(t, "Q", CRITERIA, rubric_id="r")
    r.revision = MAX_SAFE_INTEGER
    with pytest.raises(UserFacingError, match="cannot be revised"):
        update_rubric(t, "r", name="Q2")
    with pytest.raises(UserFacingError, match="already exists"):
        create_rubric(t, "Other", CRITERIA, rubric_id="r")


def test_rubric_cap_refuses_a_twenty_first_rubric():
    t = _thread()
    for i in range(MAX_RUBRICS):
        create_rubric(t, f"R{i}", CRITERIA, rubric_id=f"id{i}")
    with pytest.raises(UserFacingError, match="already has 20 rubrics"):
        create_rubric(t, "R20", CRITERIA, rubric_id="id20")
    assert [r.id for r in t.evaluationRubrics] == [f"id{i}" for i in range(MAX_RUBRICS)]


def test_verdict_only_evaluation_trims_note_and_stays_rubric_free():
    t = _thread()
    ev = save_evaluation(t, "r0", "r1", "leftBetter", note="  good  ", now=7)
    assert (ev.verdict, ev.note, ev.createdAt) == ("leftBetter", "good", 7)
    assert ev.rubric is None and "runScores" not in ev.model_fields_set
    ev2 = save_evaluation(t, "r0", "r1", "tie", note="   ", now=8)
    assert ev2 is ev and "note" not in ev.model_fields_set


def test_reversed_pair_updates_the_existing_evaluation_keeping_id_and_created_at():
    t = _thread()
    first = save_evaluation(t, "r0", "r1", "leftBetter", now=1)
    again = save_evaluation(t, "r1", "r0", "rightBetter", now=9)
    assert len(t.evaluations) == 1
    assert again.id == first.id and again.createdAt == 1 and again.updatedAt == 9
    assert (again.leftRunId, again.rightRunId, again.verdict) == ("r1", "r0", "rightBetter")
    assert displayed_verdict(again, "r0") == "leftBetter"
    assert displayed_verdict(save_evaluation(t, "r1", "r0", "tie"), "r0") == "tie"


def test_requested_evaluation_id_of_another_pair_is_refused():
    t = _thread(3)
    save_evaluation(t, "r0", "r1", "tie", evaluation_id="e1")
    with pytest.raises(UserFacingError, match="belongs to another pair"):
        save_evaluation(t, "r1", "r2", "tie", evaluation_id="e1")


@pytest.mark.parametrize("left, right, verdict, message", [
    ("r0", "nope", "tie", "No run 'nope'"),
    ("ghost", "r1", "tie", "No run 'ghost'"),
    ("r0", "r0", "tie", "two different runs"),
    ("r0", "r1", "better", "Unknown verdict"),
])
def test_bad_pairs_and_verdicts_are_refused(left, right, verdict, message):
    t = _thread()
    with pytest.raises(UserFacingError, match=message):
        save_evaluation(t, left, right, verdict)
    assert t.evaluations is None


def test_scored_evaluation_needs_a_complete_grid_of_whole_numbers_1_to_5():
    t = _thread()
    r = create_rubric(t, "Q", CRITERIA)
    grid = _grid(r, [4, 4], [3, 3])
    del grid["r1"][r.criteria[1].id]
    with pytest.raises(UserFacingError, match="incomplete; missing B:Clarity"):
        save_evaluation(t, "r0", "r1", "pass", rubric_id=r.id, scores=grid)
    with pytest.raises(UserFacingError, match="1 to 5"):
        save_evaluation(t, "r0", "r1", "pass", rubric_id=r.id, scores=_grid(r, [4, 6], [3, 3]))
    with pytest.raises(UserFacingError, match="1 to 5"):
        save_evaluation(t, "r0", "r1", "pass", rubric_id=r.id, scores=_grid(r, [4, 0], [3, 3]))
    with pytest.raises(UserFacingError, match="need a rubric"):
        save_evaluation(t, "r0", "r1", "pass", scores=_grid(r, [4, 4], [3, 3]))
    assert t.evaluations is None


def test_scores_are_canonicalised_and_averaged_with_b_minus_a_delta():
    t = _thread()
    r = create_rubric(t, "Q", CRITERIA)
    c1, c2 = (c.id for c in r.criteria)
    scores = {"r1": {c2: 3, c1: 3}, "r0": {c2: 5, c1: 3}}
    ev = save_evaluation(t, "r0", "r1", "leftBetter", rubric_id="Q", scores=scores)
    assert [rs.runId for rs in ev.runScores] == ["r0", "r1"]
    assert [s.criterionId for s in ev.runScores[0].scores] == [c1, c2]
    avg = averages(ev)
    assert (avg.left, avg.right, avg.delta) == (4, 3, -1)


def test_rubric_edit_and_delete_leave_saved_snapshots_unchanged():
    t = _thread()
    r = create_rubric(t, "Q", CRITERIA)
    ev = save_evaluation(t, "r0", "r1", "tie", rubric_id=r.id, scores=_grid(r, [4, 4], [4, 4]))
    update_rubric(t, r.id, name="Renamed", criteria=[{"name": "A"}, {"name": "B"}, {"name": "C"}])
    assert ev.rubric.name == "Q" and ev.rubric.revision == 1 and len(ev.rubric.criteria) == 2
    delete_rubric(t, r.id)
    assert t.evaluationRubrics == [] and ev.rubric.name == "Q"
    # re-saving with the deleted rubric's id reuses the evaluation's own snapshot
    again = save_evaluation(t, "r1", "r0", "pass", rubric_id=r.id, scores=_grid(ev.rubric, [5, 5], [1, 1], "r1", "r0"))
    assert again.rubric.name == "Q"


def test_evaluation_cap_drops_the_oldest():
    t = _thread(12)
    pairs = [(f"r{i}", f"r{j}") for i in range(12) for j in range(i + 1, 12)][: MAX_EVALUATIONS + 3]
    for a, b in pairs:
        save_evaluation(t, a, b, "tie")
    assert len(t.evaluations) == MAX_EVALUATIONS
    assert (t.evaluations[0].leftRunId, t.evaluations[0].rightRunId) == pairs[3]


def test_removing_a_run_removes_its_evaluations_and_removing_an_evaluation_works():
    t = _thread(3)
    save_evaluation(t, "r0", "r1", "tie", evaluation_id="a")
    save_evaluation(t, "r1", "r2", "tie", evaluation_id="b")
    remove_run(t, "r0")
    assert [e.id for e in t.evaluations] == ["b"]
    remove_evaluation(t, "b")
    assert t.evaluations == []
    with pytest.raises(UserFacingError):
        remove_evaluation(t, "b")


def test_everything_survives_a_save_and_reload():
    t = _thread()
    r = create_rubric(t, "Q", CRITERIA)
    save_evaluation(t, "r0", "r1", "rightBetter", note="B cites sources", rubric_id=r.id, scores=_grid(r, [2, 3], [5, 4]))
    back = parse_thread(serialize_thread(t))
    ev = back.evaluations[0]
    assert ev.note == "B cites sources" and ev.verdict == "rightBetter"
    assert averages(ev).delta == 2
    assert back.evaluationRubrics[0].name == "Q"


def test_load_rules_drop_duplicates_keep_last_and_degrade_malformed_scores():
    t = _thread(3)
    r = create_rubric(t, "Q", CRITERIA)
    save_evaluation(t, "r0", "r1", "tie", evaluation_id="e1", rubric_id=r.id, scores=_grid(r, [1, 2], [3, 4]))
    data = thread_from_data({**t.model_dump(exclude_unset=True)}).model_dump(exclude_unset=True)
    ev = dict(data["evaluations"][0])
    ev_dup_pair = {**ev, "id": "e2", "leftRunId": "r1", "rightRunId": "r0", "verdict": "pass"}
    broken = {**ev, "id": "e3", "leftRunId": "r1", "rightRunId": "r2",
              "runScores": [{"runId": "r1", "scores": [{"criterionId": "zz", "score": 1}, {"criterionId": "yy", "score": 2}]},
                            {"runId": "r2", "scores": [{"criterionId": "zz", "score": 1}, {"criterionId": "yy", "score": 2}]}]}
    same_runs = {"id": "e4", "leftRunId": "r2", "rightRunId": "r2", "verdict": "tie"}
    data["evaluations"] = [ev, ev_dup_pair, broken, same_runs]
    back = thread_from_data(data)
    normalize_evaluations(back)
    assert [e.id for e in back.evaluations] == ["e2", "e3"]
    assert back.evaluations[1].rubric is None and "runScores" not in back.evaluations[1].model_fields_set


def test_preferred_rubric_is_that_of_the_latest_scored_evaluation_else_the_newest():
    t = _thread(3)
    assert preferred_rubric(t) is None
    a = create_rubric(t, "A", CRITERIA, now=1)
    b = create_rubric(t, "B", CRITERIA, now=2)
    assert preferred_rubric(t) is b
    save_evaluation(t, "r0", "r1", "tie", rubric_id=a.id, scores=_grid(a, [1, 1], [1, 1]), now=5)
    assert preferred_rubric(t) is a


def test_raw_data_with_malformed_records_still_loads_with_them_dropped_or_degraded():
    from llmspace.core.run_verdict_records import sanitize_records

    good_rubric = {"id": "r", "name": "Q", "revision": 1, "criteria": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]}
    stamps = {"createdAt": 1, "updatedAt": 1}  # records without them are dropped, as the original drops them
    data = {
        "title": "t",
        "runHistory": [{"id": "x", "timestamp": 1, "thread": {}}, {"id": "bad", "thread": {}}],
        "evaluationRubrics": [good_rubric, {"id": "r2", "name": "one", "criteria": [{"id": "a", "name": "A"}]}],
        "evaluations": [
            {"id": "e1", "leftRunId": "x", "rightRunId": "y", "verdict": "tie", "rubric": good_rubric, **stamps},  # no runScores
            {"id": "e2", "leftRunId": "x", "rightRunId": "y", "verdict": "great", **stamps},
            {"id": "e3", "leftRunId": "x", "rightRunId": "y", "verdict": "pass", "rubric": good_rubric, **stamps,
             "runScores": [{"runId": "x", "scores": [{"criterionId": "a", "score": 9}, {"criterionId": "b", "score": 1}]},
                           {"runId": "y", "scores": [{"criterionId": "a", "score": 1}, {"criterionId": "b", "score": 1}]}]},
        ],
    }
    with pytest.raises(UserFacingError):
        thread_from_data(json_copy(data))
    t = thread_from_data(sanitize_records(json_copy(data)))
    assert [r.id for r in t.runHistory] == ["x"]
    assert [r.id for r in t.evaluationRubrics] == ["r"]
    assert [(e.id, e.rubric) for e in t.evaluations] == [("e1", None), ("e3", None)]


def json_copy(value):
    import json

    return json.loads(json.dumps(value))


def test_dialog_helpers_keep_restore_reconcile_or_clear_draft_scores():
    from llmspace.core.run_verdicts import (
        draft_averages,
        removal_needs_confirmation,
        saved_grid,
        snapshot_rubric,
        switch_rubric,
    )

    t = _thread()
    r = create_rubric(t, "Q", CRITERIA)
    other = create_rubric(t, "Other", [{"name": "x"}, {"name": "y"}])
    c1, c2 = (c.id for c in r.criteria)
    saved = save_evaluation(t, "r0", "r1", "tie", rubric_id=r.id, scores=_grid(r, [4, 4], [3, 3]))
    rev1 = snapshot_rubric(r)
    draft = {"r0": {c1: 5}, "r1": {c2: 2}}
    assert switch_rubric(rev1, rev1, draft, saved) == draft  # same revision: keep the draft
    assert switch_rubric(rev1, snapshot_rubric(other), {}, saved) == saved_grid(saved)  # back to the saved snapshot
    assert switch_rubric(snapshot_rubric(other), rev1, draft, saved) == {}  # another rubric: cleared
    update_rubric(t, r.id, criteria=[{"name": "Clarity"}, {"name": "Depth"}])
    rev2 = snapshot_rubric(find_rubric(t, r.id))
    assert switch_rubric(rev2, rev1, draft, saved) == {"r0": {}, "r1": {c2: 2}}  # reconciled by criterion id
    assert draft_averages(rev1, "r0", "r1", {"r0": {c1: 5, c2: 3}, "r1": {c1: 3, c2: 3}}).delta == -1
    assert draft_averages(rev1, "r0", "r1", draft) is None
    assert removal_needs_confirmation(saved, None) and not removal_needs_confirmation(saved, rev1)
    assert not removal_needs_confirmation(None, None)
