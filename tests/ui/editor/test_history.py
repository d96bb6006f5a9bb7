"""Run history in a real window: load rules applied when a thread is opened (autosave writes
them; clean files are left alone), Inspect with previous/next, Restore as one undo step,
Remove with confirmation (and its evaluations), Fork from a message into a new tab."""

from __future__ import annotations

import json

import orjson

from llmspace.jsonio import write_bytes_atomic

from ..conftest import pump_until


def read(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))


def test_opening_a_thread_applies_the_load_rules_and_autosave_writes_them(window, app):
    write_bytes_atomic(app.workspace.root / "messy.json", orjson.dumps({
        "title": "messy", "runHistory": [
            {"id": "r1", "timestamp": 1000, "thread": {"title": "messy"}},
            {"timestamp": 2000, "thread": {"title": "messy"}},
            {"id": "r1", "timestamp": 3000, "thread": {"title": "messy"}}],
        "evaluations": [{"id": "e1", "leftRunId": "r1", "rightRunId": "r1", "verdict": "tie"}]}))
    clean = app.workspace.create_thread("", "clean")
    clean_bytes = app.workspace.resolve(clean).read_bytes()
    window.tree_view.refresh()
    ed = window.open_thread("messy.json")
    assert ed.p.dirty
    pump_until(window.root, lambda: not ed.p.dirty)  # autosave, as after any edit
    data = read(app, "messy.json")
    assert [r["id"] for r in data["runHistory"]] == ["run-2000-1", "r1"] and data["evaluations"] == []
    ed2 = window.open_thread(clean)
    assert not ed2.p.dirty
    ed2.flush()
    window.tab_pages.close_tab(clean)
    assert app.workspace.resolve(clean).read_bytes() == clean_bytes


def _run(rid, ts, answer):
    return {"id": rid, "timestamp": ts, "thread": {"title": "h", "context": {"systemPrompt": f"sp {rid}", "messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}


def _panel(window, app):
    write_bytes_atomic(app.workspace.root / "h.json", orjson.dumps({
        "title": "h", "context": {"systemPrompt": "now"},
        "runHistory": [_run("r1", 1000, "one"), _run("r2", 2000, "two"), _run("r3", 3000, "three")],
        "evaluations": [{"id": "e1", "leftRunId": "r1", "rightRunId": "r2", "verdict": "tie", "createdAt": 1, "updatedAt": 1},
                        {"id": "e2", "leftRunId": "r2", "rightRunId": "r3", "verdict": "pass", "createdAt": 2, "updatedAt": 2}]}))
    window.tree_view.refresh()
    ed = window.open_thread("h.json")
    ed.toggle_history()
    window.root.update()
    return ed, ed.history_panel


def test_inspect_walks_the_runs_and_forks_from_a_chosen_message_into_a_new_tab(window, app):
    _ed, panel = _panel(window, app)
    assert panel.list.get_children("") == ("r3", "r2", "r1")
    panel.list.selection_set("r2")
    window.root.update()
    insp = panel.inspect()
    assert insp.run_id == "r2" and insp.messages.get_children("") == ("u", "ar2")
    assert "sp r2" in insp.text.get("1.0", "end") and str(insp.text.cget("state")) == "disabled"
    assert insp.previous() == "r3" and str(insp.prev_btn.cget("state")) == "disabled"
    assert insp.next() == "r2" and insp.next() == "r1" and insp.next() is None
    insp.messages.selection_set("u")
    window.root.update()
    new_rel = insp.fork()
    insp.destroy()
    assert new_rel and window.tabs.active == new_rel and window.tree_view.tree.exists(new_rel)
    data = read(app, new_rel)
    assert [m["id"] for m in data["context"]["messages"]] == ["u"] and data["context"]["systemPrompt"] == "sp r1"
    assert "Forked into" in window.status.msg.cget("text")


def test_fork_button_forks_the_selected_run_at_its_last_message(window, app):
    _ed, panel = _panel(window, app)
    panel.list.selection_set("r3")
    window.root.update()
    new_rel = panel.fork()
    assert window.tabs.active == new_rel
    assert [m["id"] for m in read(app, new_rel)["context"]["messages"]] == ["u", "ar3"]


def test_restore_is_undoable_and_remove_asks_then_drops_the_runs_evaluations(window, app):
    ed, panel = _panel(window, app)
    assert len(panel.evals.get_children("")) == 2
    panel.list.selection_set("r1")
    window.root.update()
    panel.restore()
    assert ed.settings.prompt.get("1.0", "end-1c") == "sp r1"
    ed.undo()
    window.root.update()
    assert ed.settings.prompt.get("1.0", "end-1c") == "now"
    panel.list.selection_set("r1")
    window.dialogs.answer = False
    panel.remove()
    assert "r1" in panel.list.get_children("") and "Evaluations that use it" in window.dialogs.confirms[-1]
    window.dialogs.answer = True
    panel.remove()
    assert panel.list.get_children("") == ("r3", "r2") and panel.evals.get_children("") == ("e2",)
    panel.evals.selection_set("e2")
    dlg = panel.open_evaluation()
    assert (dlg.run_a, dlg.run_b) == ("r2", "r3") and dlg.p.verdict == "pass"
    dlg.destroy()
    assert panel.remove_evaluation() and panel.evals.get_children("") == ()
    ed.flush()
    data = read(app, "h.json")
    assert [r["id"] for r in data["runHistory"]] == ["r2", "r3"] and data["evaluations"] == []


# -- evaluation at a glance: columns, sorting, evaluations, chart ------------------------------


def local_ms(year, month, day, hour, minute, second=0):
    """Epoch ms of a local time, so the labels the panel shows do not depend on the zone."""
    import time

    return int(time.mktime((year, month, day, hour, minute, second, 0, 0, -1)) * 1000)


def _usage(i, o, cost):
    return {"input": i, "output": o, "cacheRead": 0, "cacheWrite": 0, "totalTokens": i + o,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


RUN_IDS = ["9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed",
           "6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b"]
LONG_REPLY = "Recursion is when a function calls itself on a smaller input until it reaches a base case that stops it"


def _glance(window, app, runs=3):
    specs = [("gpt-4.1", LONG_REPLY + "\nThen the calls unwind.", _usage(300, 80, 0.0123), 1800),
             ("gpt-4.1-mini", "A recursive function reduces a problem to a smaller one.", _usage(1500, 700, 0.0031), 900),
             ("o3", "Russian dolls.", _usage(420, 60, 0.05), 5200)][:runs]
    history = []
    for k, (model, answer, use, dur) in enumerate(specs):
        rid = RUN_IDS[k]
        history.append({"id": rid, "timestamp": local_ms(2024, 3, 4, 10 + k, 5), "usage": use, "thread": {
            "title": "g", "model": {"provider": "openai", "id": model}, "context": {"messages": [
                {"id": "u", "role": "user", "content": [{"type": "text", "text": "Explain recursion"}]},
                {"id": "a" + rid[:8], "role": "assistant", "content": [{"type": "text", "text": answer}],
                 "timing": {"firstTokenMs": dur // 4, "durationMs": dur}}]}}})
    rubric = {"id": "rb", "name": "Quality", "revision": 1, "criteria": [{"id": "c1", "name": "Accuracy"},
                                                                          {"id": "c2", "name": "Clarity"}]}
    evaluations = []
    if runs == 3:
        evaluations = [{"id": "e1", "leftRunId": RUN_IDS[0], "rightRunId": RUN_IDS[1], "verdict": "rightBetter",
                        "note": "B is clearer", "createdAt": 1, "updatedAt": 1, "rubric": rubric, "runScores": [
                            {"runId": RUN_IDS[0], "scores": [{"criterionId": "c1", "score": 3}, {"criterionId": "c2", "score": 4}]},
                            {"runId": RUN_IDS[1], "scores": [{"criterionId": "c1", "score": 5}, {"criterionId": "c2", "score": 4}]}]},
                       {"id": "e2", "leftRunId": RUN_IDS[1], "rightRunId": RUN_IDS[2], "verdict": "tie",
                        "createdAt": 2, "updatedAt": 2}]
    write_bytes_atomic(app.workspace.root / "g.json", orjson.dumps({
        "title": "g", "runHistory": history, "evaluationRubrics": [{**rubric, "createdAt": 1, "updatedAt": 1}],
        "evaluations": evaluations}))
    window.tree_view.refresh()
    ed = window.open_thread("g.json")
    ed.toggle_history()
    window.root.update()
    return ed, ed.history_panel


def click_heading(root, tree, column):
    """Press and release the mouse on a column heading, as the user clicks it (scrolling
    sideways first when the column is out of view)."""
    names = ["#0", *tree.cget("columns")]
    want = "#0" if column == "#0" else f"#{names.index(column)}"
    for fraction in (0.0, 0.3, 0.6, 1.0):
        tree.xview_moveto(fraction)
        root.update()
        xs = [x for x in range(2, tree.winfo_width() - 2, 3)
              if tree.identify_region(x, 8) == "heading" and tree.identify_column(x) == want]
        if len(xs) > 4:
            x = xs[len(xs) // 2]
            tree.event_generate("<ButtonPress-1>", x=x, y=8)
            tree.event_generate("<ButtonRelease-1>", x=x, y=8)
            root.update()
            return
    raise AssertionError(f"heading {column} not found")


def test_run_rows_show_the_replys_first_line_time_model_tokens_cost_latency_and_score(window, app):
    _ed, panel = _glance(window, app)
    assert panel.list.get_children("") == tuple(reversed(RUN_IDS))  # newest first
    assert panel.list.heading("#0", "text") == "Summary" and panel.list.heading("when", "text") == "When ▼"
    assert panel.list.item(RUN_IDS[0], "text") == LONG_REPLY  # the whole first line, not a cut
    assert tuple(panel.list.item(RUN_IDS[0], "values")) == (
        "2024-03-04 10:05", "gpt-4.1", "380", "$0.0123", "1.80 s", "3.50")
    assert tuple(panel.list.item(RUN_IDS[1], "values"))[2:] == ("2.2K", "$0.003100", "900 ms", "4.50")
    assert tuple(panel.list.item(RUN_IDS[2], "values"))[-1] == ""  # its only evaluation has no scores
    assert int(panel.list.column("when", "width")) >= tkfont_width(window, "2024-03-04 10:05")
    panel.list.selection_set(RUN_IDS[0])
    window.root.update()
    detail = panel.detail.cget("text").split("\n")
    assert detail[0] == LONG_REPLY and detail[1].startswith("openai/gpt-4.1 · 2024-03-04 10:05 (")
    assert detail[2] == "380 tokens (300 in / 80 out) · $0.0123 · 1.80 s (first token 450 ms) · score 3.50 from 1 evaluation"


def tkfont_width(window, text):
    import tkinter.font as tkfont

    return tkfont.nametofont("TkDefaultFont", root=window.root).measure(text)


def test_clicking_a_column_heading_sorts_the_runs_and_clicking_again_reverses(window, app):
    _ed, panel = _glance(window, app)
    click_heading(window.root, panel.list, "tokens")
    assert panel.list.get_children("") == (RUN_IDS[0], RUN_IDS[2], RUN_IDS[1])  # 380, 480, 2,200 tokens
    assert panel.list.heading("tokens", "text") == "Tokens ▲" and panel.list.heading("when", "text") == "When"
    click_heading(window.root, panel.list, "tokens")
    assert panel.list.get_children("") == (RUN_IDS[1], RUN_IDS[2], RUN_IDS[0])
    click_heading(window.root, panel.list, "score")
    assert panel.list.get_children("") == (RUN_IDS[1], RUN_IDS[0], RUN_IDS[2])  # best first, unscored last
    click_heading(window.root, panel.list, "latency")
    assert panel.list.get_children("") == (RUN_IDS[1], RUN_IDS[0], RUN_IDS[2])
    click_heading(window.root, panel.list, "cost")
    assert panel.list.get_children("") == (RUN_IDS[1], RUN_IDS[0], RUN_IDS[2])
    click_heading(window.root, panel.list, "model")
    assert [panel.list.set(i, "model") for i in panel.list.get_children("")] == ["gpt-4.1", "gpt-4.1-mini", "o3"]
    # whatever the order shown, the earlier run of a compared pair is A
    panel.list.selection_set((RUN_IDS[2], RUN_IDS[0]))
    window.root.update()
    assert panel.detail.cget("text").startswith("Two runs selected")
    dlg = panel.compare()
    assert (dlg.run_a, dlg.run_b) == (RUN_IDS[0], RUN_IDS[2])
    dlg.destroy()


def test_evaluations_show_runs_by_time_and_model_verdict_rubric_averages_and_delta(window, app):
    _ed, panel = _glance(window, app)
    assert panel.evals.get_children("") == ("e2", "e1")
    head = [panel.evals.heading(c, "text") for c in panel.evals.cget("columns")]
    assert head == ["Verdict", "B − A", "Runs", "Rubric", "A", "B", "Note"]
    assert tuple(panel.evals.item("e1", "values")) == (
        "B better", "+1.00", "A 2024-03-04 10:05 · gpt-4.1  vs  B 2024-03-04 11:05 · gpt-4.1-mini", "Quality (rev 1)",
        "3.50", "4.50", "B is clearer")
    assert tuple(panel.evals.item("e2", "values"))[:4] == (
        "Tie", "", "A 2024-03-04 11:05 · gpt-4.1-mini  vs  B 2024-03-04 12:05 · o3", "No rubric")
    shown = " ".join(str(v) for e in panel.evals.get_children("") for v in panel.evals.item(e, "values"))
    assert not any(rid in shown for rid in RUN_IDS)


def _show_chart(window, panel):
    panel.tabs.select(panel.chart_tab)
    pump_until(window.root, lambda: panel.chart.canvas.winfo_ismapped() and panel.chart.canvas.winfo_height() > 100)
    window.root.update()
    return panel.chart.canvas


def test_the_chart_draws_scores_latency_and_cost_per_run_with_axes_and_a_legend(window, app):
    ed, panel = _glance(window, app)
    canvas = _show_chart(window, panel)
    # scores: runs 1 and 2 (run 3's evaluation has none); duration and first token: 3 + 3; cost: 3
    assert len(canvas.find_withtag("point")) == 2 + 6 + 3
    assert len(canvas.find_withtag("line")) == 4
    legend = sorted(canvas.itemcget(i, "text") for i in canvas.find_withtag("legend") if canvas.type(i) == "text")
    assert legend == ["Cost", "Duration", "First token", "Quality"]
    titles = [canvas.itemcget(i, "text") for i in canvas.find_withtag("title")]
    assert titles == ["Score (1–5)", "Latency", "Cost (USD)"]
    labels = {canvas.itemcget(i, "text") for i in canvas.find_withtag("axis") if canvas.type(i) == "text"}
    assert {"1", "5", "0 s", "6 s", "$0.00", "2024-03-04 10:05", "2024-03-04 12:05"} <= labels
    w, h = int(canvas.winfo_width()), int(canvas.winfo_height())
    for item in canvas.find_withtag("point"):
        x0, y0, x1, y1 = canvas.coords(item)
        assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h
    # hovering a point names its run and value
    first = canvas.find_withtag("run:0")[0]
    x0, y0, x1, y1 = canvas.coords(first)
    canvas.event_generate("<Motion>", x=int((x0 + x1) / 2), y=int((y0 + y1) / 2))
    window.root.update()
    assert panel.chart.hover_text == "2024-03-04 10:05 · gpt-4.1 · Quality: 3.50"
    # removing a run redraws the chart
    panel.list.selection_set(RUN_IDS[2])
    panel.remove()
    window.root.update()
    assert len(canvas.find_withtag("point")) == 2 + 4 + 2
    assert ed.p.dirty


def test_the_chart_explains_itself_until_there_are_two_runs(window, app):
    _ed, panel = _glance(window, app, runs=1)
    canvas = _show_chart(window, panel)
    assert canvas.find_withtag("point") == ()
    (empty,) = canvas.find_withtag("empty")
    assert "one run" in canvas.itemcget(empty, "text")
    assert panel.detail.cget("text").startswith("1 run.")


def test_the_chart_follows_a_switch_to_the_dark_theme(window, app):
    _ed, panel = _glance(window, app)
    canvas = _show_chart(window, panel)
    window.appearance.theme_var.set("dark")
    window.appearance.apply_theme()
    try:
        dark = window.root.style.colors
        pump_until(window.root, lambda: canvas.cget("background").lower() == dark.bg.lower())
        assert len(canvas.find_withtag("point")) == 11
        title = canvas.find_withtag("title")[0]
        assert canvas.itemcget(title, "fill").lower() == dark.fg.lower()
    finally:
        window.appearance.theme_var.set("light")
        window.appearance.apply_theme()
    pump_until(window.root, lambda: canvas.cget("background").lower() == window.root.style.colors.bg.lower())


def test_the_summary_column_keeps_its_width_in_the_narrow_panel_and_scrolls_sideways(window, app):
    from llmspace.ui.editor.history import SUMMARY_MIN

    _ed, panel = _glance(window, app)  # runs of 2024: their times carry the date
    pump_until(window.root, lambda: panel.list.winfo_width() > 100)
    for column in ("cost", "cost"):
        click_heading(window.root, panel.list, column)
        window.root.update()
        summary = int(panel.list.column("#0", "width"))
        assert summary >= SUMMARY_MIN  # never squeezed to a few characters
        assert tkfont_width(window, LONG_REPLY[:20]) < summary
        # it gives up room (below its 240 px: 30 characters) only so that the run's time,
        # here with its date, shows whole
        assert summary + int(panel.list.column("when", "width")) <= panel.list.winfo_width()
    total = sum(int(panel.list.column(c, "width")) for c in ("#0", *panel.list.cget("columns")))
    assert total > panel.list.winfo_width() and panel.xscroll.winfo_ismapped()
