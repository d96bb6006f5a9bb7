"""Replaying a recorded conversation run: `--replay RESULT --agent-too` reproduces every
transcript byte for byte with no agent, user or tool request; plain `--replay` calls only the
agent, and ends a conversation whose agent left the recorded path, saying where."""

from __future__ import annotations

import json
from pathlib import Path

from llmspace.cli import main
from tests.evals.conversation.scripted import setup
from tests.evals.conversation.test_example import EXPECTED, only_folder, rows


def conversations(folder: Path) -> dict[str, str]:
    return {r["key"]: json.dumps(r["conversation"], ensure_ascii=False) for r in rows(folder)}


def test_replaying_both_sides_reproduces_the_transcripts_byte_for_byte_without_a_model_request(home, srv, scripted, tmp_path):
    path = setup(home, srv, repeat=1)
    assert main(["eval", "run", str(path)]) == 1
    recorded = only_folder(home)
    before = dict(scripted.calls)
    scripted.leak = False  # a changed agent is not asked: both sides are replayed

    code = main(["eval", "run", str(path), "--replay", str(recorded), "--agent-too", "--no-cache", "--out", str(tmp_path / "re")])

    assert code == 1
    assert conversations(tmp_path / "re") == conversations(recorded)
    assert [r["status"] for r in rows(tmp_path / "re")] == [r["status"] for r in rows(recorded)]
    calls = {m: n - before.get(m, 0) for m, n in scripted.calls.items()}
    assert calls.get("agent", 0) == calls.get("user", 0) == calls.get("tools", 0) == 0
    assert calls["judge"] == 2  # the judges run again (goal-met and no-leak): a changed assertion is re-scored


def test_replaying_the_user_reruns_only_the_agent_and_scores_the_changed_agent(home, srv, scripted, tmp_path):
    path = setup(home, srv, repeat=1)
    assert main(["eval", "run", str(path)]) == 1
    recorded = only_folder(home)
    before = dict(scripted.calls)
    scripted.leak = False  # the fixed agent no longer invents a delivery date (same request: --no-cache asks it)

    code = main(["eval", "run", str(path), "--replay", str(recorded), "--no-cache", "--out", str(tmp_path / "re")])

    assert code == 1  # changed-mind still fails
    got = {r["case"]: r for r in rows(tmp_path / "re")}
    assert got["delivery-date"]["status"] == "pass" and "Friday" not in got["delivery-date"]["output"]
    assert {c: r["status"] for c, r in got.items() if c != "delivery-date"} == {c: s for c, s in EXPECTED.items() if c != "delivery-date"}
    calls = {m: n - before.get(m, 0) for m, n in scripted.calls.items()}
    assert calls.get("user", 0) == calls.get("tools", 0) == 0 and calls["agent"] > 0
    users = {k: [e for e in json.loads(v) if e["role"] == "user"] for k, v in conversations(recorded).items()}
    assert {r["key"]: [e for e in r["conversation"] if e["role"] == "user"] for r in got.values()} == users


def test_an_agent_that_leaves_the_recorded_path_ends_its_conversation_with_an_error_saying_where(home, srv, scripted, tmp_path, capsys):
    path = setup(home, srv, repeat=1)
    assert main(["eval", "run", str(path)]) == 1
    recorded = only_folder(home)
    scripted.lookup = False  # the changed agent refunds without looking the order up

    code = main(["eval", "run", str(path), "--replay", str(recorded), "--no-cache", "--out", str(tmp_path / "re")])

    assert code == 2, capsys.readouterr().err  # an error cell
    got = {r["case"]: r for r in rows(tmp_path / "re")}
    error = got["refund-broken"]["error"]
    assert got["refund-broken"]["status"] == "error"
    assert "left the recorded path at its reply 1" in error and "refund" in error and "lookup_order" in error


def test_replay_flags_without_a_conversation_or_a_recording_are_refused(home, srv, capsys, tmp_path):
    path = setup(home, srv, repeat=1)
    assert main(["eval", "run", str(path), "--agent-too"]) == 2
    assert "--agent-too replays a recorded run" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.jsonl").write_text("", encoding="utf-8")
    assert main(["eval", "run", str(path), "--replay", str(tmp_path / "empty")]) == 2
    assert "holds no recorded conversations" in capsys.readouterr().err
