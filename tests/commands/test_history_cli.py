"""CLI acceptance for history, compare, evaluate, rubric and fork."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cli import main
from llmspace.paths import DataRoot


def _usage(i: int, o: int, cost: float) -> dict:
    return {"input": i, "output": o, "cacheRead": 0, "cacheWrite": 0, "totalTokens": i + o,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def _snap(answer: str, city: str, aid: str) -> dict:
    return {"title": "demo", "model": {"provider": "openai", "id": "gpt-4.1"},
            "context": {"systemPrompt": "Be brief.", "messages": [
                {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                {"id": aid, "role": "assistant", "content": [{"type": "text", "text": answer}],
                 "toolCalls": [{"id": "c1", "input": {"name": "weather", "arguments": {"city": city}},
                                "output": {"content": [{"type": "text", "text": f"sunny in {city}"}]}}],
                 "timing": {"firstTokenMs": 400, "durationMs": 900}}]}}


@pytest.fixture
def thread_rel(home: Path) -> str:
    app = App(DataRoot(home))
    from llmspace.core.threadio import thread_from_data

    data = _snap("Checking.", "Paris", "a1")
    data["runHistory"] = [
        {"id": "run-one", "timestamp": 1_700_000_000_000, "thread": _snap("Checking.", "Paris", "a1"), "usage": _usage(100, 10, 0.001)},
        {"id": "run-two", "timestamp": 1_700_000_100_000, "thread": _snap("Let me check.", "Lyon", "a2"), "usage": _usage(120, 30, 0.002)},
    ]
    rel = app.workspace.create_thread("", "demo", thread_from_data(data))
    app.close()
    return rel


def _open(home: Path, rel: str):
    app = App(DataRoot(home))
    try:
        return app.workspace.open(rel)
    finally:
        app.close()


def test_history_lists_runs_newest_first(thread_rel, capsys):
    assert main(["history", thread_rel]) == 0
    out = capsys.readouterr().out
    assert out.index("run-two") < out.index("run-one")
    assert "openai/gpt-4.1" in out and "2 messages" in out and "120 in / 30 out / $0.002000" in out


def test_compare_prints_the_structural_diff(thread_rel, capsys):
    assert main(["compare", thread_rel, "run-one", "run-two"]) == 0
    out = capsys.readouterr().out
    assert "-Checking." in out and "+Let me check." in out
    assert 'argument city: "Paris" → "Lyon"' in out
    assert "+sunny in Lyon" in out
    assert "tokens  A 110 | B 150 (+40)" in out


def test_evaluate_with_a_rubric_stores_everything_that_survives_a_reload(home, thread_rel, capsys):
    assert main(["rubric", "add", thread_rel, "Quality", "-c", "Accuracy: facts right", "-c", "Clarity"]) == 0
    assert main(["evaluate", thread_rel, "run-one", "run-two", "--verdict", "rightBetter", "--note", " B is clearer ",
                 "--rubric", "quality", "--scores", "A:accuracy=4,clarity=2", "B:1=5,2=5"]) == 0
    out = capsys.readouterr().out
    assert "average A 3.00, B 5.00, B − A +2.00" in out
    thread = _open(home, thread_rel)
    ev = thread.evaluations[0]
    assert (ev.leftRunId, ev.rightRunId, ev.verdict, ev.note) == ("run-one", "run-two", "rightBetter", "B is clearer")
    assert ev.rubric.name == "Quality" and [c.name for c in ev.rubric.criteria] == ["Accuracy", "Clarity"]
    assert [[s.score for s in rs.scores] for rs in ev.runScores] == [[4, 2], [5, 5]]
    from llmspace.core.run_verdicts import averages

    avg = averages(ev)
    assert (avg.left, avg.right, avg.delta) == (3, 5, 2)
    assert main(["compare", thread_rel, "run-two", "run-one"]) == 0
    assert "Evaluation " in (out := capsys.readouterr().out) and "leftBetter; Quality: A 5.00, B 3.00, B − A -2.00" in out
    # a reversed pair updates the same record
    assert main(["evaluate", thread_rel, "run-two", "run-one", "--verdict", "tie"]) == 0
    again = _open(home, thread_rel)
    assert len(again.evaluations) == 1 and again.evaluations[0].id == ev.id
    assert again.evaluations[0].rubric is None


def test_evaluate_refuses_unknown_runs_and_incomplete_grids(thread_rel, capsys):
    assert main(["evaluate", thread_rel, "run-one", "nope", "--verdict", "tie"]) == 1
    assert "No run 'nope'" in capsys.readouterr().err
    assert main(["rubric", "add", thread_rel, "Q", "-c", "a", "-c", "b"]) == 0
    assert main(["evaluate", thread_rel, "run-one", "run-two", "--verdict", "tie", "--rubric", "Q", "--scores", "A:a=1,b=2", "B:a=3"]) == 1
    assert "incomplete" in capsys.readouterr().err


def test_rubric_edit_bumps_revision_and_list_shows_it(thread_rel, capsys):
    main(["rubric", "add", thread_rel, "Q", "-c", "a", "-c", "b"])
    assert main(["rubric", "edit", thread_rel, "Q", "-c", "a", "-c", "b"]) == 0
    assert "unchanged (revision 1)" in capsys.readouterr().out
    assert main(["rubric", "edit", thread_rel, "Q", "--name", "Quality"]) == 0
    assert main(["rubric", "list", thread_rel]) == 0
    out = capsys.readouterr().out
    assert "Updated rubric 'Quality' to revision 2" in out and "Quality  (id" in out and "revision 2)" in out
    assert main(["rubric", "delete", thread_rel, "Quality"]) == 0


def test_restore_remove_and_fork(home, thread_rel, capsys):
    assert main(["history", thread_rel, "--restore", "#1"]) == 0
    assert _open(home, thread_rel).messages[1].id == "a2"
    assert main(["fork", thread_rel, "run-o", "u1"]) == 0
    assert "demo-fork.json" in capsys.readouterr().out
    assert [m.id for m in _open(home, "demo-fork.json").messages] == ["u1"]
    assert main(["history", thread_rel, "--remove", "run-one"]) == 0
    assert [r.id for r in _open(home, thread_rel).runHistory] == ["run-two"]
    assert main(["history", thread_rel, "--inspect", "run-two"]) == 0
    assert "weather({\"city\": \"Lyon\"})" in capsys.readouterr().out


def test_a_thread_with_a_malformed_evaluation_still_opens_with_a_warning(home, thread_rel, capsys):
    import json

    path = home / "workspace" / thread_rel
    data = json.loads(path.read_text("utf-8"))
    data["evaluations"] = [{"id": "e", "leftRunId": "run-one", "rightRunId": "run-two", "verdict": "tie",
                            "createdAt": 1, "updatedAt": 1,
                            "rubric": {"id": "r", "name": "Q", "criteria": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]}}]
    path.write_text(json.dumps(data), "utf-8")
    assert main(["history", thread_rel]) == 0
    captured = capsys.readouterr()
    assert "warning:" in captured.err and "e  A=run-one  B=run-two  tie" in captured.out
