"""Evaluations › New Evaluation… with "Whole conversations" (Xvfb, real events): the user model
field shows only for it, the preview lists the scenarios' persona and goal instead of the
variables, Run writes the file `eval new --conversation` writes and runs it to the end against
the scripted loopback models; a row that is not a scenario keeps Run disabled naming its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from llmspace.cli import main
from llmspace.ui.evals.new_dialog import NewEvaluationDialog
from tests.evals.conversation.scripted import Scripted, setup
from tests.support.llm_server import LoopbackLLM
from tests.ui.conftest import pump_until
from tests.ui.evals.test_actions import _menu_invoke, _toplevel


def _dialog(win: Any, dataset: Path) -> NewEvaluationDialog:
    root = win.root
    _menu_invoke(win.menus.evals_menu, "New Evaluation…")
    dialog = pump_until(root, lambda: _toplevel(root, NewEvaluationDialog))
    dialog.thread_var.set("support.json")
    dialog.thread_box.event_generate("<<ComboboxSelected>>")
    dialog.dataset_entry.focus_force()
    dialog.dataset_var.set(str(dataset))
    dialog.dataset_entry.event_generate("<Return>")
    pump_until(root, lambda: not dialog.loading)
    return dialog


def _choose_conversations(dialog: NewEvaluationDialog) -> None:
    root = dialog.ui.root
    dialog.kind_conversation.invoke()
    pump_until(root, lambda: not dialog.loading)
    root.update()


def test_the_dialog_creates_the_conversation_file_eval_new_writes_and_run_runs_it(home, make_window, tmp_path):
    with LoopbackLLM() as srv:
        scripted = Scripted()
        srv.responder = scripted
        setup(home, srv).unlink()  # the example's thread and scenarios, no evaluation file yet
        ws = home / "workspace"
        win = make_window()
        root = win.root
        dialog = _dialog(win, ws / "scenarios.yaml")
        assert not dialog.user_model_entry.winfo_ismapped()
        assert "holds conversation scenarios" in dialog.problems.cget("text")  # as test cases: choose conversations
        assert str(dialog.btn_run.cget("state")) == "disabled"

        _choose_conversations(dialog)

        assert dialog.user_model_entry.winfo_ismapped() and not dialog.mapping.winfo_ismapped()
        first = dialog.table.item(dialog.table.get_children()[0], "values")
        assert list(dialog.table["columns"]) == ["id", "persona", "goal"]
        assert tuple(first) == ("refund-broken", "A customer whose parcel arrived broken.", "Get order A17 refunded.")
        dialog.models_var.set("loop/agent")
        dialog.user_model_var.set("loop/user")
        dialog.judge_var.set("loop/judge")
        root.update()
        assert str(dialog.btn_run.cget("state")) == "normal", dialog.problems.cget("text")
        dialog.btn_run.invoke()
        actions = win.evals
        pump_until(root, lambda: actions.windows and actions.runs and actions.runs[-1].done(), timeout=120)
        results = actions.windows[-1]
        pump_until(root, lambda: results.finished, timeout=120)

        grid = results.grid_model
        assert grid.columns == ["loop/agent"] and len(grid.case_ids) == 5
        assert grid.counts()["pending"] == 0 and grid.counts()["error"] == 0, grid.counts()
        assert scripted.calls["user"] > 0 and scripted.calls["judge"] > 0
        made = yaml.safe_load((ws / "support.eval.yaml").read_text("utf-8"))
        assert main(["eval", "new", "support.json", "--dataset", str(ws / "scenarios.yaml"), "--conversation", "--models",
                     "loop/agent", "--user-model", "loop/user", "--judge", "loop/judge", "-o", str(ws / "cli.eval.yaml")]) == 0
        assert made == yaml.safe_load((ws / "cli.eval.yaml").read_text("utf-8"))
        assert made["mode"] == "conversation" and made["assert"] == [{"type": "goal-met"}]


def test_a_row_that_is_not_a_scenario_keeps_run_disabled_naming_its_line(home, make_window):
    with LoopbackLLM() as srv:
        srv.responder = Scripted()
        setup(home, srv).unlink()
        ws = home / "workspace"
        (ws / "bad.yaml").write_text("- id: fine\n  user: {goal: Get order A17 refunded.}\n- id: stray\n  question: 2 + 2?\n",
                                     encoding="utf-8")
        win = make_window()
        dialog = _dialog(win, ws / "bad.yaml")
        dialog.models_var.set("loop/agent")

        _choose_conversations(dialog)

        assert "bad.yaml line 3 is not a scenario" in dialog.problems.cget("text")
        assert str(dialog.btn_run.cget("state")) == "disabled"
        assert not (ws / "support.eval.yaml").exists()
