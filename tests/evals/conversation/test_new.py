"""`llmspace eval new --conversation`: a scenarios file of the support-agent example becomes an
evaluation file (`mode: conversation`, the user model, default assertions) that `eval run` runs
to the end against the scripted loopback models; a row that is not a scenario is refused naming
its line; a scenarios file given without --conversation says to add it."""

from __future__ import annotations

from pathlib import Path

import yaml

from llmspace.cli import main
from tests.evals.conversation.scripted import setup
from tests.evals.conversation.test_example import only_folder, rows


def _workspace(home: Path, srv) -> Path:
    """The example's thread and scenarios in the workspace, without its evaluation file."""
    setup(home, srv).unlink()
    return home / "workspace"


def test_eval_new_conversation_writes_a_file_that_eval_run_runs_to_the_end(home, srv, scripted, capsys):
    ws = _workspace(home, srv)

    code = main(["eval", "new", "support.json", "--dataset", str(ws / "scenarios.yaml"), "--conversation",
                 "--models", "loop/agent", "--user-model", "loop/user", "--tool-simulator", "loop/tools", "--judge", "loop/judge",
                 "--max-user-turns", "4"])

    out = capsys.readouterr()
    assert code == 0, out.err
    assert "5 scenarios" in out.out
    data = yaml.safe_load((ws / "support.eval.yaml").read_text("utf-8"))
    assert data["mode"] == "conversation" and data["userModel"] == "loop/user" and data["toolSimulator"] == "loop/tools"
    assert data["assert"] == [{"type": "goal-met"}] and data["judge"] == "loop/judge" and data["maxUserTurns"] == 4
    assert sum(scripted.calls.values()) == 0  # writing the file calls nothing

    code = main(["eval", "run", str(ws / "support.eval.yaml")])

    err = capsys.readouterr().err
    assert code in (0, 1), err  # ran to the end: every threshold met or not, no error
    got = rows(only_folder(home))
    assert len(got) == 5 and all(r["status"] in ("pass", "fail") for r in got), got
    assert all(r["conversation"] and r["conversation"][0]["role"] == "user" for r in got)
    assert scripted.calls["user"] > 0 and scripted.calls["judge"] > 0


def test_eval_new_conversation_defaults_the_user_model_to_the_first_model_and_notes_it_and_the_missing_judge(home, srv, capsys):
    ws = _workspace(home, srv)

    code = main(["eval", "new", "support.json", "--dataset", str(ws / "scenarios.yaml"), "--conversation",
                 "--models", "loop/agent,loop/judge"])

    err = capsys.readouterr().err
    assert code == 0, err
    data = yaml.safe_load((ws / "support.eval.yaml").read_text("utf-8"))
    assert data["userModel"] == "loop/agent" and data["assert"] == [] and "judge" not in data
    assert data["toolSimulator"] == "loop/agent"  # the thread's function tools need an answer
    assert "the simulated user is loop/agent (the first model)" in err
    assert "no default assertion" in err and "--judge" in err


def test_a_row_that_is_not_a_scenario_is_refused_naming_its_line_and_nothing_is_written(home, srv, capsys):
    ws = _workspace(home, srv)
    (ws / "scenarios.yaml").write_text(
        "# two scenarios\n"
        "- id: fine\n"
        "  user: {goal: Get order A17 refunded.}\n"
        "- id: stray\n"
        "  question: What is 2 + 2?\n", encoding="utf-8")

    code = main(["eval", "new", "support.json", "--dataset", str(ws / "scenarios.yaml"), "--conversation", "--models", "loop/agent"])

    err = capsys.readouterr().err
    assert code == 2
    assert "scenarios.yaml line 4 is not a scenario: it has neither `user` nor `opening`" in err
    assert not (ws / "support.eval.yaml").exists()
    (ws / "scenarios.jsonl").write_text('{"id": "a", "user": {"goal": "x"}}\n\n{"id": "b", "user": {"goal": "y", "mood": "grumpy"}}\n',
                                        encoding="utf-8")

    code = main(["eval", "new", "support.json", "--dataset", str(ws / "scenarios.jsonl"), "--conversation", "--models", "loop/agent"])

    err = capsys.readouterr().err
    assert code == 2 and "scenarios.jsonl line 3: unknown key 'mood' in `user`" in err
    assert not (ws / "support.eval.yaml").exists()


def test_eval_new_without_conversation_on_a_scenarios_file_says_to_add_it(home, srv, capsys):
    ws = _workspace(home, srv)

    code = main(["eval", "new", "support.json", "--dataset", str(ws / "scenarios.yaml"), "--models", "loop/agent"])

    err = capsys.readouterr().err
    assert code == 2 and "holds conversation scenarios" in err and "--conversation" in err
    assert not (ws / "support.eval.yaml").exists()
