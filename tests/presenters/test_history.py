"""History intents of the editor presenter: inspect, neighbours, restore as one undo step,
remove with its evaluations, fork from a message into a new file, evaluation rows — no display."""

from __future__ import annotations

import json

import pytest

from llmspace.core import run_verdicts as E
from llmspace.errors import UserFacingError
from llmspace.presenters.editor import EditorPresenter


def _run(rid, ts, answer):
    return {"id": rid, "timestamp": ts, "thread": {"title": "h", "context": {"systemPrompt": f"sp {rid}", "messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]},
        {"id": "u2" + rid, "role": "user", "content": [{"type": "text", "text": "more"}]}]}}}


@pytest.fixture
def ed(app):
    rel = app.workspace.create_thread("", "h")
    ed = EditorPresenter(app.workspace, rel)
    ed.thread = ed.thread.model_validate({"title": "h", "context": {"systemPrompt": "now"}, "runHistory": [
        _run("r1", 1000, "one"), _run("r2", 2000, "two"), _run("r3", 3000, "three")]})
    ed.dirty = True
    return ed


def test_inspect_shows_a_run_and_neighbours_follow_the_newest_first_list(ed):
    view = ed.history_intents.inspect("r2")
    assert view.system_prompt == "sp r2" and [m.id for m in view.messages] == ["u", "ar2", "u2r2"]
    assert ed.history_intents.neighbours("r3") == (None, "r2") and ed.history_intents.neighbours("r2") == ("r3", "r1")
    assert ed.history_intents.neighbours("r1") == ("r2", None) and ed.history_intents.neighbours("gone") == (None, None)
    with pytest.raises(UserFacingError):
        ed.history_intents.inspect("gone")


def test_rows_follow_the_sort_and_a_compared_pair_puts_the_earlier_run_first(ed):
    from llmspace.presenters.history_rows import HistorySort

    sort = HistorySort()
    assert [r.id for r in ed.history_intents.rows(sort)] == ["r3", "r2", "r1"]
    sort.click("when")
    assert [r.id for r in ed.history_intents.rows(sort)] == ["r1", "r2", "r3"]
    assert ed.history_intents.ordered_pair("r3", "r1") == ("r1", "r3") == ed.history_intents.ordered_pair("r1", "r3")
    assert ed.history_intents.chart().point_count == 0 and [r.id for r in ed.history_intents.chart().runs] == ["r1", "r2", "r3"]


def test_restore_is_one_undo_step(ed):
    ed.history_intents.restore_run("r1")
    assert ed.system_prompt == "sp r1" and len(ed.thread.runHistory) == 3
    assert ed.undo() and ed.system_prompt == "now"


def test_removing_a_run_removes_the_evaluations_that_use_it(ed):
    E.save_evaluation(ed.thread, "r1", "r2", "tie")
    E.save_evaluation(ed.thread, "r2", "r3", "pass", note="ok")
    rows = ed.history_intents.evaluation_rows()
    assert len(rows) == 2 and any((r.verdict, r.note) == ("Pass", "ok") and r.runs.endswith(":03 · No model")
                                  for r in rows)
    ed.history_intents.remove_run("r1")
    assert [e.leftRunId for e in ed.thread.evaluations] == ["r2"]
    eid = ed.thread.evaluations[0].id
    assert ed.history_intents.evaluation_pair(eid) == ("r2", "r3")
    ed.history_intents.remove_evaluation(eid)
    assert ed.thread.evaluations == [] and ed.history_intents.evaluation_rows() == []


def test_fork_saves_first_then_writes_a_new_thread_up_to_the_message(ed, app):
    new_rel = ed.history_intents.fork_from("r2", "ar2")
    assert not ed.dirty and new_rel != ed.rel
    data = json.loads(app.workspace.resolve(new_rel).read_text("utf-8"))
    assert [m["id"] for m in data["context"]["messages"]] == ["u", "ar2"]
    assert data["context"]["systemPrompt"] == "sp r2" and "runHistory" not in data
    with pytest.raises(UserFacingError, match="no message"):
        ed.history_intents.fork_from("r2", "nope")
    ed.read_only = True
    with pytest.raises(UserFacingError, match="Stop the run"):
        ed.history_intents.fork_from("r2", "u")
