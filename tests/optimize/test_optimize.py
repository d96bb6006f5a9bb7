"""`llmspace optimize` in process against loopback models: the deterministic task promotes the
helpful rewrite with the held-out cells to prove it, a rewrite that drops a variable never runs,
nothing is overwritten, and the budget and the time limit stop the search but not the verdict."""

from __future__ import annotations

import json
import threading
import time
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


def test_the_budget_stops_the_search_and_the_gate_still_runs_on_the_best_so_far(home, srv, task: PromptTask):
    path = write_task(home, srv)
    # the baseline and the first four steps (the helpful rewrite validated) cost $0.0039 at the loopback prices
    assert _optimize(path, "--budget", "0.00395") == 0

    summary = _summary(_only_folder(home))
    assert summary["stoppedBecause"] == "the budget was spent"
    assert summary["spent"] <= 0.00395
    assert summary["verdict"]["promoted"] and summary["best"]["id"] == "c4"
    assert len(summary["split"]["holdout"]) == summary["verdict"]["pairs"]  # the gate ran every held-out case


def test_max_minutes_stops_the_search_and_the_gate_still_runs_on_the_best_so_far(home, srv, task: PromptTask):
    path = write_task(home, srv)
    minutes = 0.5
    deadline = time.monotonic() + minutes * 60
    # the helpful rewrite's first call after its 26 minibatch and validation cells waits until the time is up
    task.hold_instructed_call = 27

    def release_after_the_deadline() -> None:
        if task.held.wait(120):
            while time.monotonic() < deadline + 1:
                time.sleep(0.2)
        task.release.set()

    threading.Thread(target=release_after_the_deadline, daemon=True).start()
    assert _optimize(path, "--max-minutes", str(minutes)) == 0

    summary = _summary(_only_folder(home))
    assert summary["stoppedBecause"] == "the time limit (--max-minutes) was reached"
    assert summary["verdict"]["promoted"] and summary["best"]["id"] == "c4"
    assert task.calls["reflector"] == 4


def test_a_rerun_never_overwrites_an_optimized_thread(home, srv, task: PromptTask):
    path = write_task(home, srv)
    mine = home / "workspace" / "quiz.optimized.json"
    mine.write_text("{}", encoding="utf-8")

    assert _optimize(path, "--rollouts", "140") == 0

    assert mine.read_text("utf-8") == "{}"
    assert (home / "workspace" / "quiz.optimized-2.json").is_file()


def test_a_target_that_is_not_in_the_file_is_an_error_before_any_request(home, srv, task: PromptTask, capsys):
    path = write_task(home, srv)
    assert main(["optimize", str(path), "--target", "loop/reflector"]) == 2
    assert "not one of the models" in capsys.readouterr().err
    assert sum(task.calls.values()) == 0


def test_from_takes_the_baseline_from_an_eval_run_folder_without_requesting_it_again(home, srv, task: PromptTask):
    path = write_task(home, srv)
    assert main(["eval", "run", str(path)]) == 1  # the vague prompt fails most cases
    result = next((home / "evals" / "quiz").iterdir())
    calls_of_the_run = task.calls["target"]
    assert calls_of_the_run == 72

    assert _optimize(path, "--from", f"quiz/{result.name}", "--no-cache", "--rollouts", "100") == 0

    summary = _summary(_only_folder(home))
    # the search's rollouts are its own cells: the baseline came from the results folder
    assert summary["rollouts"] == task.calls["target"] - calls_of_the_run - len(summary["split"]["holdout"])
    assert summary["verdict"]["promoted"]


def test_a_significant_drop_of_the_judge_scores_keeps_the_rewrite_from_being_promoted(home, srv, task: PromptTask):
    # the judge prefers full sentences: the helpful rewrite passes the regex but loses the judge's favour
    path = write_task(home, srv, judge="loop/judge",
                      **{"assert": [{"type": "regex", "value": "^\\d+$"}, {"type": "llm-rubric", "value": "friendly", "threshold": 1}]})

    assert _optimize(path, "--rollouts", "140") == 1

    folder = _only_folder(home)
    verdict = _summary(folder)["verdict"]
    assert verdict["passedCandidate"] > verdict["passedOriginal"] and verdict["mcnemarP"] < 0.05
    assert verdict["judgeBootstrap"]["mean"] < 0 and verdict["judgeBootstrap"]["p"] < 0.05
    assert not verdict["promoted"] and "judge scores dropped" in verdict["reason"]
    assert not (home / "workspace" / "quiz.optimized.json").exists()
    assert (folder / "comparison.md").is_file()


def test_a_held_out_part_under_20_cases_is_decided_by_the_same_test_with_a_warning(home, srv, task: PromptTask, capsys):
    path = write_task(home, srv, n=40)

    code = _optimize(path, "--rollouts", "100")

    verdict = _summary(_only_folder(home))["verdict"]
    assert verdict["pairs"] == 12
    assert code == (0 if verdict["promoted"] else 1)
    assert any("rarely show a significant gain" in w for w in verdict["warnings"])
    assert "rarely show a significant gain" in capsys.readouterr().err


def test_field_message_rewrites_that_messages_template_and_its_variables_are_the_ones_checked(home, srv, task: PromptTask):
    path = write_task(home, srv)
    out = home / "opt-out"

    # every scripted rewrite is a system prompt: for the message `{{question}}` each drops it and adds {{topic}}
    assert _optimize(path, "--field", "message:u1", "--rollouts", "80", "--out", str(out)) == 1

    records = read_optimize_journal(out / "journal.jsonl")
    statuses = [c for c in records if isinstance(c, Candidate)]
    assert statuses and all(c.status == "rejected" and "drops {{question}}" in (c.reason or "") for c in statuses)
    assert "{{question}}" in task.reflector_prompts[0]  # the reflector was shown the message's template
    summary = _summary(out)
    assert summary["field"] == "message:u1" and summary["verdict"]["promoted"] is False
    assert summary["stoppedBecause"] == "the reflector's last 5 rewrites were all rejected" and len(statuses) == 5
