"""Compare dialog in a real window: rubric create/edit/delete, the score grid with live
averages, the inline message for an incomplete grid, confirmation before dropping scores,
the differences tab, and what reaches the thread file."""

from __future__ import annotations

import json

import orjson

from llmspace.jsonio import write_bytes_atomic

from ..conftest import pump_until


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


def _named_dialog(window, app):
    """Two runs with UUID ids and a long changed line, compared from the history panel."""
    import time

    def local_ms(hour):
        return int(time.mktime((2024, 3, 4, hour, 5, 0, 0, 0, -1)) * 1000)

    long_a = "The call stack unwinds once the base case is reached, " * 4 + "which keeps the definition short."
    long_b = long_a.replace("short.", "brief.")

    def named(rid, hour, model, answer):
        r = _run(rid, local_ms(hour), answer)
        r["thread"]["model"] = {"provider": "openai", "id": model}
        return r

    ids = ("0d3f7c4e-5b1a-4c2e-9f0a-7e6d5c4b3a21", "a8e2b9f1-2c3d-4e5f-8a9b-0c1d2e3f4a5b")
    write_bytes_atomic(app.workspace.root / "named.json", orjson.dumps({"title": "cmp", "runHistory": [
        named(ids[0], 10, "gpt-4.1", "Same start\n" + long_a), named(ids[1], 11, "gpt-4.1-mini", "Same start\n" + long_b)]}))
    window.tree_view.refresh()
    ed = window.open_thread("named.json")
    ed.toggle_history()
    ed.history_panel.list.selection_set(ids)
    window.root.update()
    return ids, ed.history_panel.compare(), long_a


def test_the_compare_dialog_names_runs_by_time_and_model_not_by_id(window, app):
    ids, dlg, _long = _named_dialog(window, app)
    window.root.update()
    assert dlg.title() == "Compare runs — A: 2024-03-04 10:05 · gpt-4.1  vs  B: 2024-03-04 11:05 · gpt-4.1-mini"
    assert [f.cget("text") for f in dlg.side_labels] == ["Run A · 2024-03-04 10:05 · gpt-4.1",
                                                         "Run B · 2024-03-04 11:05 · gpt-4.1-mini"]
    diff = dlg.body.get("1.0", "end")
    assert diff.startswith("Run A: 2024-03-04 10:05:00  openai/gpt-4.1")
    assert not any(rid in diff or rid in dlg.title() for rid in ids)
    dlg.destroy()


def test_the_differences_tab_wraps_long_lines_so_the_change_is_visible(window, app):
    _ids, dlg, long_a = _named_dialog(window, app)
    dlg.tabs.select(1)
    body = dlg.body
    pump_until(window.root, lambda: body.winfo_ismapped() and body.winfo_width() > 200)
    assert body.cget("wrap") == "word" and str(body.cget("state")) == "disabled"
    lines = body.get("1.0", "end-1c").split("\n")
    n = next(i for i, ln in enumerate(lines, 1) if ln.strip() == "-" + long_a)
    body.see(f"{n}.0")
    window.root.update()
    assert body.count(f"{n}.0", f"{n}.end", "displaylines")[0] > 1  # wrapped, not cut at the right edge
    end = lines[n - 1].rindex("short")
    body.see(f"{n}.{end}")
    window.root.update()
    x, _y, _w, _h = body.bbox(f"{n}.{end}")
    assert 0 <= x < body.winfo_width()  # the changed word is on screen without scrolling sideways
    assert "removed" in body.tag_names(f"{n}.0") and "removed-word" in body.tag_names(f"{n}.{end}")
    added = lines[n].rindex("brief")
    assert "added-word" in body.tag_names(f"{n + 1}.{added}")
    # continuation lines hang under the text, not under the margin
    hang = next(t for t in body.tag_names(f"{n}.0") if t.startswith("hang"))
    assert int(body.tag_cget(hang, "lmargin2")) > 0
    dlg.destroy()
