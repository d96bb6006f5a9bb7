"""`llmspace optimize` in process against loopback models: the deterministic task promotes the
helpful rewrite with the held-out cells to prove it, a rewrite that drops a variable never runs,
nothing is overwritten, and the budget and the time limit stop the search but not the verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmspace.cli import main
from llmspace.core.threadio import thread_from_data
from llmspace.evals.compare import read_results
from llmspace.evals.journal import read_optimize_journal
from llmspace.evals.records import Candidate, Reflection
from tests.optimize.support import INSTRUCTION, ORIGINAL, PromptTask, write_task


def _optimize(path: Path, *args: str) -> int:
    return main(["optimize", str(path), "--reflector", "loop/reflector", *args])


def _only_folder(home: Path) -> Path:
    folders = sorted((home / "optimize" / "quiz").iterdir())
    assert len(folders) == 1, folders
    return folders[0]


def _summary(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "summary.json").read_text("utf-8"))


def test_the_helpful_rewrite_is_promoted_on_held_out_cases_and_written_beside_the_thread(home, srv, task: PromptTask, capsys):
    path = write_task(home, srv)
    thread_before = (home / "workspace" / "quiz.json").read_bytes()

    assert _optimize(path, "--rollouts", "140") == 0

    folder = _only_folder(home)
    summary = _summary(folder)
    verdict = summary["verdict"]
    assert verdict["promoted"] and verdict["mcnemarP"] < 0.05 and verdict["passedCandidate"] > verdict["passedOriginal"]
    assert INSTRUCTION in summary["best"]["text"] and "{{topic}}" in summary["best"]["text"]
    records = read_optimize_journal(folder / "journal.jsonl")
    candidates = {c.step: c for c in records if isinstance(c, Candidate)}
    assert candidates[1].status == "rejected" and "drops {{topic}}" in (candidates[1].reason or "")
    assert candidates[2].status == "lost"  # the harmful one never reaches validation
    assert not (folder / "runs" / "c1").exists()  # the rejected one never ran
    assert sum(isinstance(r, Reflection) for r in records) >= 4
    # the held-out cells prove it: the best candidate's folder holds every held-out case, passing
    holdout = set(summary["split"]["holdout"])
    assert len(holdout) >= 20
    best = read_results(folder / "runs" / summary["best"]["id"])
    passed = {k[0] for k, r in best.cases.items() if k[0] in holdout and r.status == "pass"}
    assert len(passed) == verdict["passedCandidate"]
    # the optimized thread, its diff and the comparison; the thread itself unchanged
    assert (home / "workspace" / "quiz.json").read_bytes() == thread_before
    optimized = thread_from_data(json.loads((home / "workspace" / "quiz.optimized.json").read_text("utf-8")))
    assert optimized.context is not None and INSTRUCTION in (optimized.context.systemPrompt or "")
    assert "optimized" in (optimized.title or "")
    diff = (folder / "prompt.diff").read_text("utf-8")
    assert f"-{ORIGINAL}" in diff and INSTRUCTION in diff
    assert "McNemar" in (folder / "comparison.md").read_text("utf-8")
    assert (folder / "comparison.html").read_text("utf-8").lstrip().lower().startswith("<!doctype html")
    out = capsys.readouterr()
    assert "Promoted." in out.out and "step" in out.err and "rollouts" in out.err
    # the reflector never saw a key, a header or a path
    assert not any("sk-loopback" in p or str(home) in p for p in task.reflector_prompts)
