"""Closing the app during an evaluation that runs on the REAL built-in engine (llama-server
with a small GGUF): Stop and close stops the evaluation, and the app's close path stops the
engine of that data root — no supervisor or llama-server of it is left, and the supervisor's
log says it was asked to stop. Skips (fails on CI) without llama-server or the test model."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from llmspace.local import engine
from llmspace.presenters.eval_form import NewEvalForm
from llmspace.processes import pid_alive
from tests.evals.support import write_thread
from tests.local.engine_support import GEMMA, setup_root

from .conftest import pump_until


def _dataset(home: Path, n: int) -> Path:
    path = home / "workspace" / "stories.jsonl"
    rows = [{"id": f"story-{i}", "question": f"Tell a long story about the number {i}.", "expected": str(i)}
            for i in range(1, n + 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def running(pid: int) -> bool:
    """`pid` runs: it exists and is not a zombie (the supervisor is this process's child, and a
    child that ended stays a zombie until its parent waits for it — as the app exits)."""
    if not pid_alive(pid):
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def processes_naming(text: str) -> list[tuple[int, str]]:
    """Every process whose command line contains `text` (this test process aside)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmd:
            found.append((int(entry.name), cmd.strip()))
    return found


def test_closing_the_app_during_an_evaluation_on_the_built_in_engine_leaves_no_engine_of_its_data_root(
        home, app, make_window):
    root, _model = setup_root(home, GEMMA, idle_minutes=30.0)  # idle time far off: only the close can stop it
    thread = write_thread(home)
    data = json.loads(thread.read_text("utf-8"))  # each cell bounded: the first answers in seconds, 40 take minutes
    data["model"] = {"provider": "local", "id": "m", "params": {"maxTokens": 48, "temperature": 0}}
    thread.write_text(json.dumps(data), "utf-8")
    win = make_window()
    win.evals.start(NewEvalForm("quiz.json", str(_dataset(home, n=40)), "local/m"))
    pump_until(win.root, lambda: win.evals.runs and win.evals.windows[-1].grid_model.counts()["pending"] < 40,
               timeout=240)  # the engine started, loaded the model and answered a first cell
    status = engine.engine_status(root)
    assert status is not None, "no engine of this data root runs"
    pids = [status.supervisor_pid, status.pid]
    assert all(running(p) for p in pids)
    run = win.evals.runs[-1]
    assert not run.done(), "the evaluation ended before the window closed"

    win.dialogs.answer = True  # the close question: Stop and close
    started = time.monotonic()
    win.quit(destroy_root=False)
    assert win.dialogs.actions[-1] == "Stop and close"
    assert run.done() and run.result().interrupted
    app.close()  # what `llmspace` does once the window's main loop has ended (ui/main.py)

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (any(running(p) for p in pids) or processes_naming(str(home))):
        time.sleep(0.2)
    assert not [p for p in pids if running(p)], f"engine processes left: {pids}"
    assert processes_naming(str(home)) == []
    assert engine.engine_status(root) is None
    assert time.monotonic() - started < 60
    log = (engine.log_dir(root) / "supervisor.log").read_text("utf-8")
    assert "asked to stop" in log, log[-2000:]
