"""Compare presenter: rubric preselection, switching, live averages, complete-grid saving,
confirmation before dropping scores, rubric create/edit/delete — no display."""

from __future__ import annotations

import pytest

from llmspace.core import run_verdicts as E
from llmspace.errors import UserFacingError
from llmspace.presenters.compare import NO_RUBRIC, ComparePresenter
from llmspace.presenters.editor import EditorPresenter


def _run(rid: str, ts: int, answer: str) -> dict:
    return {"id": rid, "timestamp": ts, "thread": {"title": "cmp", "context": {"messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}


@pytest.fixture
def ed(app):
    rel = app.workspace.create_thread("", "cmp")
    ed = EditorPresenter(app.workspace, rel)
    ed.thread = ed.thread.model_validate({"title": "cmp", "runHistory": [
        _run("r1", 1000, "first"), _run("r2", 2000, "second"), _run("r3", 3000, "third")]})
    return ed


CRITERIA = [{"name": "Accuracy"}, {"name": "Clarity", "description": "Easy to follow"}]


def test_a_new_pair_without_rubrics_starts_with_no_rubric_and_shows_the_diff(ed):
    p = ComparePresenter(ed, "r1", "r2")
    assert p.rubric is None and p.selected_label() == NO_RUBRIC and p.averages_text() == ""
    assert "first" in p.diff_text() and "second" in p.diff_text()
    assert p.side("r2").result.startswith("second") and p.side("r1").last_user == "q"


def test_a_new_pair_preselects_the_rubric_of_the_latest_scored_evaluation(ed):
    old = E.create_rubric(ed.thread, "Old", CRITERIA, now=1)
    E.create_rubric(ed.thread, "Newest", CRITERIA, now=5)
    E.save_evaluation(ed.thread, "r1", "r2", "tie", rubric_id=old.id,
                      scores={"r1": {c.id: 3 for c in old.criteria}, "r2": {c.id: 4 for c in old.criteria}})
    assert ComparePresenter(ed, "r2", "r3").rubric.name == "Old"
    ed.thread.evaluations = []
    assert ComparePresenter(ed, "r2", "r3").rubric.name == "Newest"


def test_scores_give_live_averages_and_the_b_minus_a_delta_then_save_as_a_structured_evaluation(ed):
    p = ComparePresenter(ed, "r1", "r2")
    rubric = p.create_rubric("Quality", CRITERIA)
    assert p.rubric is rubric and ed.dirty
    a, c = rubric.criteria
    p.set_score("r1", a.id, 3)
    assert p.averages() is None and p.averages_text() == "Scores: 1 of 4 given"
    with pytest.raises(UserFacingError, match="missing A:Clarity, B:Accuracy, B:Clarity"):
        p.save("rightBetter")
    p.set_score("r1", c.id, 4)
    p.set_score("r2", a.id, 5)
    p.set_score("r2", c.id, 5)
    assert p.averages_text() == "Average A 3.50 · B 5.00 · B − A +1.50"
    with pytest.raises(UserFacingError):
        p.set_score("r2", c.id, 6)
    ev = p.save("rightBetter", " clearer ")
    assert ev.verdict == "rightBetter" and ev.note == "clearer" and ev.rubric.name == "Quality"
    assert E.averages(ev).delta == 1.5
    reopened = ComparePresenter(ed, "r1", "r2")
    assert reopened.rubric.id == rubric.id and reopened.score("r2", c.id) == 5 and reopened.verdict == "rightBetter"


def test_reversed_pair_shows_the_flipped_verdict(ed):
    E.save_evaluation(ed.thread, "r1", "r2", "leftBetter")
    assert ComparePresenter(ed, "r2", "r1").verdict == "rightBetter"


def test_switching_rubrics_clears_scores_and_returning_restores_the_saved_ones(ed):
    p = ComparePresenter(ed, "r1", "r2")
    one = p.create_rubric("One", CRITERIA)
    p.grid = {"r1": {c.id: 2 for c in one.criteria}, "r2": {c.id: 4 for c in one.criteria}}
    p.save("tie")
    two = p.create_rubric("Two", [{"name": "Speed"}, {"name": "Cost"}])
    assert p.rubric is two and p.grid == {}
    p.choose(one)
    assert p.score("r1", one.criteria[0].id) == 2
    p.choose(None)
    assert p.grid == {} and p.averages_text() == ""


def test_removing_the_rubric_of_a_scored_evaluation_asks_first(ed):
    p = ComparePresenter(ed, "r1", "r2")
    r = p.create_rubric("One", CRITERIA)
    p.grid = {"r1": {c.id: 2 for c in r.criteria}, "r2": {c.id: 4 for c in r.criteria}}
    p.save("tie")
    p.choose(None)
    asked: list[str] = []
    assert p.save("pass", confirm=lambda m, t: asked.append(t) or False) is None
    assert asked == ["Remove scores and save"] and ed.thread.evaluations[0].rubric is not None
    ev = p.save("pass", confirm=lambda m, t: True)
    assert ev.rubric is None and ev.runScores is None and ev.verdict == "pass"


def test_legacy_evaluations_open_without_a_rubric(ed):
    E.create_rubric(ed.thread, "R", CRITERIA)
    E.save_evaluation(ed.thread, "r1", "r2", "fail", note="meh")
    p = ComparePresenter(ed, "r1", "r2")
    assert p.rubric is None and p.note == "meh" and p.verdict == "fail"


def test_editing_the_selected_rubric_keeps_scores_by_criterion_and_bumps_the_revision(ed):
    p = ComparePresenter(ed, "r1", "r2")
    r = p.create_rubric("One", CRITERIA)
    acc, clar = r.criteria
    p.set_score("r1", acc.id, 2)
    p.set_score("r1", clar.id, 3)
    p.update_rubric(r.id, "One", [{"name": "Accuracy", "id": acc.id}, {"name": "Tone"}])
    assert p.rubric.revision == 2 and p.grid == {"r1": {acc.id: 2}}
    with pytest.raises(UserFacingError, match="2 to 6 criteria"):
        p.update_rubric(r.id, "One", [{"name": "Only"}])
    with pytest.raises(UserFacingError, match="limit is 80"):
        p.create_rubric("x" * 81, CRITERIA)
    with pytest.raises(UserFacingError, match="limit is 240"):
        p.create_rubric("Long", [{"name": "a", "description": "d" * 241}, {"name": "b"}])


def test_a_scored_evaluation_opens_at_the_current_revision_with_a_notice(ed):
    r = E.create_rubric(ed.thread, "R", CRITERIA)
    E.save_evaluation(ed.thread, "r1", "r2", "tie", rubric_id=r.id,
                      scores={"r1": {c.id: 3 for c in r.criteria}, "r2": {c.id: 4 for c in r.criteria}})
    E.update_rubric(ed.thread, r.id, "R", [{"name": "Accuracy"}, {"name": "Clarity"}, {"name": "Tone"}])
    p = ComparePresenter(ed, "r1", "r2")
    assert p.rubric.revision == 2 and "revision 1 → 2" in p.changed_note
    assert p.averages() is None  # the new criterion still needs a score


def test_deleting_the_rubric_keeps_the_saved_snapshot_selectable(ed):
    p = ComparePresenter(ed, "r1", "r2")
    r = p.create_rubric("One", CRITERIA)
    p.grid = {"r1": {c.id: 1 for c in r.criteria}, "r2": {c.id: 5 for c in r.criteria}}
    p.save("rightBetter")
    p.delete_rubric(r.id)
    assert ed.thread.evaluationRubrics == []
    assert p.rubric is not None and "rubric deleted" in p.selected_label()
    assert p.save("rightBetter").rubric.name == "One"
    other = ComparePresenter(ed, "r2", "r3")
    unsaved = other.create_rubric("Two", CRITERIA)
    other.delete_rubric(unsaved.id)
    assert other.rubric is None


def test_refuses_while_the_thread_runs_and_for_the_same_run_twice(ed):
    with pytest.raises(UserFacingError):
        ComparePresenter(ed, "r1", "r1")
    p = ComparePresenter(ed, "r1", "r2")
    ed.read_only = True
    with pytest.raises(UserFacingError, match="Stop the run"):
        p.save("tie")
    with pytest.raises(UserFacingError, match="Stop the run"):
        p.create_rubric("R", CRITERIA)
