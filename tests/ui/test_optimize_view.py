"""Evaluations › Optimize Prompt… under Xvfb with real events, against the loopback target whose
answers depend on the system prompt and the scripted reflector (tests/optimize/support.py): the
deterministic task runs to its verdict in the app (promoted, with the McNemar figures, the chart
and each candidate's diff), "Open optimized thread" opens it in a tab; Stop ends the run as
Ctrl-C does and keeps what finished, which the next run resumes; a results window offers it on
its results folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmspace.evals.journal import read_optimize_journal
from llmspace.evals.records import Candidate, Reflection
from llmspace.ui.evals.optimize_window import OptimizeDialog, OptimizeWindow
from tests.optimize.support import INSTRUCTION, PromptTask, write_task
from tests.support.llm_server import LoopbackLLM
from tests.ui.conftest import pump_until


def _menu_invoke(menu: Any, label: str) -> None:
    for i in range(menu.index("end") + 1):
        if menu.type(i) == "command" and menu.entrycget(i, "label") == label:
            menu.invoke(i)
            return
    raise AssertionError(f"no menu entry {label!r}")


def _start(win: Any, eval_file: Path, rollouts: str = "140") -> OptimizeWindow:
    """Evaluations › Optimize Prompt… on `eval_file`, the loopback reflector, Start: the live window."""
    root = win.root
    win.dialogs.files.append(str(eval_file))
    _menu_invoke(win.menus.evals_menu, "Optimize Prompt…")
    dialog = pump_until(root, lambda: next((w for w in root.winfo_children() if isinstance(w, OptimizeDialog)
                                             and w.winfo_exists()), None))
    assert dialog.reflector_var.get() == "loop/target"  # no judge: the evaluation's model
    dialog.reflector_var.set("loop/reflector")
    dialog.rollouts_var.set(rollouts)
    assert str(dialog.btn_start.cget("state")) == "normal"
    dialog.btn_start.invoke()
    return pump_until(root, lambda: win.evals.optimizations and win.evals.optimizations[-1][1])


def _listed(window: OptimizeWindow) -> dict[str, tuple[str, ...]]:
    return {iid: tuple(str(v) for v in window.list.item(iid, "values")) for iid in window.list.get_children()}


def test_the_deterministic_task_runs_to_its_verdict_in_the_app_and_the_optimized_thread_opens(home, make_window):
    with LoopbackLLM() as srv:
        task = PromptTask()
        srv.responder = task
        eval_file = write_task(home, srv)
        win = make_window()
        root = win.root
        window = _start(win, eval_file)
        future = win.evals.optimizations[-1][2]
        pump_until(root, lambda: future.done() and window.state_model.finished, timeout=240)
        root.update()

        verdict = window.verdict.cget("text")
        assert verdict.startswith("Promoted: a significant improvement"), verdict
        assert "exact McNemar p = " in verdict and "Optimized thread:" in verdict
        state = window.state_model
        assert state.promoted and state.optimized == home / "workspace" / "quiz.optimized.json"
        # the live figures and the chart: the original's validation score, then the helpful rewrite's
        assert window.progress.cget("text").startswith("step ") and "rollouts " in window.progress.cget("text")
        assert window.chart.find_withtag("point") and window.chart.find_withtag("best")
        listed = _listed(window)
        assert listed["c1"][1] == "⊘ rejected" and listed["c2"][1] == "✗ lost on its minibatch"
        assert listed["c4"][1] == "✓ validated" and listed["c4"][2].endswith("%")
        # each candidate's diff against the original
        window.list.selection_set("c4")
        root.update()
        diff = window.diff.get("1.0", "end")
        assert f"+You answer questions about {{{{topic}}}}. {INSTRUCTION}" in diff
        assert "-You answer questions about {{topic}}." in diff
        assert window.diff.tag_ranges("added") and window.diff.tag_ranges("removed")
        window.list.selection_set("c1")
        root.update()
        assert "drops {{topic}}" in window.diff.get("1.0", "end")

        assert str(window.btn_open.cget("state")) == "normal"
        window.btn_open.invoke()
        pump_until(root, lambda: win.tabs.active == "quiz.optimized.json")


def test_stop_ends_the_optimization_and_keeps_what_finished_for_the_next_run_to_resume(home, make_window):
    with LoopbackLLM() as srv:
        task = PromptTask()
        task.hold_reflector_call = 2  # the second rewrite is asked for, and not answered until released
        srv.responder = task
        eval_file = write_task(home, srv)
        win = make_window()
        root = win.root
        window = _start(win, eval_file)
        future = win.evals.optimizations[-1][2]
        pump_until(root, lambda: task.held.is_set(), timeout=120)
        pump_until(root, lambda: "c1" in _listed(window))  # the first rewrite's fate reached the window

        window.btn_stop.invoke()
        task.release.set()
        pump_until(root, lambda: future.done() and window.state_model.finished, timeout=120)
        root.update()

        assert window.phase.cget("text").startswith("Stopped: what finished is kept")
        assert str(window.btn_stop.cget("state")) == "disabled" and str(window.btn_open.cget("state")) == "disabled"
        folder = window.state_model.folder
        assert folder is not None and not (folder / "summary.json").exists()  # no verdict: it was stopped
        records = read_optimize_journal(folder / "journal.jsonl")
        assert [c.step for c in records if isinstance(c, Candidate)] == [1]
        kept = [r for r in (folder / "runs" / "c0" / "journal.jsonl").read_text("utf-8").splitlines() if '"type":"cell"' in r]
        assert len(kept) == 72  # the baseline finished and is kept
        assert not (home / "workspace" / "quiz.optimized.json").exists()

        # the same settings again resume that folder: the baseline and the first rewrite are not asked again
        target_calls, reflector_calls = task.calls["target"], task.calls["reflector"]
        window.close()
        again = _start(win, eval_file)
        future = win.evals.optimizations[-1][2]
        pump_until(root, lambda: future.done() and again.state_model.finished, timeout=240)
        assert again.state_model.folder == folder and again.state_model.promoted
        records = read_optimize_journal(folder / "journal.jsonl")
        reflections = [r.step for r in records if isinstance(r, Reflection)]
        assert reflections.count(1) == 1
        assert task.calls["target"] > target_calls and task.calls["reflector"] > reflector_calls
        # no cell of the target was asked twice over both runs (the journals and the cache kept them)
        asked = [json.dumps(r.body_json, sort_keys=True) for r in srv.requests
                 if r.method == "POST" and (r.body_json or {}).get("model") == "target"]
        assert len(asked) == task.calls["target"] and len(set(asked)) == len(asked)


def test_a_results_window_optimizes_its_evaluation_with_those_results_as_the_baseline(home, make_window):
    from llmspace.cli import main

    with LoopbackLLM() as srv:
        task = PromptTask()
        srv.responder = task
        eval_file = write_task(home, srv)
        assert main(["eval", "run", str(eval_file)]) == 1  # the vague prompt fails most cases
        results = next((home / "evals" / "quiz").iterdir())
        win = make_window()
        root = win.root
        opened = win.evals.open_results(results)
        assert opened is not None and str(opened.btn_optimize.cget("state")) == "normal"
        opened.btn_optimize.invoke()
        dialog = pump_until(root, lambda: next((w for w in root.winfo_children() if isinstance(w, OptimizeDialog)
                                                 and w.winfo_exists()), None))
        assert dialog.title().endswith(f"from {results.name} — Optimize Prompt")
        dialog.reflector_var.set("loop/reflector")
        dialog.btn_start.invoke()
        window = pump_until(root, lambda: win.evals.optimizations and win.evals.optimizations[-1][1])
        future = win.evals.optimizations[-1][2]
        pump_until(root, lambda: future.done() and window.state_model.finished, timeout=240)

        assert window.state_model.promoted
        summary = json.loads((window.state_model.folder / "summary.json").read_text("utf-8"))
        # the baseline came from the results folder: the search's rollouts are its own cells only
        assert summary["rollouts"] == task.calls["target"] - 72 - len(summary["split"]["holdout"])
