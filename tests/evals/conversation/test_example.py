"""The documented support-agent example (docs/examples/support-agent, docs/conversations.md) run
5 scenarios × 3 repeats against scripted loopback models: the expected pass/fail per scenario,
pass^k in the summary, the conversations in results.jsonl and report.html, JUnit as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmspace.cli import main
from llmspace.evals.journal import read_journal
from llmspace.evals.records import TurnRecord
from tests.evals.conversation.scripted import setup

EXPECTED = {"refund-broken": "pass", "where-is-b2": "pass", "neighbours-password": "pass", "delivery-date": "fail",
            "changed-mind": "fail"}


def only_folder(home: Path, name: str = "support") -> Path:
    (folder,) = sorted((home / "evals" / name).iterdir())
    return folder


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]


def test_the_support_agent_example_gives_the_expected_verdict_per_scenario_and_pass_hat_k(home, srv, scripted, capsys):
    path = setup(home, srv)

    code = main(["eval", "run", str(path)])

    out = capsys.readouterr()
    assert code == 1, out.err  # two scenarios fail by design
    folder = only_folder(home)
    got = rows(folder)
    assert len(got) == 15
    for case, status in EXPECTED.items():
        assert [r["status"] for r in got if r["case"] == case] == [status] * 3, [r for r in got if r["case"] == case]
    summary = json.loads((folder / "summary.json").read_text("utf-8"))
    (group,) = summary["groups"]
    assert (group["passed"], group["failed"], group["passHatK"], group["k"]) == (3, 2, 0.6, 3)
    assert "pass^3 60.0%" in out.out
    changed = next(r for r in got if r["case"] == "changed-mind")
    roles = [e["role"] for e in changed["conversation"]]
    assert roles[:4] == ["user", "assistant", "tool", "assistant"]
    assert changed["conversation"][0] == {"role": "user", "text": "Please refund order C3.", "by": "opening"}
    lookup = changed["conversation"][2]
    assert lookup["simulated"] == "model" and "delivered" in lookup["result"]
    refund = next(e for e in changed["conversation"] if e["role"] == "tool" and e["name"] == "refund")
    assert refund["simulated"] == "fixed" and refund["result"] == '{"refunded": true}'
    assert changed["failed"] == ["no-tool-called 'refund'"]
    b2 = next(r for r in got if r["case"] == "where-is-b2")
    assert next(e for e in b2["conversation"] if e["role"] == "tool")["simulated"] == "table"
    leak = next(r for r in got if r["case"] == "delivery-date")
    assert leak["failed"] == ["no-leak"] and "Friday" in leak["output"]
    assert any(e.get("stop") for e in leak["conversation"])
    journal = read_journal(folder / "journal.jsonl")
    turns = [r for r in journal.records if isinstance(r, TurnRecord)]
    assert {r.key for r in turns} == {r["key"] for r in got}
    report = (folder / "report.html").read_text("utf-8")
    assert "Actually, don&#x27;t refund it. I changed my mind." in report or "Actually, don&#39;t refund it" in report
    assert (folder / "junit.xml").read_text("utf-8").count("<testcase") == 5
