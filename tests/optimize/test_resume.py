"""`llmspace optimize` as a real subprocess, killed with kill -9 in the middle of its search and
run again: it finishes in the same results folder, and the server's request counts show that no
journaled cell and no journaled reflector call was requested again (no cache, so a repeated
request would reach the server)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmspace.evals.journal import read_journal, read_optimize_journal
from llmspace.evals.records import CellRecord, Reflection
from tests.optimize.support import PromptTask, write_task
from tests.support.llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parents[2]


def _command(home: Path, path: Path) -> tuple[list[str], dict[str, str]]:
    args = [sys.executable, "-m", "llmspace", "optimize", str(path), "--reflector", "loop/reflector", "--rollouts", "140",
            "--no-cache"]
    return args, {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}


def test_kill_9_during_the_search_then_the_same_command_finishes_without_repeating_a_journaled_request(
        home: Path, srv: LoopbackLLM, task: PromptTask) -> None:
    path = write_task(home, srv)
    task.hold_reflector_call = 2  # the second reflector call waits unanswered: the search is mid-way
    args, env = _command(home, path)
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not task.held.wait(0.2):
            if proc.poll() is not None:
                pytest.fail(f"the run ended with {proc.returncode} before its second reflector call: {proc.communicate()[1][-2000:]}")
            assert time.monotonic() < deadline, "the search never reached its second reflector call"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
        task.release.set()
    folders = list((home / "optimize" / "quiz").iterdir())
    assert len(folders) == 1
    folder = folders[0]
    assert not (folder / "summary.json").exists()
    first_reflections = sum(isinstance(r, Reflection) for r in read_optimize_journal(folder / "journal.jsonl"))
    assert first_reflections == 1

    task.hold_reflector_call = None
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Resuming" in done.stderr
    assert list((home / "optimize" / "quiz").iterdir()) == [folder]
    summary = json.loads((folder / "summary.json").read_text("utf-8"))
    assert summary["verdict"]["promoted"]

    reflections = [r for r in read_optimize_journal(folder / "journal.jsonl") if isinstance(r, Reflection)]
    assert sorted(r.step for r in reflections) == sorted({r.step for r in reflections})  # one answer per step
    # every reflector request was journaled once, but the one the kill left unanswered
    assert task.calls["reflector"] == len(reflections) + 1
    # every cell request of the target was journaled once: none was requested again
    cells = [r for d in (folder / "runs").iterdir() for r in read_journal(d / "journal.jsonl").records if isinstance(r, CellRecord)]
    assert task.calls["target"] == len(cells)


def test_ctrl_c_during_the_search_exits_130_and_keeps_what_finished_for_the_next_run(
        home: Path, srv: LoopbackLLM, task: PromptTask) -> None:
    path = write_task(home, srv)
    task.hold_reflector_call = 2
    args, env = _command(home, path)
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not task.held.wait(0.2):
            if proc.poll() is not None:
                pytest.fail(f"the run ended with {proc.returncode}: {proc.communicate()[1][-2000:]}")
            assert time.monotonic() < deadline, "the search never reached its second reflector call"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        task.release.set()
    assert proc.returncode == 130, err[-2000:]
    assert "run the same command again to resume" in err
    folder = next((home / "optimize" / "quiz").iterdir())
    assert sum(isinstance(r, Reflection) for r in read_optimize_journal(folder / "journal.jsonl")) == 1
