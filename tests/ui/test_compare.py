"""Compare dialog in a real window: rubric create/edit/delete, the score grid with live
averages, the inline message for an incomplete grid, confirmation before dropping scores,
the differences tab, and what reaches the thread file."""

from __future__ import annotations

import json

import orjson

from llmspace.jsonio import write_bytes_atomic


def read(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))


def _run(rid, ts, answer):
    return {"id": rid, "timestamp": ts, "thread": {"title": "cmp", "context": {"messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}


def _dialog(window, app):
    write_bytes_atomic(app.workspace.root / "cmp.json", orjson.dumps({
        "title": "cmp", "runHistory": [_run("r1", 1000, "first answer"), _run("r2", 2000, "second answer")]}))
    window.tree_view.refresh()
    ed = window.open_thread("cmp.json")
    ed.toggle_history()
    ed.history_panel.list.selection_set(("r1", "r2"))
    window.root.update()
    return ed, ed.history_panel.compare()


def test_a_rubric_is_created_scored_with_live_averages_and_saved(window, app):
    ed, dlg = _dialog(window, app)
    assert dlg.rubric_box.get() == "No rubric" and not dlg.score_boxes
    assert "second answer" in dlg.body.get("1.0", "end") and str(dlg.body.cget("state")) == "disabled"
    editor = dlg.new_rubric()
    window.root.update()
    editor.name.insert(0, "Quality")
    editor.rows[0][1].insert(0, "Accuracy")
    editor.save()
    assert "name" in editor.msg.cget("text")  # the second criterion has no name yet
    editor.rows[1][1].insert(0, "Clarity")
    editor.rows[1][2].insert(0, "Easy to follow")
    assert editor.save() is not None
    window.root.update()
    assert dlg.rubric_box.get() == "Quality (rev 1)" and len(dlg.score_boxes) == 4
    dlg.set_score("A", 0, 3)
    assert dlg.avg.cget("text") == "Scores: 1 of 4 given"
    assert not dlg.save("leftBetter")
    assert "Score every criterion" in dlg.msg.cget("text")
    dlg.set_score("A", 1, 4)
    dlg.set_score("B", 0, 5)
    dlg.set_score("B", 1, 5)
    assert dlg.avg.cget("text") == "Average A 3.50 · B 5.00 · B − A +1.50"
    dlg.note.insert(0, "B is clearer")
    assert dlg.save("rightBetter") and dlg.msg.cget("text") == "Saved."
    dlg.destroy()
    ed.flush()
    data = read(app, "cmp.json")
    ev = data["evaluations"][0]
    assert (ev["leftRunId"], ev["rightRunId"], ev["verdict"], ev["note"]) == ("r1", "r2", "rightBetter", "B is clearer")
    assert ev["rubric"]["name"] == "Quality" and [s["runId"] for s in ev["runScores"]] == ["r1", "r2"]
    assert data["evaluationRubrics"][0]["criteria"][1]["description"] == "Easy to follow"


def test_dropping_scores_asks_and_deleting_the_rubric_keeps_the_snapshot(window, app):
    ed, dlg = _dialog(window, app)
    editor = dlg.new_rubric()
    editor.name.insert(0, "R")
    editor.rows[0][1].insert(0, "One")
    editor.rows[1][1].insert(0, "Two")
    editor.save()
    for side in "AB":
        for i in range(2):
            dlg.set_score(side, i, 2)
    assert dlg.save("tie")
    dlg.choose("No rubric")
    window.dialogs.answer = False
    assert not dlg.save("pass") and window.dialogs.confirms[-1].startswith("This evaluation has rubric scores")
    assert ed.p.thread.evaluations[0].rubric is not None
    dlg.choose("R (rev 1)")
    assert dlg.score_boxes and dlg.avg.cget("text").startswith("Average A 2.00")
    window.dialogs.answer = True
    assert dlg.delete_rubric()
    assert "rubric deleted" in dlg.rubric_box.get() and str(dlg.edit_btn.cget("state")) == "disabled"
    assert dlg.edit_rubric() is None
    dlg.destroy()
    ed.flush()
    data = read(app, "cmp.json")
    assert data.get("evaluationRubrics") == [] and data["evaluations"][0]["rubric"]["name"] == "R"
