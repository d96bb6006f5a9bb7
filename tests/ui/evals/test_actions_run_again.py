"""Running an evaluation again, under Xvfb with real events against a loopback model server:
"Run again" on a results window opens the New Evaluation dialog filled with the evaluation
file; the re-run's cells answered from the response cache say so in the grid and in the cell;
"Fresh answers" asks the models again (new answers); after the thread changed, the dialog says
so and the run takes the thread as it is now; Evaluations › Open Evaluation File… fills the
dialog too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmspace.presenters.eval_form import NewEvalForm
from llmspace.presenters.eval_grid import CACHED_NOTE
from llmspace.ui.evals.cell_window import CellWindow
from llmspace.ui.evals.new_dialog import NewEvaluationDialog
from llmspace.ui.evals.results_window import ResultsWindow
from tests.evals.support import Oracle, last_user, write_thread
from tests.support.llm_server import LoopbackLLM, configure_provider
from tests.ui.conftest import pump_until


class Forgetful(Oracle):
    """Answers every question wrong (what a model asked afresh may well do)."""

    def answer(self, model: str, prompt: str) -> str:
        return "I do not know."


def _dataset(home: Path, n: int = 4) -> Path:
    path = home / "workspace" / "sums.jsonl"
    rows = [{"id": f"add-{i}", "question": f"What is {i} + {i + 1}?", "expected": str(2 * i + 1)} for i in range(1, n + 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _posts(srv: LoopbackLLM) -> int:
    return sum(1 for r in srv.requests if r.method == "POST")


def _menu_invoke(menu: Any, label: str) -> None:
    for i in range(menu.index("end") + 1):
        if menu.type(i) == "command" and menu.entrycget(i, "label") == label:
            menu.invoke(i)
            return
    raise AssertionError(f"no menu entry {label!r}")


def _dialog(root: Any, before: set[str]) -> NewEvaluationDialog:
    dialog = pump_until(root, lambda: next((w for w in root.winfo_children() if isinstance(w, NewEvaluationDialog)
                                             and str(w) not in before and w.winfo_exists()), None))
    pump_until(root, lambda: not dialog.loading and str(dialog.btn_run.cget("state")) == "normal", timeout=30)
    return dialog


def _run_again(win: Any, results: ResultsWindow, fresh: bool = False) -> tuple[dict[str, Any], ResultsWindow]:
    """Run again on `results` (real button, the dialog's Run); what the dialog showed, and the new results window."""
    root = win.root
    before = {str(w) for w in root.winfo_children()}
    assert str(results.btn_again.cget("state")) == "normal"
    results.btn_again.invoke()
    dialog = _dialog(root, before)
    shown = {"title": dialog.title(), "note": dialog.note.cget("text"), "note shown": bool(dialog.note.winfo_ismapped()),
             "fields": (dialog.thread_var.get(), dialog.dataset_var.get(), dialog.models_var.get(),
                        dialog.assertions.get("1.0", "end").strip())}
    if fresh:
        dialog.fresh_check.invoke()
    n = len(win.evals.windows)
    dialog.btn_run.invoke()
    pump_until(root, lambda: len(win.evals.windows) > n and win.evals.runs[-1].done(), timeout=60)
    again = win.evals.windows[-1]
    pump_until(root, lambda: again.finished, timeout=30)
    return shown, again


def _cell_texts(results: ResultsWindow) -> list[str]:
    gv = results.grid_view
    return [gv.canvas.itemcget(text, "text") for _bg, _t, cells in gv._rows for _rect, text in cells
            if gv.canvas.itemcget(text, "state") != "hidden"]


def test_run_again_marks_cached_cells_and_fresh_answers_are_new_answers(home, make_window):
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        dataset = _dataset(home)
        win = make_window()
        root = win.root
        win.evals.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        pump_until(root, lambda: win.evals.windows and win.evals.runs and win.evals.runs[-1].done(), timeout=60)
        first = win.evals.windows[-1]
        pump_until(root, lambda: first.finished, timeout=30)
        assert all(t.startswith("✓ pass") and "cached" not in t for t in _cell_texts(first))
        calls = _posts(srv)
        srv.responder = Forgetful()  # asked again, the model now answers otherwise

        shown, cached = _run_again(win, first)
        assert shown["title"] == "Run Evaluation Again" and not shown["note shown"]
        assert shown["fields"] == ("quiz.json", str(dataset), "loop/good", "contains")
        assert _posts(srv) == calls  # every answer came from the cache, and the grid says so
        assert cached.grid_model.cached_cells() == 4
        assert _cell_texts(cached) == ["✓ pass  · cached"] * 4
        assert "· 4 from the cache" in cached.progress.cget("text")
        gv = cached.grid_view
        x, y = gv.cell_xy(0, 0)
        gv.canvas.event_generate("<Button-1>", x=x, y=y)
        cell_win = pump_until(root, lambda: next((w for w in cached.winfo_children() if isinstance(w, CellWindow)), None))
        assert CACHED_NOTE in cell_win.text.get("1.0", "end")

        _dialog2, fresh = _run_again(win, cached, fresh=True)
        assert _posts(srv) == calls + 4
        assert fresh.grid_model.cached_cells() == 0 and fresh.grid_model.counts()["fail"] == 4  # the new answers
        texts = _cell_texts(fresh)
        assert all(t.startswith("✗ fail") and t.endswith(" ms") for t in texts), texts
        assert sorted(p.name for p in (home / "workspace").glob("*.eval*")) == ["quiz.eval.yaml"]


def test_run_again_after_the_thread_changed_says_so_and_runs_the_thread_as_it_is_now(home, make_window):
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        dataset = _dataset(home, n=2)
        win = make_window()
        root = win.root
        win.evals.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        pump_until(root, lambda: win.evals.windows and win.evals.runs and win.evals.runs[-1].done(), timeout=60)
        first = win.evals.windows[-1]
        pump_until(root, lambda: first.finished, timeout=30)
        write_thread(home, text="Please answer: {{question}}")
        shown, again = _run_again(win, first)
        assert shown["note shown"]
        assert shown["note"] == "The thread quiz.json changed since these results: it runs as it is now."
        assert again.grid_model.cached_cells() == 0
        assert last_user(srv.requests[-1].body_json).startswith("Please answer: What is")


def test_open_evaluation_file_fills_the_dialog_with_the_file(home, make_window):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        dataset = _dataset(home, n=2)
        (home / "workspace" / "quiz.eval.yaml").write_text(
            "thread: quiz.json\ndataset: sums.jsonl\nmodels: [loop/good, loop/bad]\nrepeat: 2\n"
            "assert: [{type: contains}, {type: regex, value: '^\\d+$'}]\n", encoding="utf-8")
        win = make_window()
        root = win.root
        before = {str(w) for w in root.winfo_children()}
        win.dialogs.files.append(str(home / "workspace" / "quiz.eval.yaml"))
        _menu_invoke(win.menus.evals_menu, "Open Evaluation File…")
        dialog = _dialog(root, before)
        assert dialog.title() == "Run Evaluation Again"
        assert dialog.dataset_var.get() == str(dataset) and dialog.models_var.get() == "loop/good, loop/bad"
        assert dialog.repeat_var.get() == "2" and dialog.assertions.get("1.0", "end").strip() == "contains\nregex: ^\\d+$"
