"""The Evaluations menu under Xvfb with real events: New Evaluation… runs against a loopback
model server and fills the live grid; filter and sort; a cell's detail; "Open as thread";
Compare Two Results… lists the flips first."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from llmspace.ui.evals.cell_window import CellWindow
from llmspace.ui.evals.compare_window import CompareWindow
from llmspace.ui.evals.new_dialog import NewEvaluationDialog
from tests.evals.support import Oracle, write_thread
from tests.evals.test_compare import _folder
from tests.support.llm_server import LoopbackLLM, configure_provider
from tests.ui.conftest import pump_until


def _menu_invoke(menu: Any, label: str) -> None:
    for i in range(menu.index("end") + 1):
        if menu.type(i) == "command" and menu.entrycget(i, "label") == label:
            menu.invoke(i)
            return
    raise AssertionError(f"no menu entry {label!r}")


def _toplevel(root: Any, kind: type) -> Any:
    found = [w for w in root.winfo_children() if isinstance(w, kind)]
    return found[-1] if found else None


def _dataset(home: Path, n: int = 8) -> Path:
    path = home / "workspace" / "sums.jsonl"
    rows = [{"id": f"add-{i}", "question": f"What is {i} + {i + 1}?", "expected": str(2 * i + 1)} for i in range(1, n + 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def evaluated(home, make_window):
    """A window whose New Evaluation… ran quiz.json over 8 cases on loop/good and loop/bad."""
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        dataset = _dataset(home)
        win = make_window()
        root = win.root
        _menu_invoke(win.menus.evals_menu, "New Evaluation…")
        dialog = pump_until(root, lambda: _toplevel(root, NewEvaluationDialog))
        dialog.thread_var.set("quiz.json")
        dialog.thread_box.event_generate("<<ComboboxSelected>>")
        dialog.dataset_entry.focus_force()
        dialog.dataset_var.set(str(dataset))
        dialog.dataset_entry.event_generate("<Return>")
        pump_until(root, lambda: not dialog.loading)
        assert len(dialog.table.get_children()) == 5  # the first rows
        assert dialog.mapping.item(dialog.mapping.get_children()[0], "values")[:2] == ("question", "column 'question'")
        dialog.models_var.set("loop/good, loop/bad")
        dialog.assertions.focus_force()
        dialog.assertions.insert("end", "\nllm-rubric: correct")
        dialog.assertions.event_generate("<KeyRelease>")
        root.update()
        assert "An llm-rubric assertion needs a judge model." in dialog.problems.cget("text")
        assert str(dialog.btn_run.cget("state")) == "disabled"
        dialog.judge_var.set("loop/judge")
        root.update()
        assert str(dialog.btn_run.cget("state")) == "normal", dialog.problems.cget("text")
        dialog.btn_run.invoke()
        actions = win.evals
        pump_until(root, lambda: actions.windows and actions.runs and actions.runs[-1].done(), timeout=60)
        results = actions.windows[-1]
        pump_until(root, lambda: results.finished, timeout=30)
        yield win, results, srv


def test_new_evaluation_from_the_dialog_runs_and_fills_the_grid(evaluated, home):
    win, results, _srv = evaluated
    grid = results.grid_model
    assert grid.columns == ["loop/good", "loop/bad"]
    assert grid.counts()["pending"] == 0
    # bad gets the sum wrong when it is a multiple of 4: 2i+1 is odd, so never; its +1 answers are right too
    assert all(grid.cells[(c, "loop/good")].status == "pass" for c in grid.case_ids)
    assert "16/16 cells" in results.progress.cget("text")
    assert (home / "workspace" / "quiz.eval.yaml").is_file()
    shown = [results.grid_view.canvas.itemcget(t, "text") for _b, t, _c in results.grid_view._rows]
    assert shown[:2] == ["add-1", "add-2"]
    results.tabs.select(results.chart)
    win.root.update()
    assert len(results.chart.canvas.find_withtag("bar")) == 6  # pass rate, cost, latency × 2 models


def test_filter_and_sort_change_the_rows_drawn(evaluated):
    win, results, _srv = evaluated
    root, gv = win.root, results.grid_view
    results.filter_entry.focus_force()
    results.filter_var.set("add-7")
    root.update()
    assert results.grid_model.rows == ["add-7"]
    assert gv.canvas.itemcget(gv._rows[1][1], "state") == "hidden"
    results.filter_var.set("")
    results.status_var.set("fail")
    results.status_box.event_generate("<<ComboboxSelected>>")
    root.update()
    assert results.grid_model.rows == []
    results.status_var.set("all")
    results.status_box.event_generate("<<ComboboxSelected>>")
    x, y = gv.header_xy(None)  # the case header: the same key again reverses
    gv.canvas.event_generate("<Button-1>", x=x, y=y)
    root.update()
    assert results.grid_model.rows[0] == "add-8"
    assert gv.canvas.itemcget(gv._rows[0][1], "text") == "add-8"


def test_a_cell_opens_its_output_and_assertions_and_open_as_thread_makes_a_new_thread(evaluated, home):
    win, results, _srv = evaluated
    root, gv = win.root, results.grid_view
    original = (home / "workspace" / "quiz.json").read_bytes()
    x, y = gv.cell_xy(2, 1)  # add-3 on loop/bad
    gv.canvas.event_generate("<Button-1>", x=x, y=y)
    cell_win = pump_until(root, lambda: _toplevel(results, CellWindow))
    text = cell_win.text.get("1.0", "end")
    assert text.startswith("add-3 · loop/bad · pass") and "Output:\n7" in text and "✓ contains" in text
    assert "Judge:\n  loop/judge: Right and short. (correct 5" in text
    cell_win.btn_thread.invoke()
    root.update()
    rel = "quiz-add-3.json"
    assert (home / "workspace" / rel).is_file() and win.tabs.active == rel
    thread = win.app.workspace.open(rel)
    assert thread.messages[-1].role == "assistant" and thread.messages[-1].content[0].text == "7"
    assert thread.context.variableVariants.variants["default"]["question"] == "What is 3 + 4?"
    assert (home / "workspace" / "quiz.json").read_bytes() == original


def test_keyboard_moves_through_cells_and_return_opens_one(evaluated):
    win, results, _srv = evaluated
    gv = results.grid_view
    gv.canvas.focus_force()
    for key in ("Down", "Down", "Right"):
        gv.canvas.event_generate(f"<{key}>")
    gv.canvas.event_generate("<Return>")
    cell_win = pump_until(win.root, lambda: _toplevel(results, CellWindow))
    assert cell_win.cell.case == "add-3" and cell_win.cell.column == "loop/bad"


def test_compare_two_results_lists_the_flips_first(home, window):
    base = home / "evals" / "quiz"
    _folder(base / "20260101-100000", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "fail", 0.0), ("c3", "p/m", "pass", 1.0),
                                       ("c4", "p/m", "fail", 0.5)])
    _folder(base / "20260102-100000", [("c1", "p/m", "fail", 0.0), ("c2", "p/m", "pass", 1.0), ("c3", "p/m", "pass", 1.0),
                                       ("c4", "p/m", "fail", 0.25)])
    root = window.root
    _menu_invoke(window.menus.evals_menu, "Compare Two Results…")
    cmp = pump_until(root, lambda: _toplevel(root, CompareWindow))
    assert cmp.a_var.get() == "quiz/20260101-100000" and cmp.b_var.get() == "quiz/20260102-100000"
    cmp.btn_compare.invoke()
    pump_until(root, lambda: cmp.view is not None, timeout=30)
    rows = [cmp.rows.item(i, "values") for i in cmp.rows.get_children()]
    assert [(r[0], r[1]) for r in rows] == [("pass → fail", "c1"), ("fail → pass", "c2"), ("-0.250", "c4")]
    assert cmp.headline.cget("text").startswith("1 flipped to fail, 1 to pass of 4 paired")
    assert "McNemar p = 1.0000" in cmp.headline.cget("text")


def test_double_clicking_a_flipped_case_shows_a_and_bs_outputs_side_by_side(home, window):
    base = home / "evals" / "quiz"
    _folder(base / "20260101-100000", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "fail", 0.0)], output="the old answer")
    _folder(base / "20260102-100000", [("c1", "p/m", "fail", 0.0), ("c2", "p/m", "pass", 1.0)], output="the new answer")
    root = window.root
    _menu_invoke(window.menus.evals_menu, "Compare Two Results…")
    cmp = pump_until(root, lambda: _toplevel(root, CompareWindow))
    cmp.btn_compare.invoke()
    pump_until(root, lambda: cmp.view is not None, timeout=30)
    first = cmp.rows.get_children()[0]
    x, y, _w, h = cmp.rows.bbox(first, "case")
    for _click in range(2):  # a double click: two presses at once, at one place
        cmp.rows.event_generate("<ButtonPress-1>", x=x + 5, y=y + h // 2)
        cmp.rows.event_generate("<ButtonRelease-1>", x=x + 5, y=y + h // 2)
    pair = pump_until(root, lambda: cmp.pair_window is not None and cmp.pair_window.winfo_exists() and cmp.pair_window)
    a_text, b_text = pair.a_text.get("1.0", "end"), pair.b_text.get("1.0", "end")
    assert a_text.startswith("pass") and "the old answer" in a_text
    assert b_text.startswith("fail") and "the new answer" in b_text and "output does not contain 'c1'" in b_text
    assert pair.a_text.winfo_rootx() + pair.a_text.winfo_width() <= pair.b_text.winfo_rootx()  # side by side
    assert "c1" in pair.title()
    cmp.rows.focus_set()
    cmp.rows.selection_set(cmp.rows.get_children()[1])
    cmp.rows.focus(cmp.rows.get_children()[1])
    cmp.rows.event_generate("<Return>")  # the keyboard opens a row too, in the same window
    root.update()
    assert cmp.pair_window is pair and "c2" in pair.title()
    cmp.destroy()


def test_every_evaluations_menu_entry_is_a_palette_command(window):
    labels = [label for label, _cmd in window.menus.commands]
    assert "Evaluations: New Evaluation…" in labels and "Evaluations: Compare Two Results…" in labels


def test_open_results_shows_a_finished_folder_and_its_case_opens_as_a_thread_with_its_variables(evaluated, home):
    win, first, _srv = evaluated
    folders = sorted((home / "evals" / "quiz").iterdir())
    win.dialogs.folders.append(str(folders[-1]))
    _menu_invoke(win.menus.evals_menu, "Open Results…")
    results = win.evals.windows[-1]
    assert results is not first and results.finished
    grid = results.grid_model
    assert grid.columns == ["loop/good", "loop/bad"] and grid.counts() == {"pass": 16, "fail": 0, "error": 0, "pending": 0}
    rel = win.evals.open_case("quiz.json", grid.cells[("add-5", "loop/good")])
    thread = win.app.workspace.open(rel)
    assert thread.context.variableVariants.variants["default"]["question"] == "What is 5 + 6?"
    assert thread.messages[-1].content[0].text == "11"


def test_stop_ends_a_running_evaluation_keeping_what_finished(home, make_window):
    with LoopbackLLM() as srv:
        oracle = Oracle()
        oracle.delay_per_chunk = 0.05  # slow cells, so the run is still going when Stop is pressed
        srv.responder = oracle
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        dataset = _dataset(home, n=40)
        win = make_window()
        root = win.root
        _menu_invoke(win.menus.evals_menu, "New Evaluation…")
        dialog = pump_until(root, lambda: _toplevel(root, NewEvaluationDialog))
        dialog.thread_var.set("quiz.json")
        dialog.thread_box.event_generate("<<ComboboxSelected>>")
        dialog.dataset_var.set(str(dataset))
        dialog.dataset_entry.event_generate("<Return>")
        dialog.models_var.set("loop/good")
        pump_until(root, lambda: not dialog.loading)
        dialog.btn_run.invoke()
        actions = win.evals
        results = pump_until(root, lambda: actions.windows and actions.runs and actions.windows[-1], timeout=60)
        pump_until(root, lambda: results.grid_model.counts()["pending"] < 40, timeout=60)
        assert str(results.btn_stop.cget("state")) == "normal"
        results.btn_stop.invoke()
        outcome = pump_until(root, lambda: actions.runs[-1].done() and actions.runs[-1].result(), timeout=20)
        assert outcome.interrupted
        pump_until(root, lambda: results.finished)
        assert "stopped" in results.progress.cget("text")
        assert str(results.btn_stop.cget("state")) == "disabled"
        assert results.grid_model.counts()["pending"] > 0


def test_closing_the_main_window_stops_a_running_evaluation(home, make_window):
    with LoopbackLLM() as srv:
        oracle = Oracle()
        oracle.delay_per_chunk = 0.05
        srv.responder = oracle
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        win = make_window()
        from llmspace.presenters.eval_form import NewEvalForm

        win.evals.start(NewEvalForm("quiz.json", str(_dataset(home, n=40)), "loop/good"))
        pump_until(win.root, lambda: win.evals.runs and win.evals.windows[-1].grid_model.counts()["pending"] < 40, timeout=60)
        win.close(destroy_root=False)
        run = win.evals.runs[-1]
        run.result(timeout=20)
        assert run.result().interrupted


def test_acceptance_two_40_case_runs_with_a_changed_prompt_show_the_flips_first_and_the_p_value_as_eval_compare(home, window, tmp_path):
    from llmspace.cli import main
    from llmspace.evals.compare import compare_results
    from llmspace.evals.compare_format import format_text
    from tests.evals.support import arithmetic_and_extraction, write_eval
    from tests.evals.test_compare import PromptOracle, _acceptance_flips

    with LoopbackLLM() as srv:
        srv.responder = PromptOracle()
        path = write_eval(home, srv, arithmetic_and_extraction(40))
        assert main(["eval", "run", str(path), "--out", str(tmp_path / "a")]) == 1
        write_thread(home, text="Please answer: {{question}}")
        assert main(["eval", "run", str(path), "--out", str(tmp_path / "b")]) == 1
    worse, better = _acceptance_flips()
    cmp = window.compare_results()
    cmp.a_var.set(str(tmp_path / "a"))
    cmp.b_var.set(str(tmp_path / "b"))
    cmp.btn_compare.invoke()
    pump_until(window.root, lambda: cmp.view is not None, timeout=60)
    rows = [cmp.rows.item(i, "values") for i in cmp.rows.get_children()]
    assert [r[1] for r in rows[:7]] == worse + better
    assert [r[0] for r in rows[:7]] == ["pass → fail"] * 3 + ["fail → pass"] * 4
    headline = cmp.headline.cget("text")
    assert headline.startswith("3 flipped to fail, 4 to pass of 40 paired")
    cli = format_text(compare_results(tmp_path / "a", tmp_path / "b"))
    assert "McNemar p = 1.0000" in headline and "p = 1.0000" in cli  # the same test, the same figure
    boot = re.search(r"paired bootstrap over 40 pairs .*?mean change (\+0\.\d+) .*?(p = 0\.\d{4})", cli)
    assert boot and f"score Δ {boot.group(1)}" in headline and boot.group(2) in headline, (cli, headline)


def test_a_grid_of_many_models_scrolls_sideways_and_a_click_there_opens_the_right_cell(tk_root):
    import tkinter as tk

    from llmspace.evals.records import parse_row
    from llmspace.presenters.eval_grid import EvalGrid
    from llmspace.ui.evals.grid_view import ResultsGrid

    rows = [{"case": "c1", "model": f"p/m{i}", "variant": "default", "repeat": 1, "status": "pass", "output": f"o{i}",
             "checks": [], "judges": []} for i in range(12)]
    opened: list[Any] = []
    top = tk.Toplevel(tk_root)
    top.geometry("800x300+0+0")
    view = ResultsGrid(top, EvalGrid.from_rows([parse_row(r) for r in rows]), opened.append)
    view.pack(fill="both", expand=True)
    pump_until(top, lambda: view._rows)
    assert float(view.hbar.get()[1]) < 1.0  # 12 columns do not fit in 800 px
    view.canvas.xview_moveto(1.0)
    top.update()
    x, y = view.cell_xy(0, 11)
    view.canvas.event_generate("<Button-1>", x=x - int(view.canvas.canvasx(0)), y=y)
    top.update()
    assert [c.column for c in opened] == ["p/m11"]
    top.destroy()


def test_an_interrupted_evaluation_reopens_as_interrupted_and_resume_finishes_it_asking_no_finished_cell_again(home, make_window):
    from llmspace.evals.journal import read_journal
    from llmspace.evals.records import CellRecord
    from llmspace.presenters.eval_form import NewEvalForm
    from llmspace.ui.evals.results_window import ResultsWindow

    with LoopbackLLM() as srv:
        oracle = Oracle()
        oracle.delay_per_chunk = 0.05  # slow cells: the run is still going when the window closes
        srv.responder = oracle
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        win = make_window()
        win.evals.start(NewEvalForm("quiz.json", str(_dataset(home, n=40)), "loop/good"))
        pump_until(win.root, lambda: win.evals.runs and win.evals.windows[-1].grid_model.counts()["pending"] < 40,
                   timeout=60)
        run = win.evals.runs[-1]
        win.dialogs.answer = True  # Stop and close
        win.quit(destroy_root=False)
        folder = run.result(timeout=30).folder
        done = {r.case for r in read_journal(folder / "journal.jsonl").records if isinstance(r, CellRecord)}
        assert 0 < len(done) < 40

        win = make_window()
        root = win.root
        win.dialogs.folders.append(str(folder))
        _menu_invoke(win.menus.evals_menu, "Open Results…")
        opened = pump_until(root, lambda: _toplevel(root, ResultsWindow))
        assert "interrupted" in opened.progress.cget("text").replace(str(folder), "")  # (the test's folder has the word)
        assert str(opened.btn_resume.cget("state")) == "normal" and opened.btn_resume.winfo_ismapped()
        opened.btn_resume.invoke()
        actions = win.evals
        pump_until(root, lambda: actions.runs and actions.runs[-1].done(), timeout=120)
        outcome = actions.runs[-1].result()
        assert outcome.folder == folder and not outcome.interrupted
        live = actions.windows[-1]
        pump_until(root, lambda: live.finished)
        assert live.grid_model.counts()["pending"] == 0
        assert "interrupted" not in live.progress.cget("text").replace(str(folder), "")
        summary = json.loads((folder / "summary.json").read_text("utf-8"))
        assert summary["interrupted"] is False and summary["complete"] is True
        asked = {case: sum(n for (model, prompt), n in oracle.calls.items()
                           if model == "good" and f"What is {int(case[4:])} + {int(case[4:]) + 1}?" in prompt)
                 for case in (f"add-{i}" for i in range(1, 41))}
        assert all(asked[case] == 1 for case in done), {c: asked[c] for c in done if asked[c] != 1}
        assert all(n >= 1 for n in asked.values())


def test_the_new_evaluation_dialog_fits_a_1024x600_screen_with_run_in_view(window):
    from llmspace.ui.evals import new_dialog
    from tests.ui.test_usability import fully_inside

    dialog = window.evals.new_evaluation()
    try:
        window.root.update()
        w, h = new_dialog.size_for(1024, 600)
        assert w <= 1024 - 40 and h <= 600 - 80  # room for a panel and the title bar
        assert new_dialog.size_for(1920, 1080) == (900, 680)
        dialog.geometry(f"{w}x{h}")
        pump_until(window.root, lambda: dialog.winfo_height() == h)
        assert fully_inside(dialog.btn_run, dialog), (dialog.btn_run.winfo_y(), dialog.winfo_height())
    finally:
        dialog.destroy()


def _two_repeat_results(tk_root):
    from llmspace.evals.records import parse_row
    from llmspace.presenters.eval_grid import EvalGrid
    from llmspace.ui.evals.results_window import ResultsWindow

    rows = [{"case": f"c{c}", "model": "p/m", "variant": "default", "repeat": r, "status": "pass" if r == 1 else "fail",
             "output": f"out {c}.{r}", "checks": [], "judges": []} for c in (1, 2) for r in (1, 2)]
    window = ResultsWindow(tk_root, "Evaluation two", EvalGrid.from_rows([parse_row(r) for r in rows], repeats=2))
    window.done("results in nowhere")
    tk_root.update()
    return window


def test_the_cell_window_steps_through_every_repeat(tk_root):
    results = _two_repeat_results(tk_root)
    try:
        x, y = results.grid_view.cell_xy(0, 0)
        results.grid_view.canvas.event_generate("<Button-1>", x=x, y=y)
        cell_win = pump_until(tk_root, lambda: _toplevel(results, CellWindow))
        assert "(repeat 2 of 2)" in cell_win.text.get("1.0", "end")  # the failed repeat first
        assert cell_win.repeat_label.cget("text") == "Repeat 2 of 2"
        assert str(cell_win.btn_next.cget("state")) == "disabled"
        cell_win.btn_prev.invoke()
        text = cell_win.text.get("1.0", "end")
        assert "(repeat 1 of 2)" in text and "Output:\nout 1.1" in text
        assert str(cell_win.btn_prev.cget("state")) == "disabled"
        cell_win.focus_force()
        cell_win.text.event_generate("<Alt-Right>")  # the keyboard steps too
        assert "Output:\nout 1.2" in cell_win.text.get("1.0", "end")
    finally:
        results.destroy()


def test_opening_another_cell_reuses_the_cell_window(tk_root):
    results = _two_repeat_results(tk_root)
    try:
        gv = results.grid_view
        for row in (0, 1):
            x, y = gv.cell_xy(row, 0)
            gv.canvas.event_generate("<Button-1>", x=x, y=y)
            tk_root.update()
        windows = [w for w in results.winfo_children() if isinstance(w, CellWindow)]
        assert len(windows) == 1, f"{len(windows)} cell windows"
        assert windows[0].cell.case == "c2" and windows[0].text.get("1.0", "end").startswith("c2 · p/m")
        assert windows[0].title().startswith("c2 · p/m")
    finally:
        results.destroy()


def test_open_as_thread_takes_the_repeat_the_cell_window_shows(tk_root):
    from llmspace.presenters.eval_grid import GridCell

    results = _two_repeat_results(tk_root)
    opened: list[GridCell] = []
    results.open_as_thread = opened.append
    try:
        cell_win = results.open_cell(results.grid_model.cells[("c1", "p/m")])
        cell_win.btn_prev.invoke()  # repeat 1 of 2 (the window opened on the failed repeat 2)
        cell_win.btn_thread.invoke()
        assert [c.shown.output for c in opened if c.shown is not None] == ["out 1.1"]
    finally:
        results.destroy()
