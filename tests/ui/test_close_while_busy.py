"""Closing the window while an evaluation runs, in a real window against the loopback model
server: it asks first (No keeps the window and the evaluation going); Stop and close stops
the evaluation within seconds, before the window goes, and its results say it was
interrupted, so `eval run` resumes it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from llmspace.presenters.eval_form import NewEvalForm
from tests.evals.support import Oracle, write_thread
from tests.support.llm_server import LoopbackLLM, configure_provider

from .conftest import pump_until


def _dataset(home: Path, n: int) -> Path:
    path = home / "workspace" / "sums.jsonl"
    rows = [{"id": f"add-{i}", "question": f"What is {i} + {i + 1}?", "expected": str(2 * i + 1)} for i in range(1, n + 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_closing_during_an_evaluation_asks_and_stop_and_close_stops_it_before_the_window_goes(home, make_window):
    with LoopbackLLM() as srv:
        oracle = Oracle()
        oracle.delay_per_chunk = 0.05  # slow cells: the run is still going when the window closes
        srv.responder = oracle
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
        write_thread(home)
        win = make_window()
        win.evals.start(NewEvalForm("quiz.json", str(_dataset(home, n=40)), "loop/good"))
        pump_until(win.root, lambda: win.evals.runs and win.evals.windows[-1].grid_model.counts()["pending"] < 40,
                   timeout=60)
        run = win.evals.runs[-1]
        win.dialogs.answer = False  # Cancel (or Escape): nothing stops
        win.quit(destroy_root=False)
        assert win.dialogs.confirms and "running evaluation" in win.dialogs.confirms[-1]
        assert win.dialogs.actions[-1] == "Stop and close"
        assert win.root.winfo_children() and not run.done()
        win.dialogs.answer = True  # Stop and close
        started = time.monotonic()
        win.quit(destroy_root=False)
        assert run.done(), "the window closed while the evaluation still ran"
        assert time.monotonic() - started < 15
        outcome = run.result()
        assert outcome.interrupted
        summary = json.loads((outcome.folder / "summary.json").read_text("utf-8"))
        assert summary["interrupted"] is True


def test_closing_with_nothing_running_asks_nothing(home, make_window):
    win = make_window()
    win.quit(destroy_root=False)
    assert win.dialogs.confirms == []
