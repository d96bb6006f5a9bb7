"""kill -9 in the middle of a conversation, then the same command again: the run resumes the
conversation at its last journaled turn, and no journaled turn is requested again (the request
log of the scripted models proves it; the cache is off, so nothing else could hide a repeat)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from llmspace.cli import main
from llmspace.evals.journal import read_journal
from llmspace.evals.records import TurnRecord
from tests.evals.conversation.scripted import setup
from tests.evals.conversation.test_example import EXPECTED, only_folder, rows


def _turns(folder: Path) -> list[TurnRecord]:
    journal = folder / "journal.jsonl"
    if not journal.exists():
        return []
    return [r for r in read_journal(journal).records if isinstance(r, TurnRecord)]


def test_kill_9_mid_conversation_then_the_same_command_resumes_without_repeating_a_journaled_turn(home, srv, scripted):
    path = setup(home, srv, repeat=1, concurrency=1)
    gate = scripted.gate = __import__("threading").Event()
    command = [sys.executable, "-m", "llmspace", "eval", "run", str(path), "--no-cache"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ))
    try:
        assert scripted.reached.wait(120), "the agent was never asked its second reply"
        deadline = time.monotonic() + 120
        while len(_turns(only_folder(home))) < 5 and time.monotonic() < deadline:  # user, call, result, reply, user
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
        gate.set()
    folder = only_folder(home)
    journaled = _turns(folder)
    assert [t.entry["role"] for t in journaled] == ["user", "assistant", "tool", "assistant", "user"]
    first = [(m, json.dumps(b, sort_keys=True)) for m, b in scripted.requests]
    scripted.gate = None
    scripted.requests.clear()

    code = main(["eval", "run", str(path), "--no-cache"])

    assert code == 1
    assert only_folder(home) == folder  # resumed, not started over
    second = [(m, json.dumps(b, sort_keys=True)) for m, b in scripted.requests]
    repeated = [r for r in second if r in first]
    assert [m for m, _b in repeated] == ["agent"]  # only the reply in flight at the kill (never journaled)
    assert len(second) == len(set(second))
    assert {r["case"]: r["status"] for r in rows(folder)} == EXPECTED
    resumed = next(r for r in rows(folder) if r["case"] == "refund-broken")["conversation"]
    assert [e["text"] for e in resumed if e["role"] == "user"] == ["I want a refund for order A17.", "It arrived broken.", ""]
    assert [t.index for t in _turns(folder) if t.key == journaled[0].key][:5] == [0, 1, 2, 3, 4]
