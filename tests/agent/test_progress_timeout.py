"""The progress deadline (`progressTimeout` in models.json): a server that keeps the
connection busy without model output ends the call, retried before the first token within
`retryDeadline`, and the run ends with the partial reply kept after it. Servers trickle a
piece every 0.25 s (`tests/support/trickle.py`); readTimeout 1.5, progressTimeout 2,
retryDeadline 6, so each case must end within 11 s (the deadline and 5 s for a loaded machine).
The cases run at once, each on its own thread."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

from llmspace.agent.run_types import RunOptions, RunResult
from llmspace.core.history import run_status
from llmspace.core.model import AssistantMessage
from tests.agent.conftest import make_thread, user
from tests.support.llm_server import configure_provider
from tests.support.trickle import Trickle

STALLS = ["keepalive", "newlines", "growing", "empty-deltas", "slow-headers"]
EVERY = 0.25  # seconds between the trickle's pieces: well inside readTimeout
BOUND = 11.0


class _At:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url


def _configure(home: Path, trickle: Trickle, modes: list[str]) -> None:
    for mode in modes:
        configure_provider(home, _At(trickle.base_url(mode)), provider_id=mode, make_default=False)  # type: ignore[arg-type]
    path = home / "settings" / "models.json"
    data = json.loads(path.read_text("utf-8"))
    for entry in data["providers"]:
        entry.update({"readTimeout": 1.5, "progressTimeout": 2, "retryDeadline": 6})
    path.write_text(json.dumps(data), "utf-8")


def _run_all(app: Any, modes: list[str]) -> dict[str, tuple[RunResult, float]]:
    out: dict[str, tuple[RunResult, float]] = {}

    def one(mode: str) -> None:
        started = time.monotonic()
        result = app.runner.run(make_thread([user("hi")]), RunOptions(provider=mode, model="loopback-model"))
        out[mode] = (result, time.monotonic() - started)

    threads = [threading.Thread(target=one, args=(m,), daemon=True) for m in modes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND + 40)  # generous on a loaded machine; the elapsed time is asserted below
    return out


def test_a_server_that_sends_anything_but_output_is_retried_and_gives_up_within_the_retry_deadline(app, home):
    with Trickle(every=EVERY) as trickle:
        _configure(home, trickle, STALLS)
        results = _run_all(app, STALLS)
        assert set(results) == set(STALLS), f"still running: {set(STALLS) - set(results)}"
        print({mode: round(elapsed, 1) for mode, (_r, elapsed) in results.items()})
        for mode, (result, elapsed) in results.items():
            assert elapsed < BOUND, (mode, elapsed)
            assert result.status == "failed", (mode, result.status)
            # the last attempt's limit is cut to what is left of the retry deadline
            assert re.match(rf"{mode}: no output for [0-9.]+ s \(progressTimeout\)\.", result.error or ""), (mode, result.error)
            assert trickle.requests[mode] >= 2, (mode, trickle.requests)  # a stall before the first token is retried
            assert not result.new_message_ids and result.run_id is None, mode  # nothing came: nothing kept or recorded


def test_a_stall_after_the_first_token_ends_the_run_with_the_partial_reply_kept_and_recorded(app, home):
    with Trickle(every=EVERY) as trickle:
        _configure(home, trickle, ["text-then-keepalive"])
        [(result, elapsed)] = _run_all(app, ["text-then-keepalive"]).values()
        assert elapsed < BOUND
        assert trickle.requests["text-then-keepalive"] == 1  # output had begun: not retried
    assert result.status == "failed"
    assert result.error == "text-then-keepalive: no output for 2 s (progressTimeout)."
    reply = result.thread.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.text() == "Partial"
    assert result.run_id is not None
    [run] = result.thread.runHistory or []
    assert run.id == result.run_id and run_status(run) == "error"
