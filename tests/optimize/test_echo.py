"""A reflector that hands the prompt back unchanged (as a small model often does): each echo is
rejected before it runs — it could only beat its parent by noise — so the search spends no cells
on it and ends after five in a row, with no candidate to promote."""

from __future__ import annotations

import json
from typing import Any

from llmspace.cli import main
from llmspace.evals.journal import read_optimize_journal
from llmspace.evals.records import Candidate
from tests.optimize.support import ORIGINAL, PromptTask, write_task
from tests.support.llm_server import LoopbackLLM, Turn


class Echo(PromptTask):
    def __call__(self, kind: str, body: Any) -> Any:
        if body.get("model") == "reflector":
            self.calls["reflector"] += 1
            return Turn(text=f"```\n{ORIGINAL}\n```", usage=(200, 30))
        return super().__call__(kind, body)


def test_a_rewrite_that_is_its_parent_unchanged_is_rejected_unrun_and_five_end_the_search(home):
    task = Echo()
    with LoopbackLLM() as srv:
        srv.responder = task
        path = write_task(home, srv)
        out = home / "opt"

        assert main(["optimize", str(path), "--reflector", "loop/reflector", "--out", str(out)]) == 1

        candidates = [r for r in read_optimize_journal(out / "journal.jsonl") if isinstance(r, Candidate)]
        assert [c.status for c in candidates] == ["rejected"] * 5
        assert all(c.reason == "it is its parent unchanged" for c in candidates)
        assert [p.name for p in (out / "runs").iterdir()] == ["c0"]  # no echo ran a cell
        summary = json.loads((out / "summary.json").read_text("utf-8"))
        assert summary["stoppedBecause"] == "the reflector's last 5 rewrites were all rejected"
        assert task.calls["target"] == 72 and task.calls["reflector"] == 5
